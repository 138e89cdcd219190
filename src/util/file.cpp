#include "util/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace torchfix::util {
namespace {

namespace fs = std::filesystem;

// Closes a file descriptor on every path out of a function.
class Fd {
 public:
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  int get() const { return m_fd; }
  // Closes now and reports the error, which matters after writes (NFS reports
  // write failures at close).
  int close() {
    const int rc = ::close(m_fd);
    m_fd = -1;
    return rc;
  }

 private:
  int m_fd;
};

Expected<void> write_all(int fd, std::string_view bytes, const fs::path& path) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(os_error("cannot write", path, errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Expected<void> fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return fail(os_error("cannot open folder", dir, errno));
  if (::fsync(fd.get()) != 0) return fail(os_error("cannot fsync folder", dir, errno));
  return {};
}

}  // namespace

std::string os_error(std::string_view what, const fs::path& path, int err) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(err);
}

Expected<std::string> read_file_bytes(const fs::path& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return fail(os_error("cannot open", path, errno));
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(os_error("cannot read", path, errno));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return bytes;
}

std::string_view temp_file_marker() {
  return ".torchfix-";
}

Expected<void> write_file_atomically(const fs::path& target, std::string_view bytes, fs::perms mode,
                                     std::optional<std::optional<std::string_view>> expected) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
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
  if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) return abort(os_error("cannot chmod", temp_path, errno));
  if (auto ok = write_all(fd.get(), bytes, temp_path); !ok) return abort(ok.error().message);
  struct stat old {};
  struct stat mine {};
  if (::lstat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode) && ::fstat(fd.get(), &mine) == 0 &&
      (old.st_uid != mine.st_uid || old.st_gid != mine.st_gid) && ::fchown(fd.get(), old.st_uid, old.st_gid) != 0) {
    return abort(os_error("cannot keep the owner (uid " + std::to_string(old.st_uid) + ", gid " +
                              std::to_string(old.st_gid) + ") of",
                          target, errno) +
                 "; run torchfix as that user");
  }
  if (::fsync(fd.get()) != 0) return abort(os_error("cannot fsync", temp_path, errno));
  if (fd.close() != 0) return abort(os_error("cannot close", temp_path, errno));
  if (expected) {
    // Narrows the window in which another editor's save would be overwritten
    // to the instant between this check and the rename.
    std::error_code ec;
    const bool exists_now = fs::exists(target, ec);
    auto now = exists_now ? read_file_bytes(target) : Expected<std::string>(std::string());
    if (exists_now != expected->has_value() || !now || (exists_now && *now != **expected)) {
      return abort(target.string() +
                   " changed while torchfix was editing it; nothing was written. Run the command again");
    }
  }
  if (::rename(temp_path.c_str(), target.c_str()) != 0) {
    return abort(os_error("cannot rename " + temp_path.string() + " over", target, errno));
  }
  return fsync_dir(dir);
}

}  // namespace torchfix::util
