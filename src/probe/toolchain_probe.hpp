#pragma once
// Probes CUDA toolkits (every nvcc) and host compilers (gcc, clang, CC, CXX,
// CUDAHOSTCXX). Each program runs with a timeout; failures become ProbeNotes.

#include <chrono>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Finds every nvcc (PATH, CUDA_HOME, CUDA_PATH, /usr/local/cuda*, /opt/cuda,
/// CONDA_PREFIX, pip's nvidia nvcc in `pythons`' site-packages), deduplicated
/// by real path, and reads its version (`nvcc --version`) and accepted archs
/// (`nvcc --list-gpu-code`, else the table in `knowledge`). `root` prefixes
/// the fixed search folders (tests). `timeout` bounds each nvcc call.
std::vector<Toolkit> probe_toolkits(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge,
                                    const std::vector<PythonEnv>& pythons, std::chrono::milliseconds timeout,
                                    std::vector<ProbeNote>& notes, const std::string& root = "");

/// Finds host compilers: the programs named by CUDAHOSTCXX, CXX and CC (first
/// word), g++, gcc, clang++, clang and versioned g++-N / clang++-N on PATH,
/// and RHEL's /opt/rh/gcc-toolset-N (`root` prefixes it: tests), each once
/// (by real path), with their versions; `timeout` bounds each --version.
/// Then each Visual Studio install's MSVC (probe/msvc_probe.hpp).
std::vector<HostCompiler> probe_compilers(const Environment& env, ProcessRunner& runner,
                                          std::chrono::milliseconds timeout, std::vector<ProbeNote>& notes,
                                          const std::string& root = "");

/// Parses `nvcc --version` output ("Cuda compilation tools, release 13.0,
/// V13.0.88"): returns 13.0.88 (or 13.0 without the V part); nullopt if absent.
std::optional<Version> parse_nvcc_version(std::string_view output);

/// Parses `nvcc --list-gpu-code` output (one sm_XY per line) into SASS archs.
std::vector<Arch> parse_list_gpu_code(std::string_view output);

/// Parses the first line of `cc --version` into family and version:
/// "gcc (Debian 12.2.0-14) 12.2.0", "g++ (GCC) 14.2.1 20240912 (Red Hat 14.2.1-3)",
/// "Debian clang version 14.0.6", "Apple clang version 15.0.0". nullopt otherwise.
std::optional<std::pair<CompilerFamily, Version>> parse_compiler_version(std::string_view output);

}  // namespace torchfix
