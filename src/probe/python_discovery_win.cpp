// discover_pythons on Windows, where users have their Pythons: the active
// venv (%VIRTUAL_ENV%\Scripts\python.exe) and conda env
// (%CONDA_PREFIX%\python.exe), the venv torchfix.exe was installed into,
// python.exe on PATH (not the Microsoft Store's WindowsApps alias, which
// opens the Store instead of running Python), and every PEP 514 registry
// entry (HKCU, then HKLM 64- and 32-bit: Software\Python\<Company>\<Tag>\
// InstallPath), which is the list `py -0p` prints (the py launcher reads the
// same keys, https://peps.python.org/pep-0514/). A folder given with
// --python is a portable app's or an environment's root: its python.exe,
// Scripts\python.exe, ComfyUI portable's python_embeded\python.exe or
// A1111's venv\Scripts\python.exe. python_discovery.cpp is the Linux side.
#include <windows.h>

#include <algorithm>
#include <filesystem>

#include "probe/process_win.hpp"
#include "probe/python_probe.hpp"

namespace torchfix {
namespace fs = std::filesystem;
namespace {

using Found = std::vector<std::pair<std::string, std::string>>;

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// The python.exe a --python folder holds, in the layouts portable apps and
// environments use; nullopt when it holds none.
std::optional<std::string> python_in_folder(const fs::path& folder) {
  for (const char* sub : {"python.exe", "Scripts\\python.exe", "python_embeded\\python.exe",
                          "venv\\Scripts\\python.exe", ".venv\\Scripts\\python.exe"}) {
    if (is_file(folder / sub)) return (folder / sub).string();
  }
  return std::nullopt;
}

Found given_pythons(const std::vector<std::string>& interpreters) {
  Found out;
  for (const std::string& python : interpreters) {
    std::error_code ec;
    fs::path path = python.find_first_of("/\\") != std::string::npos ? fs::absolute(python, ec) : fs::path(python);
    if (ec) path = python;
    path = path.lexically_normal();
    if (fs::is_directory(path, ec)) {
      if (auto inside = python_in_folder(path)) path = *inside;
    }
    out.emplace_back(path.string(), "--python");
  }
  return out;
}

// The Store's stub: %LOCALAPPDATA%\Microsoft\WindowsApps\python.exe.
bool store_alias(const std::string& path) {
  std::string lower = path;
  std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("\\microsoft\\windowsapps\\") != std::string::npos;
}

// The first python.exe in PATH's folders that is not the Store's alias.
std::optional<std::string> python_on_path(const Environment& env) {
  const std::string path = env_value(env, "PATH");
  for (std::size_t at = 0; at <= path.size();) {
    const auto semi = std::min(path.find(';', at), path.size());
    const std::string dir = path.substr(at, semi - at);
    at = semi + 1;
    if (dir.empty()) continue;
    const std::string candidate = (fs::path(dir) / "python.exe").string();
    if (is_file(candidate) && !store_alias(candidate) && !throwaway_environment(candidate, env)) return candidate;
  }
  return std::nullopt;
}

// torchfix.exe in <venv>\Scripts (pip's layout) or <conda env>\Scripts:
// the python.exe of that environment.
std::optional<std::string> own_environment_python() {
  wchar_t buffer[MAX_PATH * 4] = {};
  const DWORD n = GetModuleFileNameW(nullptr, buffer, static_cast<DWORD>(std::size(buffer)));
  if (n == 0 || n >= std::size(buffer)) return std::nullopt;
  const fs::path scripts = fs::path(win::narrow(std::wstring_view(buffer, n))).parent_path();
  const fs::path prefix = scripts.parent_path();
  std::error_code ec;
  if (fs::exists(prefix / "pyvenv.cfg", ec) && is_file(scripts / "python.exe"))
    return (scripts / "python.exe").string();
  if (fs::is_directory(prefix / "conda-meta", ec) && is_file(prefix / "python.exe"))
    return (prefix / "python.exe").string();
  return std::nullopt;
}

// Reads a REG_SZ value (nullptr name: the key's default value); "" when absent.
std::wstring read_string(HKEY key, const wchar_t* subkey, const wchar_t* name) {
  wchar_t value[MAX_PATH * 2] = {};
  DWORD size = sizeof value - sizeof(wchar_t);
  if (RegGetValueW(key, subkey, name, RRF_RT_REG_SZ, nullptr, value, &size) != ERROR_SUCCESS) return {};
  return value;
}

std::vector<std::wstring> subkeys(HKEY key) {
  std::vector<std::wstring> names;
  wchar_t name[256];
  for (DWORD i = 0;; ++i) {
    DWORD size = static_cast<DWORD>(std::size(name));
    if (RegEnumKeyExW(key, i, name, &size, nullptr, nullptr, nullptr, nullptr) != ERROR_SUCCESS) break;
    names.emplace_back(name, size);
  }
  return names;
}

// One hive's Software\Python: every <Company>\<Tag> with an InstallPath
// (PEP 514: ExecutablePath when given, else <InstallPath>\python.exe; the
// PyLauncher company is the launcher's own, not a Python).
void add_registry_hive(HKEY hive, REGSAM view, const char* hive_name, Found& out) {
  HKEY python = nullptr;
  if (RegOpenKeyExW(hive, L"Software\\Python", 0, KEY_READ | view, &python) != ERROR_SUCCESS) return;
  for (const std::wstring& company : subkeys(python)) {
    if (_wcsicmp(company.c_str(), L"PyLauncher") == 0) continue;
    HKEY company_key = nullptr;
    if (RegOpenKeyExW(python, company.c_str(), 0, KEY_READ | view, &company_key) != ERROR_SUCCESS) continue;
    for (const std::wstring& tag : subkeys(company_key)) {
      const std::wstring install = tag + L"\\InstallPath";
      std::wstring exe = read_string(company_key, install.c_str(), L"ExecutablePath");
      if (exe.empty()) {
        const std::wstring folder = read_string(company_key, install.c_str(), nullptr);
        if (folder.empty()) continue;
        exe = (fs::path(folder) / L"python.exe").wstring();
      }
      out.emplace_back(win::narrow(exe), std::string("registry (") + hive_name + "\\" + win::narrow(company) + "\\" +
                                             win::narrow(tag) + ")");
    }
    RegCloseKey(company_key);
  }
  RegCloseKey(python);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> discover_pythons(const PythonProbeOptions& options,
                                                                  const Environment& env) {
  if (!options.interpreters.empty()) return given_pythons(options.interpreters);
  Found out;
  auto add = [&](const std::string& path, const std::string& origin) {
    const bool seen =
        std::ranges::any_of(out, [&](const auto& found) { return _stricmp(found.first.c_str(), path.c_str()) == 0; });
    if (!seen && is_file(path) && !throwaway_environment(path, env)) out.emplace_back(path, origin);
  };
  if (const std::string venv = env_value(env, "VIRTUAL_ENV"); !venv.empty())
    add(venv + "\\Scripts\\python.exe", "VIRTUAL_ENV");
  if (const std::string conda = env_value(env, "CONDA_PREFIX"); !conda.empty())
    add(conda + "\\python.exe", "CONDA_PREFIX");
  if (auto own = own_environment_python()) add(*own, "torchfix's venv");
  if (auto on_path = python_on_path(env)) add(*on_path, "PATH");
  Found registry;
  add_registry_hive(HKEY_CURRENT_USER, 0, "HKCU", registry);
  add_registry_hive(HKEY_LOCAL_MACHINE, KEY_WOW64_64KEY, "HKLM", registry);
  add_registry_hive(HKEY_LOCAL_MACHINE, KEY_WOW64_32KEY, "HKLM 32-bit", registry);
  for (const auto& [path, origin] : registry) add(path, origin);
  for (const std::string& path : options.launcher) add(path, "py -0p");
  return out;
}

std::vector<std::string> launcher_pythons(const Environment& env, ProcessRunner& runner) {
  // launcher2.c writes the list as UTF-8 (_O_U8TEXT) to a pipe.
  auto listed = runner.run(Command{"py", {"-0p"}, env, {}, std::chrono::seconds(5)});
  if (!listed || !listed->succeeded()) return {};
  return parse_py_list(listed->out);
}

}  // namespace torchfix
