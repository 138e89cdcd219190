// discover_pythons on Linux: --python, VIRTUAL_ENV, CONDA_PREFIX, the venv
// torchfix runs from, python3/python on PATH, /usr/bin/python3.
// python_discovery_win.cpp is the Windows side.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "probe/python_probe.hpp"

namespace torchfix {
namespace {

// A bin/ folder of a venv or conda env: a python beside the binary and the
// environment's marker above it.
std::optional<std::string> environment_python(const std::filesystem::path& program) {
  std::error_code ec;
  const std::filesystem::path bin = program.parent_path();
  const std::filesystem::path prefix = bin.parent_path();
  if (!std::filesystem::exists(prefix / "pyvenv.cfg", ec) && !std::filesystem::is_directory(prefix / "conda-meta", ec))
    return std::nullopt;
  for (const char* name : {"python", "python3"}) {
    if (std::filesystem::exists(bin / name, ec)) return (bin / name).string();
  }
  return std::nullopt;
}

// The first `name` on PATH outside throwaway environments (uvx puts its
// own env's bin/ first).
std::optional<std::string> find_on_path(const std::string& name, const Environment& env) {
  std::istringstream dirs(env_value(env, "PATH"));
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) != 0 || std::filesystem::is_directory(candidate)) continue;
    if (!throwaway_environment(candidate, env)) return candidate;
  }
  return std::nullopt;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> discover_pythons(const PythonProbeOptions& options,
                                                                  const Environment& env) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!options.interpreters.empty()) {
    // A relative path is made absolute (not resolved: a venv's python is a
    // link whose own path names the venv), so that a printed fix which
    // first changes folder (`cd SRC && PY -m pip ...`) still names it.
    for (const std::string& python : options.interpreters) {
      std::error_code ec;
      const bool relative_path = python.find('/') != std::string::npos && !python.starts_with('/');
      const std::filesystem::path absolute =
          relative_path ? std::filesystem::absolute(python, ec) : std::filesystem::path(python);
      out.emplace_back(ec ? python : absolute.lexically_normal().string(), "--python");
    }
    return out;
  }
  auto add = [&](const std::string& path, const char* origin) {
    std::error_code ec;
    const bool seen = std::ranges::any_of(out, [&](const auto& found) { return found.first == path; });
    if (!seen && std::filesystem::exists(path, ec) && !throwaway_environment(path, env)) out.emplace_back(path, origin);
  };
  if (const std::string venv = env_value(env, "VIRTUAL_ENV"); !venv.empty()) add(venv + "/bin/python", "VIRTUAL_ENV");
  if (const std::string conda = env_value(env, "CONDA_PREFIX"); !conda.empty())
    add(conda + "/bin/python", "CONDA_PREFIX");
  // `<venv>/bin/torchfix doctor`, not activated: the venv it was installed into.
  std::vector<std::filesystem::path> own;
  if (options.invoked_as.find('/') != std::string::npos) own.push_back(std::filesystem::absolute(options.invoked_as));
  std::error_code ec;
  if (auto exe = std::filesystem::read_symlink("/proc/self/exe", ec); !ec) own.push_back(exe);
  for (const std::filesystem::path& program : own) {
    if (throwaway_environment(program.string(), env)) continue;
    if (auto python = environment_python(program)) {
      add(*python, "torchfix's venv");
      break;
    }
  }
  for (const char* name : {"python3", "python"}) {
    if (auto found = find_on_path(name, env)) add(*found, "PATH");
  }
  add("/usr/bin/python3", "system");
  return out;
}

std::vector<std::string> launcher_pythons(const Environment& /*env*/, ProcessRunner& /*runner*/) {
  return {};  // the Python launcher (py.exe) is Windows's
}

}  // namespace torchfix
