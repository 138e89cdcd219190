#pragma once
// A descriptor holder for POSIX code that opens files itself: util's reader
// and writer, and the rc editor's lock and in-place write (shellenv).

#include <unistd.h>

namespace torchfix::util::detail {

/// Closes a file descriptor on every path out of a function.
class Fd {
 public:
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (m_fd >= 0) ::close(m_fd);
  }
  /// Returns the descriptor (-1 when the open failed).
  int get() const { return m_fd; }
  /// Closes now and returns close's result, which matters after writes (NFS
  /// reports write failures at close).
  int close() {
    const int rc = ::close(m_fd);
    m_fd = -1;
    return rc;
  }

 private:
  int m_fd;
};

}  // namespace torchfix::util::detail
