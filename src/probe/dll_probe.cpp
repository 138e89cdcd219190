#include "probe/dll_probe.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "binary/pe.hpp"
#include "binary/source.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// A path as Windows writes it, read on any host: backslashes are separators.
fs::path windows_path(std::string text) {
#ifndef _WIN32
  std::ranges::replace(text, '\\', '/');
#endif
  return fs::path(text);
}

// Returns the lowercased names of the files in `dir` (Windows matches DLL
// names without case); empty when it cannot be listed.
std::set<std::string> file_names(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    names.insert(lower(it->path().filename().string()));
  }
  return names;
}

// The folders the loader searches, in its order, without repeats.
std::vector<std::string> search_folders(const fs::path& dll, const std::string& interpreter,
                                        const std::string& torch_location, const Environment& env) {
  std::vector<std::string> folders;
  const auto add = [&](const fs::path& dir) {
    const std::string text = dir.string();
    if (!text.empty() && std::ranges::find(folders, text) == folders.end()) folders.push_back(text);
  };
  add(dll.parent_path());
  add(windows_path(interpreter).parent_path());
  if (!torch_location.empty()) add(windows_path(torch_location) / "lib");
  if (const auto root = env.find("SystemRoot"); root != env.end() && !root->second.empty()) {
    add(windows_path(root->second) / "System32");
  }
  if (const auto path = env.find("PATH"); path != env.end()) {
    std::string_view rest = path->second;
    while (!rest.empty()) {
      const auto semicolon = rest.find(';');
      if (semicolon != 0) add(windows_path(std::string(rest.substr(0, semicolon))));
      rest = semicolon == std::string_view::npos ? std::string_view{} : rest.substr(semicolon + 1);
    }
  }
  return folders;
}

}  // namespace

std::optional<FailedDll> probe_failed_dll(const std::string& import_error, const std::string& interpreter,
                                          const std::string& torch_location, const Environment& env) {
  constexpr std::string_view marker = "Error loading \"";
  const auto start = import_error.find(marker);
  if (start == std::string::npos) return std::nullopt;
  const auto end = import_error.find('"', start + marker.size());
  if (end == std::string::npos) return std::nullopt;
  FailedDll failed;
  failed.path = import_error.substr(start + marker.size(), end - start - marker.size());
  const fs::path dll = windows_path(failed.path);
  failed.searched = search_folders(dll, interpreter, torch_location, env);
  auto source = binary::ByteSource::open(dll);
  if (!source) {
    failed.error = source.error().message;
    return failed;
  }
  auto imports = binary::read_pe_imports(*source);
  if (!imports) {
    failed.error = imports.error().message;
    return failed;
  }
  failed.imports = *imports;
  std::map<std::string, std::set<std::string>> listed;
  for (const std::string& name : failed.imports) {
    const std::string key = lower(name);
    if (key.starts_with("api-ms-win-") || key.starts_with("ext-ms-")) continue;
    const bool found = std::ranges::any_of(failed.searched, [&](const std::string& dir) {
      auto [it, fresh] = listed.try_emplace(dir);
      if (fresh) it->second = file_names(dir);
      return it->second.contains(key);
    });
    if (!found) failed.missing.push_back(name);
  }
  return failed;
}

}  // namespace torchfix
