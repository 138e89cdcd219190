#pragma once
// Facts about the session torchfix runs in that no environment variable
// carries: the program that started it (which shell, so which rc file or
// PowerShell profile) and the user's Documents folder (where PowerShell
// keeps a user's profile on Windows).

#include <filesystem>
#include <string>

#include "core/base/error.hpp"

namespace torchfix::util {

/// Returns the file name of the program that started this process, as the
/// OS records it: /proc/PPID/comm on Linux (at most 15 bytes, a login
/// shell's leading '-' dropped), the parent's image name from a Toolhelp32
/// process snapshot on Windows ("pwsh.exe"). "" when the OS cannot tell.
std::string parent_process_name();

/// Returns the user's Documents folder: SHGetKnownFolderPath(FOLDERID_Documents)
/// on Windows, which follows folder redirection and OneDrive. Errors: the
/// shell does not know the folder (its HRESULT), or not Windows.
Expected<std::filesystem::path> documents_folder();

}  // namespace torchfix::util
