#pragma once
// The path of the running torchfix binary, which finds its own install
// (the tables in <prefix>/share/torchfix beside <prefix>/bin or Scripts).

#include <filesystem>
#include <optional>

namespace torchfix::util {

/// Returns the absolute path of this process's executable: /proc/self/exe
/// on Linux, GetModuleFileNameW on Windows. nullopt when the OS does not
/// say (no /proc mounted, a path longer than 32767 characters).
std::optional<std::filesystem::path> own_executable();

}  // namespace torchfix::util
