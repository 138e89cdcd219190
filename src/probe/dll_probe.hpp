#pragma once
// Why a Windows DLL did not load: torch's `import torch` names the DLL
// ("Error loading "X" or one of its dependencies", torch/__init__.py); its
// PE import directory names what the loader needed, and each is looked for
// where the loader looks.

#include <optional>
#include <string>

#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Reads the DLL that `import_error` names (torch's WinError 126/127
/// message) and looks for each DLL it imports, case-insensitively, in the
/// folders Windows' loader searches for torch's LoadLibraryExW
/// (LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_DEFAULT_DIRS):
/// the DLL's own folder, the interpreter's folder, torch/lib (which torch
/// adds with os.add_dll_directory), %SystemRoot%\System32, then PATH
/// (';'-separated; searched by Pythons before 3.8). API-set names
/// (api-ms-win-*, ext-ms-*) are resolved by the loader, not by files, and
/// are not looked for. Returns nullopt when the message names no DLL; an
/// unreadable DLL gives its error in FailedDll::error.
std::optional<FailedDll> probe_failed_dll(const std::string& import_error, const std::string& interpreter,
                                          const std::string& torch_location, const Environment& env);

}  // namespace torchfix
