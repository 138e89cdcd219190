// rc_file_os.hpp on POSIX: the lock is an flock(2) on a sidecar file, the
// rc file is looked at with stat(2) (mode, owner, links, identity), and a
// hard-linked one is rewritten with pwrite on the same inode.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "shellenv/rc_file.hpp"
#include "shellenv/rc_file_os.hpp"
#include "util/fd.hpp"

namespace torchfix::shellenv::os {

namespace fs = std::filesystem;
using util::os_error;
using util::detail::Fd;

// The lock file is never removed: removing it while another run waits on it
// would let a third run lock a new file and edit alongside. The lock lives
// exactly as long as the edit, so two torchfix runs editing one rc file take
// turns instead of the last writer silently undoing the first's edit.
Expected<util::FileLock> lock_rc(const fs::path& target) {
  const fs::path lock = lock_path(target);
  // O_NOFOLLOW: as root, a link planted at the lock's name must not make
  // torchfix create or open a file elsewhere. Read-only is enough for flock
  // and lets the rc file's owner open a lock file root created.
  // O_NONBLOCK: a FIFO planted there must not hang the edit; only a regular
  // file is a lock.
  const int raw = ::open(lock.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (raw < 0) return fail(os_error("cannot open the lock file", lock, errno));
  util::FileLock held(raw);  // closes it on every path out, which releases the flock
  struct stat own {};
  if (::fstat(raw, &own) != 0 || !S_ISREG(own.st_mode)) {
    return fail("the lock file " + lock.string() + " is not a regular file; remove it and run the command again");
  }
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && ::fchown(raw, st.st_uid, st.st_gid) != 0) {
    // Best effort: without the privilege the lock file is already ours.
  }
  const auto deadline = std::chrono::steady_clock::now() + rc_lock_wait();
  while (::flock(raw, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return fail(os_error("cannot lock", lock, errno));
    if (std::chrono::steady_clock::now() >= deadline) return fail(lock_timeout(target, lock));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return held;
}

Expected<RcFile> look_at_rc(const fs::path& target) {
  RcFile file;
  file.mode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT) return fail(os_error("cannot read", target, errno));
    return file;
  }
  if (!S_ISREG(st.st_mode)) return fail(target.string() + " is not a regular file; give an rc file with --rc");
  // Renaming over a read-only file would succeed (the folder is writable)
  // and silently defeat the user's protection, so refuse. access() says yes
  // to root for any file, hence the look at the write bits too.
  if (::access(target.c_str(), W_OK) != 0 || (st.st_mode & 0222) == 0) {
    return fail("refusing to edit the read-only file " + target.string() +
                "; make it writable (chmod u+w) or choose another file with --rc");
  }
  file.exists = true;
  file.mode = static_cast<fs::perms>(st.st_mode & 07777);
  file.owner = st.st_uid;
  file.group = st.st_gid;
  file.hard_links = st.st_nlink;
  file.device = st.st_dev;
  file.inode = st.st_ino;
  return file;
}

// The backup written before is the way back if this is cut short.
Expected<void> write_in_place(const fs::path& target, const RcFile& file, std::string_view bytes,
                              std::string_view expected) {
  const Fd fd(::open(target.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
  const int raw = fd.get();
  if (raw < 0) return fail(os_error("cannot open", target, errno));
  struct stat now {};
  auto current = read_file_bytes(target, rc_limits());
  if (::fstat(raw, &now) != 0 || now.st_ino != file.inode || now.st_dev != file.device || !current ||
      *current != expected) {
    return fail(target.string() + " changed while torchfix was editing it; nothing was written. Run the command again");
  }
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(raw, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(os_error("cannot write", target, errno));
    done += static_cast<std::size_t>(n);
  }
  if (::ftruncate(raw, static_cast<off_t>(bytes.size())) != 0) return fail(os_error("cannot truncate", target, errno));
  if (::fsync(raw) != 0) return fail(os_error("cannot fsync", target, errno));
  return {};
}

}  // namespace torchfix::shellenv::os
