// The reader and the symlink rule of util/file.hpp.

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/fd.hpp"
#include "util/file.hpp"

namespace torchfix::util {
namespace {

namespace fs = std::filesystem;

using detail::Fd;

std::string mib(std::size_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

// Waits up to 30 s for a pipe to have data (or its end); false on timeout.
bool wait_readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int n = ::poll(&p, 1, 30'000);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

// A FIFO nobody writes reads as empty at once (non-blocking); one whose
// writer sends nothing is given up after 30 s.
Expected<std::string> read_all(int fd, const fs::path& path, const ReadLimits& limits) {
  std::string bytes;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        if (!wait_readable(fd)) return fail("cannot read " + path.string() + ": nothing came through it for 30 s");
        continue;
      }
      return fail(os_error("cannot read", path, errno));
    }
    if (n == 0) return bytes;
    if (bytes.size() + static_cast<std::size_t>(n) > limits.max_bytes) {
      return fail(path.string() + " holds more than " + mib(limits.max_bytes) + ", more than any " +
                  std::string(limits.what) + " torchfix reads; give the right file");
    }
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string uid_text(uid_t uid) {
  return "uid " + std::to_string(uid);
}

}  // namespace

std::string os_error(std::string_view what, const fs::path& path, int err) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(err);
}

Expected<void> check_link_trust(const fs::path& link) {
  struct stat own {};
  if (::lstat(link.c_str(), &own) != 0 || !S_ISLNK(own.st_mode)) return {};
  if (own.st_uid == 0 || own.st_uid == ::geteuid()) return {};
  struct stat target {};
  if (::stat(link.c_str(), &target) == 0 && target.st_uid == own.st_uid) return {};
  const std::string points = ::stat(link.c_str(), &target) == 0 ? "to a file of " + uid_text(target.st_uid)
                                                                : std::string("to a file that does not exist");
  return fail("refusing to follow the symlink " + link.string() + ": it belongs to " + uid_text(own.st_uid) +
              " and points " + points + " (torchfix follows a link only when it is root's, yours, or its owner's " +
              "file's, like the kernel's protected_symlinks); give the real path");
}

Expected<fs::path> resolve_trusted(const fs::path& start) {
  std::error_code ec;
  fs::path path = fs::absolute(start, ec);
  if (ec) return fail("cannot resolve " + start.string() + ": " + ec.message());
  for (int hops = 0; hops < 40; ++hops) {
    const fs::path dir = fs::weakly_canonical(path.parent_path(), ec);
    if (ec) return fail("cannot resolve the folder " + path.parent_path().string() + ": " + ec.message());
    path = dir / path.filename();
    if (!fs::is_symlink(fs::symlink_status(path, ec))) return path;
    if (auto trusted = check_link_trust(path); !trusted) return std::unexpected(trusted.error());
    // /proc/self/fd/1 -> "pipe:[123]": only the kernel can open such a link.
    if (dir.string().starts_with("/proc/")) return path;
    const fs::path link = fs::read_symlink(path, ec);
    if (ec) return fail("cannot read the symlink " + path.string() + ": " + ec.message());
    path = link.is_absolute() ? link : dir / link;
  }
  return fail("too many levels of symlinks at " + start.string() + "; give the real path");
}

ReadLimits snapshot_limits() {
  return ReadLimits{8u << 20, Pipes::read, "snapshot"};
}

Expected<std::string> read_file_bytes(const fs::path& path, const ReadLimits& limits) {
  auto resolved = resolve_trusted(path);
  if (!resolved) return std::unexpected(resolved.error());
  Fd fd(::open(resolved->c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) return fail(os_error("cannot open", path, errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return fail(os_error("cannot stat", path, errno));
  const bool pipe = S_ISFIFO(st.st_mode) && limits.pipes == Pipes::read;
  if (!S_ISREG(st.st_mode) && !pipe) {
    return fail(path.string() + " is not a regular file (" +
                (S_ISDIR(st.st_mode) ? std::string("a folder") : std::string("a FIFO, socket or device")) +
                "); give a " + std::string(limits.what) + " file");
  }
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > limits.max_bytes) {
    return fail(path.string() + " is " + mib(static_cast<std::size_t>(st.st_size)) + ", more than any " +
                std::string(limits.what) + " torchfix reads (" + mib(limits.max_bytes) + "); give the right file");
  }
  return read_all(fd.get(), path, limits);
}

}  // namespace torchfix::util
