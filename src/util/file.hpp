#pragma once
// File primitives shared by every layer that writes or reads whole files:
// reading a file into bytes, and replacing a file atomically without ever
// following a link planted where a temporary file goes (ccache's util/ idea).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace torchfix::util {

/// Returns "<what> <path>: <strerror(err)>", the shape of every OS error message.
std::string os_error(std::string_view what, const std::filesystem::path& path, int err);

/// Reads a whole file into bytes. Errors name the path and the OS error.
Expected<std::string> read_file_bytes(const std::filesystem::path& path);

/// Returns the marker in the names of temporary files that write_file_atomically
/// creates next to its target (".NAME.torchfix-XXXXXX"), so a later run can
/// recognise ones left behind by a SIGKILL.
std::string_view temp_file_marker();

/// Replaces `target` with `bytes` atomically: creates a new temporary file in
/// the target's folder with mkstemp (O_CREAT|O_EXCL, so a symlink or file
/// planted under any name is never followed or reused), gives it `mode`
/// (permission bits) and the target's owner and group when the target exists,
/// fsyncs it, renames it over `target` (a symlink at `target` is replaced,
/// not followed) and fsyncs the folder. When `expected` is given, the target
/// must still hold exactly those bytes (nullopt: must not exist) just before
/// the rename, so an edit made meanwhile by someone else is not lost. Errors
/// name the step and the OS error; on error the target is untouched and the
/// temporary file removed.
Expected<void> write_file_atomically(const std::filesystem::path& target, std::string_view bytes,
                                     std::filesystem::perms mode,
                                     std::optional<std::optional<std::string_view>> expected = std::nullopt);

}  // namespace torchfix::util
