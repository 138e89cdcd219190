// binary/source_os.hpp on POSIX (source_win.cpp is the Windows side).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "binary/source_os.hpp"

namespace torchfix::binary {

Expected<RegularFile> open_regular_file(const std::filesystem::path& path) {
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return fail("cannot open '" + path.string() + "': " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const std::string why =
        S_ISDIR(info.st_mode) ? "is a directory" : "is not a regular file (a FIFO, socket or device)";
    ::close(fd);
    return fail("cannot read '" + path.string() + "': " + why);
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return RegularFile{fd, static_cast<std::uint64_t>(info.st_size)};
}

std::int64_t read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset) {
  for (;;) {
    const auto got = ::pread(fd, buffer, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    return got;
  }
}

std::uint64_t next_data_at(int fd, std::uint64_t offset, std::uint64_t size) {
  const off_t data = ::lseek(fd, static_cast<off_t>(offset), SEEK_DATA);
  if (data < 0) return errno == ENXIO ? size : offset;  // ENXIO: only a hole is left
  return std::max<std::uint64_t>(offset, static_cast<std::uint64_t>(data));
}

bool can_read(const std::filesystem::path& path, Access access) {
  return ::access(path.c_str(), access == Access::list ? R_OK | X_OK : R_OK) == 0;
}

}  // namespace torchfix::binary
