#pragma once
// Internal to shellenv's rc editor (rc_file.cpp): the steps of an edit that
// differ between POSIX (rc_file_posix.cpp: flock, stat, fchown, pwrite) and
// Windows (rc_file_win.cpp: LockFileEx, the file's attributes). Not for use
// outside src/shellenv.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

#include "core/base/error.hpp"
#include "util/file.hpp"

namespace torchfix::shellenv::os {

/// Describes the rc file an edit is about to replace, looked at under the lock.
struct RcFile {
  bool exists = false;
  std::filesystem::perms mode{};       // kept by the new file (POSIX; unused on Windows)
  std::optional<std::uint32_t> owner;  // kept by the new file and its backup (POSIX)
  std::optional<std::uint32_t> group;
  std::uintmax_t hard_links = 1;  // > 1: edited in place (write_in_place)
  std::uint64_t device = 0;       // with inode: the file's identity, checked before an in-place write (POSIX)
  std::uint64_t inode = 0;
};

/// Takes the exclusive lock of edits of `target` (lock_path(target), created
/// on first use and never removed), waiting up to rc_lock_wait(). Errors:
/// the lock file is not a regular file or cannot be opened; another torchfix
/// kept it past the wait (nothing written).
Expected<util::FileLock> lock_rc(const std::filesystem::path& target);

/// Looks at `target` under the lock: missing (exists = false) or a regular
/// file that may be written. Errors: not a regular file, read-only (a
/// rename would defeat the user's protection), cannot be looked at.
Expected<RcFile> look_at_rc(const std::filesystem::path& target);

/// Rewrites the hard-linked `target` in place, so every name keeps seeing
/// one file, after checking it still holds `expected`. Errors: it changed
/// (nothing written), any write error (the backup is the way back).
Expected<void> write_in_place(const std::filesystem::path& target, const RcFile& file, std::string_view bytes,
                              std::string_view expected);

/// Returns the message of a lock kept past rc_lock_wait() by another run.
std::string lock_timeout(const std::filesystem::path& target, const std::filesystem::path& lock);

}  // namespace torchfix::shellenv::os
