#pragma once
// Test fixtures for the binary reader: CUDA objects compiled at test time by
// the real nvcc, cached per build tree (keyed by sources and flags), and
// per-test temp dirs kept on failure.

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "binary/reader.hpp"
#include "core/base/error.hpp"

namespace torchfix::test {

/// Returns the nvcc to compile fixtures with: $TORCHFIX_NVCC, else
/// /usr/local/cuda/bin/nvcc, else nvcc on PATH; nullopt when none exists.
std::optional<std::filesystem::path> find_nvcc();

/// Holds the kernel source every fixture is compiled from (one __global__).
std::string kernel_source(std::string_view kernel_name);

/// Compiles `source` with nvcc and `flags` into a file named `output` and
/// returns its path. Outputs are cached under the build tree by a hash of
/// source, flags and output name, so each fixture is built once per build
/// tree. Errors carry nvcc's stderr.
Expected<std::filesystem::path> compile(const std::string& source, const std::vector<std::string>& flags,
                                        const std::string& output);

/// Says which program links a shared library: the host compiler (g++, as
/// setuptools and most CMake builds do) or nvcc, which adds a device-link
/// stub module for its default arch.
enum class Linker { host, nvcc };

/// Links objects into a shared library and returns its path (cached like compile).
Expected<std::filesystem::path> link_shared(const std::vector<std::filesystem::path>& objects,
                                            const std::string& output, Linker linker);

/// Builds one of the named fixtures (compiled once per build tree):
///   sm80.o        -gencode arch=compute_80,code=sm_80
///   sm90a.o       -gencode arch=compute_90a,code=sm_90a
///   ptx120.o      -gencode arch=compute_120,code=compute_120 (PTX only)
///   ptx90.o       -gencode arch=compute_90,code=compute_90 (PTX only)
///   sm120_ptx.o   -gencode arch=compute_120,code=[sm_120,compute_120]
///   compressed.o  sm_80 + compute_80 + sm_120, -Xfatbin -compress-all
///   sm100f.o      -gencode arch=compute_100f,code=sm_100f
///   rdc.o         -rdc=true, sm_80 + compute_90 (__nv_relfatbin only)
///   rdc_exe       a program device-linked from rdc.o and a launcher TU
///   partial.so    4 TUs: two sm_80+sm_120, one sm_80, one compute_90 PTX (g++ -shared)
///   stub.so       one sm_80 TU linked by nvcc -shared (adds a kernel-less sm_75 stub)
///   sm90a.cubin   -cubin -arch=sm_90a
///   sm80.fatbin   -fatbin, sm_80 + compute_80
/// Errors: unknown name, or nvcc failed (with its output).
Expected<std::filesystem::path> fixture(const std::string& name);

/// Returns each module group of `file` as "modules: image image ..." for exact comparisons.
std::vector<std::string> groups_of(const binary::FileKernels& file);

/// Reads a whole file into bytes; empty on error.
std::vector<std::byte> read_bytes(const std::filesystem::path& path);
/// Writes bytes to a file, replacing it.
void write_bytes(const std::filesystem::path& path, const std::vector<std::byte>& bytes);

/// Creates a fresh directory for one test; removes it when the test passed and
/// keeps it (printing its path) when it failed.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Returns the directory.
  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

}  // namespace torchfix::test

/// Skips the current test when nvcc is not installed.
#define TORCHFIX_REQUIRE_NVCC()                                                           \
  do {                                                                                    \
    if (!::torchfix::test::find_nvcc())                                                   \
      GTEST_SKIP() << "nvcc not found (set TORCHFIX_NVCC or install the CUDA toolkit at " \
                      "/usr/local/cuda): fixtures are compiled at test time";             \
  } while (0)

/// Binds `var` to the fixture built by `expr` (an Expected<path>), failing the test on error.
#define TORCHFIX_FIXTURE(var, expr)                          \
  auto var##_built_ = (expr);                                \
  ASSERT_TRUE(var##_built_) << var##_built_.error().message; \
  const std::filesystem::path var = *var##_built_
