#include "probe/toolchain_probe.hpp"

#include "probe/msvc_probe.hpp"
#include "probe/toolkit_paths.hpp"

#include <algorithm>
#include <filesystem>
#include <future>
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
#ifdef _WIN32
  return fs::is_regular_file(path, ec);  // no execute bit: any file can be run (its extension decides how)
#else
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
#endif
}

// Returns the length of the dotted number at the start of `text` ("13.0.88,").
std::size_t leading_dotted(std::string_view text) {
  auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  std::size_t i = 0;
  while (digit(i)) {
    while (digit(i)) ++i;
    if (!(i < text.size() && text[i] == '.' && digit(i + 1))) break;
    ++i;
  }
  return i;
}

// Returns the number of parts of a dotted number ("13.0.88": 3; "": 0).
int dotted_count(std::string_view number) {
  return number.empty() ? 0 : 1 + static_cast<int>(std::ranges::count(number, '.'));
}

// `--version` prints a few lines; more than this is not a working compiler.
constexpr std::size_t k_version_output_max = 1u << 20;

std::future<Expected<ProcessResult>> run_async(ProcessRunner& runner, Command command) {
  return std::async(std::launch::async, [&runner, command = std::move(command)] { return runner.run(command); });
}

// Says how a run that gave no version ended: "timed out after 10 s",
// "killed by signal 11", "exited with code 1", or `otherwise`.
std::string failure_text(const ProcessResult& result, const std::string& otherwise) {
  if (result.timed_out) return "timed out";
  if (result.overflowed) return "printed more than 1 MiB";
  if (result.interrupted) return "interrupted";
  if (result.signal) return "killed by signal " + std::to_string(*result.signal);
  if (result.exit_code != 0) return "exited with code " + std::to_string(result.exit_code);
  return otherwise;
}

}  // namespace

std::optional<Version> parse_nvcc_version(std::string_view output) {
  // "release 13.0, V13.0.88": the V part when it is there, else the release.
  // Hand-parsed in linear time: std::regex recurses per character and
  // overflows the stack on a 30 KB line.
  std::optional<Version> release_only;
  for (auto at = output.find("release "); at != std::string_view::npos; at = output.find("release ", at + 1)) {
    const std::string_view rest = output.substr(at + 8);
    const std::size_t release = leading_dotted(rest);
    if (dotted_count(rest.substr(0, release)) < 2) continue;
    const std::string_view after = rest.substr(release);
    if (after.starts_with(", V")) {
      const std::string_view v = after.substr(3);
      const std::size_t full = leading_dotted(v);
      if (dotted_count(v.substr(0, full)) >= 3) {
        std::size_t end = 0;
        for (int dots = 0; end < full; ++end) {
          if (v[end] == '.' && ++dots == 3) break;
        }
        return Version::parse(v.substr(0, end));
      }
    }
    if (!release_only) {
      const std::size_t dot = rest.find('.');
      std::size_t end = dot + 1;
      while (end < release && rest[end] != '.') ++end;
      release_only = Version::parse(rest.substr(0, end));
    }
  }
  return release_only;
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
  const std::string_view first_line = output.substr(0, output.find('\n'));
  if (const auto at = first_line.find("clang version "); at != std::string_view::npos) {
    if (auto v = Version::parse(first_line.substr(at + 14))) return std::pair{CompilerFamily::clang, *v};
  }
  // "<word naming gcc/g++/cc/c++> (<anything but ')'>) <version>".
  const auto space = first_line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view word = first_line.substr(0, space);
  if (word.find("cc") == std::string_view::npos && word.find("++") == std::string_view::npos) return std::nullopt;
  if (first_line.substr(space + 1, 1) != "(") return std::nullopt;
  const auto close = first_line.find(')', space + 2);
  if (close == std::string_view::npos || first_line.substr(close + 1, 1) != " ") return std::nullopt;
  if (auto v = Version::parse(first_line.substr(close + 2))) return std::pair{CompilerFamily::gcc, *v};
  return std::nullopt;
}

std::vector<Toolkit> probe_toolkits(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge,
                                    const std::vector<PythonEnv>& pythons, std::chrono::milliseconds timeout,
                                    std::vector<ProbeNote>& notes, const std::string& root) {
  // Every nvcc at once, its two calls too (each 10-50 ms): results are taken
  // in candidate order, so the output does not depend on which finished first.
  struct Pending {
    Toolkit toolkit;
    std::future<Expected<ProcessResult>> version;
    std::future<Expected<ProcessResult>> list;
  };
  std::vector<Pending> pending;
  std::set<std::string> seen;
  for (const auto& [path, origin] : nvcc_candidates(env, pythons, root)) {
    if (!is_executable_file(path) || !seen.insert(real_path(path)).second) continue;
    Pending p;
    p.toolkit.nvcc = path;
    p.toolkit.origin = origin;
    p.version = run_async(runner, {path, {"--version"}, env, {}, timeout, k_version_output_max});
    p.list = run_async(runner, {path, {"--list-gpu-code"}, env, {}, timeout, k_version_output_max});
    pending.push_back(std::move(p));
  }
  std::vector<Toolkit> toolkits;
  for (Pending& p : pending) {
    Toolkit toolkit = std::move(p.toolkit);
    const std::string& path = toolkit.nvcc;
    auto version = p.version.get();
    if (version && version->succeeded()) {
      toolkit.version = parse_nvcc_version(version->out);
    }
    if (!toolkit.version) {
      const std::string why = !version ? version.error().message : failure_text(*version, "no version in its output");
      notes.push_back({"nvcc:" + path, "cannot read the version (" + why + ")"});
    }
    auto list = p.list.get();
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
                                          std::chrono::milliseconds timeout, std::vector<ProbeNote>& notes,
                                          const std::string& root) {
  std::vector<std::pair<std::string, std::string>> candidates;
  for (const char* var : {"CUDAHOSTCXX", "CXX", "CC"}) {
    if (auto value = env_value(env, var); !value.empty()) {
      candidates.emplace_back(value.substr(0, value.find(' ')), var);  // "ccache g++" style values keep argv[0] only
    }
  }
  for (const char* name : {"g++", "gcc", "clang++", "clang"}) candidates.emplace_back(name, "PATH");
  // Versioned compilers (Debian/Ubuntu g++-13, clang++-17) are what a fix for
  // "gcc too new for nvcc" points CUDAHOSTCXX at.
  for (int major = 20; major >= 7; --major) {
    candidates.emplace_back("g++-" + std::to_string(major), "PATH");
    candidates.emplace_back("clang++-" + std::to_string(major), "PATH");
    // Their C drivers too: CC must name a compiler that exists (core/situation/toolchain.hpp).
    candidates.emplace_back("gcc-" + std::to_string(major), "PATH");
    candidates.emplace_back("clang-" + std::to_string(major), "PATH");
  }
  // RHEL and its rebuilds ship newer and older gcc as gcc-toolset-N outside
  // PATH; the compiler-install fix points there (core/situation/toolchain.hpp). Not on
  // Windows, where /opt would be Wine's view of the Linux host.
#ifndef _WIN32
  for (int major = 20; major >= 7; --major) {
    const std::string bin = root + "/opt/rh/gcc-toolset-" + std::to_string(major) + "/root/usr/bin/";
    candidates.emplace_back(bin + "g++", std::string(k_gcc_toolset_origin));
    candidates.emplace_back(bin + "gcc", std::string(k_gcc_toolset_origin));
  }
#else
  (void)root;
#endif

  std::vector<std::pair<HostCompiler, std::future<Expected<ProcessResult>>>> pending;
  std::set<std::string> seen;
  for (const auto& [name, origin] : candidates) {
    auto path = find_program(name, env);
    if (!path) {
      if (origin != "PATH" && origin != k_gcc_toolset_origin)
        notes.push_back({"compiler:" + origin, origin + "=" + name + " is not an executable"});
      continue;
    }
    // g++ is often a symlink to g++-12: list the compiler once, under the name found first.
    std::error_code ec;
    const std::string real = std::filesystem::canonical(*path, ec).string();
    if (!seen.insert(ec ? *path : real).second) continue;
    pending.emplace_back(HostCompiler{*path, origin, CompilerFamily::other, std::nullopt},
                         run_async(runner, {*path, {"--version"}, env, {}, timeout, k_version_output_max}));
  }
  std::vector<HostCompiler> compilers;
  for (auto& [compiler, running] : pending) {
    auto result = running.get();
    if (result && result->succeeded()) {
      if (auto parsed = parse_compiler_version(result->out)) {
        compiler.family = parsed->first;
        compiler.version = parsed->second;
      }
    }
    if (!compiler.version) {
      // A compiler that hangs or crashes on --version will not build anything:
      // say how it failed, so that the doctor can call it broken.
      const std::string why = !result ? result.error().message : failure_text(*result, "no version in its output");
      notes.push_back({"compiler:" + compiler.path, "cannot read its version (" + why + ")"});
    }
    compilers.push_back(std::move(compiler));
  }
  for (HostCompiler& msvc : probe_msvc(env, runner, timeout, notes)) compilers.push_back(std::move(msvc));
  return compilers;
}

}  // namespace torchfix
