// The fixes of an `import torch` that fails; on Windows, why it could not
// load a DLL, from the import directory the probe read (snapshot FailedDll):
// the DLLs it needs that the loader finds nowhere, and the installer of each
// (recipes/drivers.toml [[runtime_dll]]).
#include <algorithm>
#include <cctype>

#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"

namespace torchfix::detail {
namespace {

std::string comma_list(const std::vector<std::string>& items, std::string_view separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// Returns the row whose installer provides `dll` (matched without case), nullptr when none does.
const RuntimeDll* installer_of(const Knowledge& k, std::string dll) {
  std::ranges::transform(dll, dll.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto row = std::ranges::find_if(
      k.runtime_dlls, [&](const RuntimeDll& r) { return std::ranges::find(r.dlls, dll) != r.dlls.end(); });
  return row == k.runtime_dlls.end() ? nullptr : &*row;
}

// Returns the one-line install of `row`'s installer in `shell`: downloaded
// from its URL, then run with its unattended options.
std::string runtime_install(CommandShell shell, const RuntimeDll& row) {
  const std::string file = row.url.substr(row.url.rfind('/') + 1);
  if (shell == CommandShell::cmd) {
    return "curl.exe -L -o " + file + " " + row.url + " && " + file + " " + row.arguments;
  }
  return "Invoke-WebRequest " + row.url + " -OutFile " + file + "; .\\" + file + " " + row.arguments;
}

// Adds why Windows could not load `dll` to `f`, with the installer of the
// first missing import a row knows as its fix.
void add_failed_dll(const Situation& x, const Knowledge& k, const FailedDll& dll, Finding& f) {
  const std::string name = dll.path.substr(dll.path.find_last_of("/\\") + 1);
  if (!dll.error.empty()) {
    f.details.push_back("could not read the imports of " + name + ": " + dll.error);
    return;
  }
  const std::string searched = comma_list(dll.searched, "; ");
  if (dll.missing.empty()) {
    f.details.push_back("every DLL that " + name + " imports was found (searched " + searched + ")");
    return;
  }
  f.details.push_back(name + " imports " + comma_list(dll.imports) + "; not found: " + comma_list(dll.missing) +
                      " (searched " + searched + ")");
  std::vector<std::string> unknown;
  for (const std::string& missing : dll.missing) {
    const RuntimeDll* row = installer_of(k, missing);
    if (!row) {
      unknown.push_back(missing);
    } else if (f.fixes.empty()) {
      f.title += ": " + name + " needs " + missing + ", which is not installed";
      f.details.push_back(row->source);
      f.fixes.push_back({"Install " + row->installer + ", which provides " + missing + " (" + row->url + ")",
                         {runtime_install(x.shell, *row)}});
    }
  }
  if (!unknown.empty()) {
    f.fixes.push_back({"Install what provides " + comma_list(unknown) + " (" + name +
                           " imports it; the loader finds it in none of the folders searched)",
                       {}});
  }
}

}  // namespace

void add_import_fixes(const Situation& x, const Knowledge& k, const PythonEnv& env, Finding& f) {
  if (env.failed_dll) add_failed_dll(x, k, *env.failed_dll, f);
  f.fixes.push_back({"See where it stops",
                     {command_line(x.shell, {env.interpreter, "-X", "faulthandler", "-c", "import torch"})},
                     {},
                     FixRole::diagnose});
}

}  // namespace torchfix::detail
