#pragma once
// Installs and removes the torchfix block in a real rc file or PowerShell
// profile, never losing a line: the new content goes to a temporary file in
// the same folder, which is flushed and renamed over the target (rename and
// an fsync of the folder on POSIX, MoveFileExW with MOVEFILE_WRITE_THROUGH on
// Windows), so a crash or kill at any point leaves the old file or the new
// one, never a mix. The edits themselves are the pure functions of rc_edit.hpp.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/error.hpp"
#include "util/file.hpp"

namespace torchfix::shellenv {

/// Says what an install or uninstall did to the rc file.
struct RcChange {
  std::filesystem::path target;                 // the file written (a symlinked rc's target)
  bool changed = false;                         // false: the file already had this content
  bool created = false;                         // the file did not exist before
  std::optional<std::filesystem::path> backup;  // copy of the previous version, when one was written
  int hard_links = 0;                           // > 1: the file had that many names and was edited in place
};

/// Returns the sidecar file an edit of `target` locks (flock(2), LockFileEx):
/// ".NAME.torchfix-lock" in the same folder. It is created on first use and
/// left in place.
std::filesystem::path lock_path(const std::filesystem::path& target);

/// Returns how long an edit waits for another torchfix's lock on the same rc
/// file before giving up (30 s).
std::chrono::milliseconds rc_lock_wait();

/// Returns the suffix of the backup file written next to an edited rc file
/// (".torchfix-backup"); each edit replaces the previous backup.
std::string_view backup_suffix();

/// Returns the file that edits of `rc` write: `rc` itself, or the final
/// target of a chain of symlinks (a dangling link's target is created),
/// resolved as the kernel does: each folder by its real path, so ".." after
/// a directory symlink leaves the symlink's target. Errors: the link cannot
/// be read, more than 40 links, a link util::check_link_trust refuses.
Expected<std::filesystem::path> resolve_rc_target(const std::filesystem::path& rc);

/// Returns the bounds of reading an rc file or its backup (256 MiB, regular files only).
util::ReadLimits rc_limits();

/// Returns the "Current user, Current Host" profile (`$PROFILE`) of the
/// PowerShell named by `host`, the image name of the program that started
/// torchfix (any case, ".exe" or not), under the Documents folder
/// `documents`: PowerShell 7 (pwsh) reads
/// <documents>\PowerShell\Microsoft.PowerShell_profile.ps1, Windows
/// PowerShell 5.1 (powershell) <documents>\WindowsPowerShell\ with the same
/// name (about_Profiles of each). Errors: `host` is neither, naming it.
Expected<std::filesystem::path> powershell_profile(const std::filesystem::path& documents, std::string_view host);

// Whole-file reads and atomic writes live in util/file.hpp; shellenv code
// and its tests use them under these names.
using util::read_file_bytes;
using util::write_file_atomically;

/// Puts the block with `body` into the rc file `rc` (replacing an existing
/// block in place, appending otherwise; creating the file, mode 0644, when it
/// does not exist). Follows symlinks, keeps mode and owner, writes the old
/// content to `<target>.torchfix-backup` first, and writes nothing when the
/// content would not change. Errors: not a regular file, not text, unbalanced
/// markers, owner cannot be kept, any I/O failure (with path and OS error).
Expected<RcChange> install_into_rc(const std::filesystem::path& rc, std::string_view body);

/// Removes the block from the rc file `rc`, with the same guarantees as
/// install_into_rc. A missing file or a file without a block is left alone
/// (changed = false). Errors as install_into_rc.
Expected<RcChange> uninstall_from_rc(const std::filesystem::path& rc);

}  // namespace torchfix::shellenv
