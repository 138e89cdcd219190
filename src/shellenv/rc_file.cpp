#include "shellenv/rc_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "shellenv/rc_edit.hpp"
#include "util/file.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;
using util::os_error;

enum class Edit { install, uninstall };

// Closes a file descriptor when it goes out of scope, which also releases
// an flock(2) held through it: the lock of an rc edit lives exactly as long
// as the edit, so two torchfix runs editing one rc file take turns instead
// of the last writer silently undoing the first's edit.
class Fd {
 public:
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }

 private:
  int m_fd;
};

// The lock file is never removed: removing it while another run waits on it
// would let a third run lock a new file and edit alongside.
Expected<Fd> lock_rc(const fs::path& target, const struct stat* st) {
  const fs::path lock = lock_path(target);
  // O_NOFOLLOW: as root, a link planted at the lock's name must not make
  // torchfix create or open a file elsewhere. Read-only is enough for flock
  // and lets the rc file's owner open a lock file root created.
  // O_NONBLOCK: a FIFO planted there must not hang the edit; only a regular
  // file is a lock.
  const int fd = ::open(lock.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0) return fail(os_error("cannot open the lock file", lock, errno));
  Fd held(fd);
  struct stat own {};
  if (::fstat(fd, &own) != 0 || !S_ISREG(own.st_mode)) {
    return fail("the lock file " + lock.string() + " is not a regular file; remove it and run the command again");
  }
  if (st && ::fchown(fd, st->st_uid, st->st_gid) != 0) {
    // Best effort: without the privilege the lock file is already ours.
  }
  const auto deadline = std::chrono::steady_clock::now() + rc_lock_wait();
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return fail(os_error("cannot lock", lock, errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail("another torchfix is still editing " + target.string() + " (it holds the lock " + lock.string() +
                  "); nothing was written. Run the command again when it is done");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return held;
}

// Removes temporary files a SIGKILLed run left next to the rc file or its
// backup (".NAME.torchfix-XXXXXX", util/file.hpp): under the lock no other
// torchfix is writing them. Only plain files of exactly that shape go.
void remove_stale_temps(const fs::path& target) {
  const std::string name = target.filename().string();
  const std::string marker(util::temp_file_marker());
  const std::string prefixes[] = {"." + name + marker, "." + name + std::string(backup_suffix()) + marker};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string file = entry.path().filename().string();
    for (const std::string& prefix : prefixes) {
      if (!file.starts_with(prefix) || file.size() != prefix.size() + 6) continue;
      const std::string_view random = std::string_view(file).substr(prefix.size());
      if (!std::ranges::all_of(random, [](char c) { return std::isalnum(static_cast<unsigned char>(c)); })) continue;
      std::error_code type_ec;
      if (!entry.is_symlink(type_ec) && entry.is_regular_file(type_ec)) fs::remove(entry.path(), type_ec);
    }
  }
}

// The block's lines without comments and blank lines: what a shell runs.
std::vector<std::string> commands_of(std::string_view body) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < body.size()) {
    std::size_t end = body.find('\n', start);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    const std::size_t first = line.find_first_not_of(" \t");
    if (first != std::string_view::npos && line[first] != '#') out.emplace_back(line);
    start = end + 1;
  }
  return out;
}

// A hard-linked rc file is rewritten in place, so every name keeps seeing
// one file; the backup written before is the way back if this is cut short.
Expected<void> write_in_place(const fs::path& target, const struct stat& st, std::string_view bytes,
                              std::string_view expected) {
  const int fd = ::open(target.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return fail(os_error("cannot open", target, errno));
  Fd closer(fd);
  struct stat now {};
  if (::fstat(fd, &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
    return fail(target.string() + " changed while torchfix was editing it; nothing was written. Run the command again");
  }
  auto current = read_file_bytes(target, rc_limits());
  if (!current || *current != expected) {
    return fail(target.string() + " changed while torchfix was editing it; nothing was written. Run the command again");
  }
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(os_error("cannot write", target, errno));
    done += static_cast<std::size_t>(n);
  }
  if (::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) return fail(os_error("cannot truncate", target, errno));
  if (::fsync(fd) != 0) return fail(os_error("cannot fsync", target, errno));
  return {};
}

Expected<RcChange> edit_rc(const fs::path& rc, Edit edit, std::string_view body) {
  auto target = resolve_rc_target(rc);
  if (!target) return std::unexpected(target.error());
  RcChange change;
  change.target = *target;

  struct stat before {};
  const bool existed = ::stat(target->c_str(), &before) == 0;
  auto lock = lock_rc(*target, existed ? &before : nullptr);
  if (!lock) return std::unexpected(lock.error());
  remove_stale_temps(*target);

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
    auto read = read_file_bytes(*target, rc_limits());
    if (!read) return std::unexpected(read.error());
    old_bytes = std::move(*read);
  }
  auto edited = edit == Edit::install ? install_block(old_bytes, body) : remove_block(old_bytes);
  if (!edited) return fail(target->string() + ": " + edited.error().message);
  if (exists && *edited == old_bytes) return change;
  // A block whose commands are the same is up to date: its comments hold
  // live facts (the memory behind MAX_JOBS, the torchfix version) that
  // differ from run to run and must not rewrite the file and its backup.
  if (exists && edit == Edit::install) {
    auto old_body = block_body(old_bytes);
    if (old_body && *old_body && commands_of(**old_body) == commands_of(body)) return change;
  }

  const auto mode =
      exists ? static_cast<fs::perms>(st.st_mode & 07777)
             : fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  if (exists) {
    fs::path backup = *target;
    backup += backup_suffix();
    // Keep a backup that holds the same lines of the user's (outside the
    // block): it may be the file as it was before torchfix's first edit,
    // the one copy worth having.
    auto kept = read_file_bytes(backup, rc_limits());
    auto kept_lines = kept ? remove_block(*kept) : Expected<std::string>(fail("no backup"));
    auto old_lines = remove_block(old_bytes);
    const bool keep = kept_lines && old_lines && *kept_lines == *old_lines;
    // A new backup gets the rc file's owner (root editing a user's rc must
    // not leave the user a backup they cannot read or remove): fchown on the
    // descriptor written, never a chown by path, which would follow a link
    // planted at the backup's name. A kept backup is left as it is.
    if (!keep) {
      util::WriteOptions options;
      options.mode = mode;
      options.owner = st.st_uid;
      options.group = st.st_gid;
      if (auto ok = util::write_file(backup, old_bytes, options); !ok) {
        return fail("cannot write the backup, so the rc file was left unchanged: " + ok.error().message);
      }
    }
    change.backup = backup;
  }
  if (exists && st.st_nlink > 1) {
    if (auto ok = write_in_place(*target, st, *edited, old_bytes); !ok) return std::unexpected(ok.error());
    change.hard_links = static_cast<int>(st.st_nlink);
    change.changed = true;
    return change;
  }
  std::optional<std::optional<std::string_view>> expected(std::in_place);
  if (exists) *expected = old_bytes;
  if (auto ok = write_file_atomically(*target, *edited, mode, expected); !ok) return std::unexpected(ok.error());
  change.changed = true;
  change.created = !exists;
  return change;
}

}  // namespace

Expected<RcChange> install_into_rc(const fs::path& rc, std::string_view body) {
  return edit_rc(rc, Edit::install, body);
}

Expected<RcChange> uninstall_from_rc(const fs::path& rc) {
  return edit_rc(rc, Edit::uninstall, "");
}

}  // namespace torchfix::shellenv
