#pragma once
// The real nvcc and g++ of this machine as planner inventory entries, read
// by running them (the tests' stand-in for the toolchain probe).

#include <optional>
#include <regex>

#include "core/snapshot.hpp"
#include "test_support.hpp"

namespace torchfix::testing {

/// Holds the local nvcc and host compiler.
struct LocalToolchain {
  Toolkit toolkit;
  HostCompiler compiler;
};

/// Returns /usr/local/cuda/bin/nvcc with its version and `--list-gpu-code`
/// archs, and /usr/bin/g++; nullopt when nvcc is not installed.
inline std::optional<LocalToolchain> local_toolchain() {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc) || !std::filesystem::exists("/usr/bin/g++")) return std::nullopt;
  LocalToolchain t;
  t.toolkit.nvcc = nvcc;
  t.toolkit.origin = "test";
  std::smatch m;
  const std::string version = run_ok(nvcc, {"--version"}, "/");
  if (std::regex_search(version, m, std::regex(R"(V([0-9.]+))"))) t.toolkit.version = Version::parse(m[1].str());
  const std::string codes = run_ok(nvcc, {"--list-gpu-code"}, "/");
  const std::regex sm(R"(sm_[0-9]+[af]?)");
  for (auto it = std::sregex_iterator(codes.begin(), codes.end(), sm);
       it != std::sregex_iterator(); ++it) {
    if (auto a = Arch::parse(it->str())) t.toolkit.archs.push_back(*a);
  }
  t.toolkit.archs_source = "nvcc --list-gpu-code";
  const std::string gxx = run_ok("/usr/bin/g++", {"-dumpfullversion"}, "/");
  t.compiler = {"/usr/bin/g++", "test", CompilerFamily::gcc, Version::parse(gxx)};
  return t;
}

}  // namespace torchfix::testing
