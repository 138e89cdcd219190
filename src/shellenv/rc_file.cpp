#include "shellenv/rc_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>

#include "shellenv/rc_edit.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;

std::string os_error(std::string_view what, const fs::path& path, int err) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(err);
}

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

enum class Edit { install, uninstall };

Expected<RcChange> edit_rc(const fs::path& rc, Edit edit, std::string_view body) {
  auto target = resolve_rc_target(rc);
  if (!target) return std::unexpected(target.error());
  RcChange change;
  change.target = *target;

  struct stat st {};
  const bool exists = ::stat(target->c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return fail(os_error("cannot read", *target, errno));
  if (exists && !S_ISREG(st.st_mode)) {
    return fail(target->string() + " is not a regular file; give an rc file with --rc");
  }
  if (!exists && edit == Edit::uninstall) return change;
  // Renaming over a read-only file would succeed (the folder is writable)
  // and silently defeat the user's protection, so refuse. access() says yes
  // to root for any file, hence the look at the write bits too.
  if (exists && (::access(target->c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0)) {
    return fail("refusing to edit the read-only file " + target->string() +
                "; make it writable (chmod u+w) or choose another file with --rc");
  }

  std::string old_bytes;
  if (exists) {
    auto read = read_file_bytes(*target);
    if (!read) return std::unexpected(read.error());
    old_bytes = std::move(*read);
  }
  auto edited = edit == Edit::install ? install_block(old_bytes, body) : remove_block(old_bytes);
  if (!edited) return fail(target->string() + ": " + edited.error().message);
  if (exists && *edited == old_bytes) return change;

  const auto mode =
      exists ? static_cast<fs::perms>(st.st_mode & 07777)
             : fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  if (exists) {
    fs::path backup = *target;
    backup += backup_suffix();
    if (auto ok = write_file_atomically(backup, old_bytes, mode); !ok) {
      return fail("cannot write the backup, so the rc file was left unchanged: " + ok.error().message);
    }
    // Same owner as the rc file (root editing a user's rc must not leave the
    // user a backup they cannot read or remove); best effort, it is a copy.
    if (::chown(backup.c_str(), st.st_uid, st.st_gid) != 0) {
      // Without the privilege the backup keeps our own owner, which is then
      // the rc file's owner anyway.
    }
    change.backup = backup;
  }
  std::optional<std::optional<std::string_view>> expected(std::in_place);
  if (exists) *expected = old_bytes;
  if (auto ok = write_file_atomically(*target, *edited, mode, expected); !ok) return std::unexpected(ok.error());
  change.changed = true;
  change.created = !exists;
  return change;
}

}  // namespace

std::string_view backup_suffix() {
  return ".torchfix-backup";
}

Expected<fs::path> resolve_rc_target(const fs::path& rc) {
  fs::path path = fs::absolute(rc);
  // Follow the chain by hand (not canonical()) so a dangling link still names
  // the file to create, and a loop is reported instead of spinning.
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
    const fs::path link = fs::read_symlink(path, ec);
    if (ec) return fail("cannot read the symlink " + path.string() + ": " + ec.message());
    path = link.is_absolute() ? link : path.parent_path() / link;
    path = path.lexically_normal();
  }
  return fail("too many levels of symlinks at " + rc.string() + "; point --rc at the real file");
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

Expected<void> write_file_atomically(const fs::path& target, std::string_view bytes, fs::perms mode,
                                     std::optional<std::optional<std::string_view>> expected) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string temp = (dir / ("." + target.filename().string() + ".torchfix-XXXXXX")).string();
  Fd fd(::mkstemp(temp.data()));
  if (fd.get() < 0) return fail(os_error("cannot create a temporary file in", dir, errno));
  const fs::path temp_path = temp;
  // Any failure below removes the temporary file; the target is untouched
  // until the rename, which is the single atomic step.
  const auto abort = [&](std::string message) {
    ::unlink(temp_path.c_str());
    return fail(std::move(message));
  };
  if (auto ok = write_all(fd.get(), bytes, temp_path); !ok) return abort(ok.error().message);
  if (::fchmod(fd.get(), static_cast<mode_t>(mode)) != 0) return abort(os_error("cannot chmod", temp_path, errno));
  struct stat old {};
  struct stat mine {};
  if (::stat(target.c_str(), &old) == 0 && ::fstat(fd.get(), &mine) == 0 &&
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

Expected<RcChange> install_into_rc(const fs::path& rc, std::string_view body) {
  return edit_rc(rc, Edit::install, body);
}

Expected<RcChange> uninstall_from_rc(const fs::path& rc) {
  return edit_rc(rc, Edit::uninstall, "");
}

}  // namespace torchfix::shellenv
