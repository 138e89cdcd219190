#include "util/file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "util/fd.hpp"

namespace torchfix::util {
namespace {

namespace fs = std::filesystem;

using detail::Fd;

Expected<void> fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return fail(os_error("cannot open folder", dir, errno));
  if (::fsync(fd.get()) != 0) return fail(os_error("cannot fsync folder", dir, errno));
  return {};
}

// The process's umask, read without changing it (umask(2) would race with
// other threads creating files); 022 when /proc is not there.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("Umask:")) return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8));
  }
  return 022;
}

// Writes a character device or FIFO (or what a /proc/self/fd link opens) in
// place: never created, never truncated, never replaced.
Expected<void> write_in_place(const fs::path& path, const struct stat* seen, std::string_view bytes) {
  const int follow = seen ? O_NOFOLLOW : 0;  // a /proc magic link must be followed
  Fd fd(::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | O_APPEND | follow));
  if (fd.get() < 0 && errno == ENXIO) {
    return fail(path.string() + " is a FIFO that nothing reads; start its reader first or write to a regular file");
  }
  if (fd.get() < 0) return fail(os_error("cannot open", path, errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail(os_error("cannot stat", path, errno));
  if (seen && (st.st_dev != seen->st_dev || st.st_ino != seen->st_ino)) {
    return fail(path.string() + " changed while torchfix was writing it; nothing was written. Run the command again");
  }
  if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISSOCK(st.st_mode)) {
    return fail(path.string() + " is not a file, character device or FIFO; give another path");
  }
  // Blocking from here on: a slow reader is waited for, as a shell would.
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  if (auto ok = write_fd(fd.get(), bytes, path.string()); !ok) return ok;
  if (fd.close() != 0) return fail(os_error("cannot write", path, errno));
  return {};
}

Expected<void> check_unchanged(const fs::path& target, std::optional<std::string_view> expected,
                               std::size_t size_hint) {
  // Narrows the window in which another editor's save would be overwritten
  // to the instant between this check and the rename.
  struct stat st {};
  const bool exists_now = ::lstat(target.c_str(), &st) == 0;
  auto now = exists_now ? read_file_bytes(target, ReadLimits{size_hint + 1, Pipes::refuse, "file"})
                        : Expected<std::string>(std::string());
  if (exists_now != expected.has_value() || !now || (exists_now && *now != *expected)) {
    return fail(target.string() + " changed while torchfix was editing it; nothing was written. Run the command again");
  }
  return {};
}

// The regular-file case: mkstemp beside the target, rename over it.
Expected<void> replace_atomically(const fs::path& target, const struct stat* old, std::string_view bytes,
                                  const WriteOptions& o) {
  const fs::path dir = target.parent_path();
  // mkstemp opens with O_CREAT|O_EXCL: a name planted in advance (a symlink
  // to /etc/shadow, say) makes it pick another name, never write through it.
  std::string temp = (dir / ("." + target.filename().string() + std::string(temp_file_marker()) + "XXXXXX")).string();
  Fd fd(::mkstemp(temp.data()));
  if (fd.get() < 0) return fail(os_error("cannot create a temporary file in", dir, errno));
  const fs::path temp_path = temp;
  // Any failure below removes the temporary file; the target is untouched
  // until the rename, which is the single atomic step.
  const auto abort = [&](std::string message) {
    ::unlink(temp_path.c_str());
    return fail(std::move(message));
  };
  const mode_t wanted = static_cast<mode_t>(o.mode) & 07777;
  const mode_t mode = old ? (old->st_mode & 07777 & wanted) : (wanted & ~current_umask());
  if (::fchmod(fd.get(), mode) != 0) return abort(os_error("cannot chmod", temp_path, errno));
  if (auto ok = write_fd(fd.get(), bytes, temp_path.string()); !ok) return abort(ok.error().message);
  struct stat mine {};
  if (o.owner) {
    // Best effort: without the privilege the file is ours.
    if (::fchown(fd.get(), *o.owner, o.group.value_or(static_cast<gid_t>(-1))) != 0) {
    }
  } else if (old && ::fstat(fd.get(), &mine) == 0 && (old->st_uid != mine.st_uid || old->st_gid != mine.st_gid) &&
             ::fchown(fd.get(), old->st_uid, old->st_gid) != 0) {
    return abort(os_error("cannot keep the owner (uid " + std::to_string(old->st_uid) + ", gid " +
                              std::to_string(old->st_gid) + ") of",
                          target, errno) +
                 "; run torchfix as that user");
  }
  if (::fsync(fd.get()) != 0) return abort(os_error("cannot write", temp_path, errno));
  if (fd.close() != 0) return abort(os_error("cannot write", temp_path, errno));
  if (o.expected) {
    if (auto same = check_unchanged(target, *o.expected, bytes.size() + (*o.expected ? (*o.expected)->size() : 0));
        !same)
      return abort(same.error().message);
  }
  if (::rename(temp_path.c_str(), target.c_str()) != 0) {
    return abort(os_error("cannot rename " + temp_path.string() + " over", target, errno));
  }
  return fsync_dir(dir);
}

}  // namespace

Expected<void> write_fd(int fd, std::string_view bytes, std::string_view name) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(os_error("cannot write", std::string(name), errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

std::string_view temp_file_marker() {
  return ".torchfix-";
}

Expected<void> write_file(const fs::path& target, std::string_view bytes, const WriteOptions& options) {
  auto resolved = resolve_trusted(target);
  if (!resolved) return std::unexpected(resolved.error());
  struct stat st {};
  if (::lstat(resolved->c_str(), &st) != 0) {
    if (errno != ENOENT) return fail(os_error("cannot look at", *resolved, errno));
    return replace_atomically(*resolved, nullptr, bytes, options);
  }
  if (S_ISREG(st.st_mode)) return replace_atomically(*resolved, &st, bytes, options);
  if (options.expected) return fail(resolved->string() + " is not a regular file; give a regular file");
  if (S_ISLNK(st.st_mode)) return write_in_place(*resolved, nullptr, bytes);  // /proc/self/fd/N
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return write_in_place(*resolved, &st, bytes);
  const std::string kind = S_ISDIR(st.st_mode) ? "a folder" : S_ISBLK(st.st_mode) ? "a block device" : "a socket";
  return fail(resolved->string() + " is " + kind +
              "; torchfix writes only regular files, character devices and FIFOs: give a file name");
}

FileLock::~FileLock() {
  if (m_fd >= 0) ::close(m_fd);  // closing the descriptor releases the flock
}

Expected<std::optional<FileLock>> try_lock_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return fail(os_error("cannot open", path, errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) return std::optional<FileLock>();
    return fail(os_error("cannot lock", path, err));
  }
  return std::optional<FileLock>(FileLock(fd));
}

}  // namespace torchfix::util
