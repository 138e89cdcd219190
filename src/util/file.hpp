#pragma once
// File primitives shared by every layer that writes or reads files: one
// reader (regular files only, bounded, never blocking on a FIFO or device),
// one writer (looks at the target first: a regular file is replaced
// atomically, a device or FIFO is written in place, anything else refused),
// and the rule under which either follows a symlink.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/error.hpp"

namespace torchfix::util {

/// Returns "<what> <path>: <strerror(err)>", the shape of every OS error message.
std::string os_error(std::string_view what, const std::filesystem::path& path, int err);

/// Checks that the symlink `link` may be followed by this process: always
/// when the link is owned by root or by this process's effective user, or
/// when its owner also owns what it points to (the rule of the kernel's
/// fs.protected_symlinks, applied in every folder, not only sticky ones).
/// Errors name the link, its owner and what to do. Not a link: fine.
Expected<void> check_link_trust(const std::filesystem::path& link);

/// Follows `path` link by link (at most 40) under check_link_trust and
/// returns the first path that is not a symlink (it may not exist). Each
/// step's folder is taken by its real path, as the kernel does. A /proc
/// "magic" link whose target is no path (/proc/self/fd/1 -> pipe:[123]) is
/// returned as it is. Errors: an untrusted link (named), a loop, unreadable link.
Expected<std::filesystem::path> resolve_trusted(const std::filesystem::path& path);

/// How read_file_bytes treats a pipe or FIFO: refused, or read to EOF
/// (`doctor --snapshot /dev/stdin`) with an idle timeout of 30 s.
enum class Pipes { refuse, read };

/// Bounds of one read: at most `max_bytes` bytes; pipes as `pipes` says.
struct ReadLimits {
  std::size_t max_bytes = 16u << 20;
  Pipes pipes = Pipes::refuse;
  std::string_view what = "file";  // named in errors ("snapshot", "table")
};

/// Returns the limits for a snapshot, what-if or report file (8 MiB; a
/// 64-GPU snapshot with kernels is about 0.5 MB), pipes allowed.
ReadLimits snapshot_limits();

/// Reads a whole file into bytes: opened O_NONBLOCK (a FIFO never blocks the
/// open), regular files only (and pipes when `limits` allow them), at most
/// `limits.max_bytes`, symlinks followed only under check_link_trust.
/// Errors name the path and the cause (OS error, not a regular file, too big).
Expected<std::string> read_file_bytes(const std::filesystem::path& path, const ReadLimits& limits = {});

/// Returns the marker in the names of temporary files that write_file
/// creates next to its target (".NAME.torchfix-XXXXXX"), so a later run can
/// recognise ones left behind by a SIGKILL.
std::string_view temp_file_marker();

/// Says whether the file name `file` is one write_file gives a temporary
/// file beside a target named `target_name`: "." + target_name + the marker
/// + the random part (6 letters and digits from mkstemp on POSIX, 16 hex
/// digits on Windows), so a later run removes only those.
bool is_temp_file_of(std::string_view file, std::string_view target_name);

/// Writes `bytes` to `target`, looking at the target first. A symlink is
/// followed under check_link_trust (refused otherwise, naming the link).
/// Missing or a regular file: replaced atomically (mkstemp in its folder,
/// so a link planted at any name is never followed; `mode` & ~umask for a
/// new file, the existing file's mode & `mode` and its owner (fchown on the
/// descriptor) for an old one; fsync; rename; fsync of the folder). A
/// character device or FIFO: opened O_WRONLY|O_NONBLOCK and written in
/// place (a FIFO nobody reads is refused). Anything else is refused. When
/// `expected` is given, a regular target must still hold exactly those
/// bytes (nullopt: must not exist) just before the rename. Errors name the
/// step and the OS error (ENOSPC, EIO: /dev/full says "No space left on
/// device"); on error a regular target is untouched, no temporary file left.
struct WriteOptions {
  std::filesystem::perms mode = std::filesystem::perms::owner_read | std::filesystem::perms::owner_write;
  std::optional<std::optional<std::string_view>> expected;  // see write_file
  // uid_t and gid_t (POSIX; Windows has neither and ignores both)
  std::optional<std::uint32_t> owner;  // the written file's owner (fchown; best effort), e.g. the rc file's
  std::optional<std::uint32_t> group;
};

/// See above; `options` carries the mode, the expected bytes and the owner of a new file.
Expected<void> write_file(const std::filesystem::path& target, std::string_view bytes, const WriteOptions& options);

/// Calls write_file with `mode` and `expected` (the name older callers use).
Expected<void> write_file_atomically(const std::filesystem::path& target, std::string_view bytes,
                                     std::filesystem::perms mode,
                                     std::optional<std::optional<std::string_view>> expected = std::nullopt);

/// Writes `bytes` to the open descriptor `fd` (all of them, retrying on
/// EINTR and short writes). Errors: the OS error, naming `name`.
Expected<void> write_fd(int fd, std::string_view bytes, std::string_view name);

}  // namespace torchfix::util

namespace torchfix::util {

/// Holds an exclusive flock(2) on a file; released (and the file kept) when destroyed.
class FileLock {
 public:
  explicit FileLock(int fd) : m_fd(fd) {}
  ~FileLock();
  FileLock(FileLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  FileLock& operator=(FileLock&&) = delete;

 private:
  int m_fd = -1;
};

/// Takes an exclusive flock(2) on `path` without waiting, creating the file
/// (mode 0644, never following a link planted there). nullopt: another
/// process holds it. Errors: the file cannot be created or opened.
Expected<std::optional<FileLock>> try_lock_file(const std::filesystem::path& path);

}  // namespace torchfix::util
