#include "probe/toolchain_probe.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include <unistd.h>

namespace torchfix {
namespace fs = std::filesystem;
namespace {

std::string real_path(const std::string& path) {
  std::error_code ec;
  auto canonical = fs::canonical(path, ec);
  return ec ? path : canonical.string();
}

bool is_executable_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::string env_or(const Environment& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string{} : it->second;
}

// Candidate nvcc paths with their origin, most specific first: what the user
// pointed at (PATH, CUDA_HOME) wins over what merely exists on disk.
std::vector<std::pair<std::string, std::string>> nvcc_candidates(const Environment& env,
                                                                 const std::vector<PythonEnv>& pythons,
                                                                 const std::string& root) {
  std::vector<std::pair<std::string, std::string>> out;
  if (auto on_path = find_program("nvcc", env)) out.emplace_back(*on_path, "PATH");
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
    if (auto dir = env_or(env, var); !dir.empty()) out.emplace_back(dir + "/bin/nvcc", var);
  }
  out.emplace_back(root + "/usr/local/cuda/bin/nvcc", "/usr/local/cuda");
  std::error_code ec;
  std::vector<fs::path> versioned;
  for (const auto& entry : fs::directory_iterator(root + "/usr/local", ec)) {
    if (entry.path().filename().string().starts_with("cuda-")) versioned.push_back(entry.path());
  }
  std::ranges::sort(versioned);
  for (const auto& dir : versioned) out.emplace_back((dir / "bin" / "nvcc").string(), "/usr/local/cuda-*");
  out.emplace_back(root + "/opt/cuda/bin/nvcc", "/opt/cuda");
  if (auto conda = env_or(env, "CONDA_PREFIX"); !conda.empty()) out.emplace_back(conda + "/bin/nvcc", "conda");
  for (const PythonEnv& python : pythons) {
    if (!python.site_packages) continue;
    // pip's nvidia-cuda-nvcc wheels: nvidia/cu13/bin (CUDA 13) or nvidia/cuda_nvcc/bin (CUDA 12).
    for (const char* sub : {"/nvidia/cu13/bin/nvcc", "/nvidia/cuda_nvcc/bin/nvcc"}) {
      out.emplace_back(*python.site_packages + sub, "pip (" + python.interpreter + ")");
    }
  }
  return out;
}

}  // namespace

std::optional<Version> parse_nvcc_version(std::string_view output) {
  static const std::regex k_release(R"(release (\d+\.\d+), V(\d+\.\d+\.\d+))");
  static const std::regex k_release_only(R"(release (\d+\.\d+))");
  std::match_results<std::string_view::const_iterator> m;
  if (std::regex_search(output.begin(), output.end(), m, k_release)) return Version::parse(m[2].str());
  if (std::regex_search(output.begin(), output.end(), m, k_release_only)) return Version::parse(m[1].str());
  return std::nullopt;
}

std::vector<Arch> parse_list_gpu_code(std::string_view output) {
  std::vector<Arch> archs;
  std::istringstream lines{std::string(output)};
  std::string word;
  while (lines >> word) {
    if (auto arch = Arch::parse(word); arch && arch->kind == ImageKind::sass) archs.push_back(*arch);
  }
  return archs;
}

std::optional<std::pair<CompilerFamily, Version>> parse_compiler_version(std::string_view output) {
  const std::string first_line(output.substr(0, output.find('\n')));
  static const std::regex k_clang(R"(clang version (\d+(\.\d+)*))");
  static const std::regex k_gcc(R"(^(\S*(gcc|g\+\+|cc|c\+\+)\S*) \([^)]*\) (\d+(\.\d+)*))");
  std::smatch m;
  if (std::regex_search(first_line, m, k_clang)) {
    if (auto v = Version::parse(m[1].str())) return std::pair{CompilerFamily::clang, *v};
  }
  if (std::regex_search(first_line, m, k_gcc)) {
    if (auto v = Version::parse(m[3].str())) return std::pair{CompilerFamily::gcc, *v};
  }
  return std::nullopt;
}

std::vector<Toolkit> probe_toolkits(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge,
                                    const std::vector<PythonEnv>& pythons, std::chrono::milliseconds timeout,
                                    std::vector<ProbeNote>& notes, const std::string& root) {
  std::vector<Toolkit> toolkits;
  std::set<std::string> seen;
  for (const auto& [path, origin] : nvcc_candidates(env, pythons, root)) {
    if (!is_executable_file(path) || !seen.insert(real_path(path)).second) continue;
    Toolkit toolkit;
    toolkit.nvcc = path;
    toolkit.origin = origin;
    auto version = runner.run({path, {"--version"}, env, {}, timeout});
    if (version && version->succeeded()) {
      toolkit.version = parse_nvcc_version(version->out);
    }
    if (!toolkit.version) {
      const std::string why = !version             ? version.error().message
                              : version->timed_out ? "timed out"
                                                   : "no version in its output";
      notes.push_back({"nvcc:" + path, "cannot read the version (" + why + ")"});
    }
    auto list = runner.run({path, {"--list-gpu-code"}, env, {}, timeout});
    if (list && list->succeeded()) toolkit.archs = parse_list_gpu_code(list->out);
    if (!toolkit.archs.empty()) {
      toolkit.archs_source = "nvcc --list-gpu-code";
    } else if (toolkit.version) {
      // nvcc before 11.0 has no --list-gpu-code.
      toolkit.archs = knowledge.nvcc_archs_for(*toolkit.version);
      toolkit.archs_source = "table (recipes/toolkits.toml)";
    }
    toolkits.push_back(std::move(toolkit));
  }
  return toolkits;
}

std::vector<HostCompiler> probe_compilers(const Environment& env, ProcessRunner& runner,
                                          std::chrono::milliseconds timeout, std::vector<ProbeNote>& notes) {
  std::vector<std::pair<std::string, std::string>> candidates;
  for (const char* var : {"CUDAHOSTCXX", "CXX", "CC"}) {
    if (auto value = env_or(env, var); !value.empty()) {
      candidates.emplace_back(value.substr(0, value.find(' ')), var);  // "ccache g++" style values keep argv[0] only
    }
  }
  for (const char* name : {"g++", "gcc", "clang++", "clang"}) candidates.emplace_back(name, "PATH");
  // Versioned compilers (Debian/Ubuntu g++-13, clang++-17) are what a fix for
  // "gcc too new for nvcc" points CUDAHOSTCXX at.
  for (int major = 20; major >= 7; --major) {
    candidates.emplace_back("g++-" + std::to_string(major), "PATH");
    candidates.emplace_back("clang++-" + std::to_string(major), "PATH");
  }

  std::vector<HostCompiler> compilers;
  std::set<std::string> seen;
  for (const auto& [name, origin] : candidates) {
    auto path = find_program(name, env);
    if (!path) {
      if (origin != "PATH") notes.push_back({"compiler:" + origin, origin + "=" + name + " is not an executable"});
      continue;
    }
    // g++ is often a symlink to g++-12: list the compiler once, under the name found first.
    std::error_code ec;
    const std::string real = std::filesystem::canonical(*path, ec).string();
    if (!seen.insert(ec ? *path : real).second) continue;
    HostCompiler compiler{*path, origin, CompilerFamily::other, std::nullopt};
    auto result = runner.run({*path, {"--version"}, env, {}, timeout});
    if (result && result->succeeded()) {
      if (auto parsed = parse_compiler_version(result->out)) {
        compiler.family = parsed->first;
        compiler.version = parsed->second;
      }
    }
    if (!compiler.version) notes.push_back({"compiler:" + *path, "cannot read its version"});
    compilers.push_back(std::move(compiler));
  }
  return compilers;
}

}  // namespace torchfix
