#include "binary/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace torchfix::binary {

ByteSource::ByteSource(std::span<const std::byte> memory, std::uint64_t origin)
    : m_memory(memory), m_origin(origin), m_size(origin + memory.size()) {}

Expected<ByteSource> ByteSource::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("cannot open '" + path.string() + "': " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    const std::string why = S_ISDIR(info.st_mode) ? "is a directory" : "is not a regular file";
    ::close(fd);
    return fail("cannot read '" + path.string() + "': " + why);
  }
  return ByteSource(fd, static_cast<std::uint64_t>(info.st_size));
}

ByteSource::ByteSource(ByteSource&& other) noexcept
    : m_memory(other.m_memory), m_origin(other.m_origin), m_fd(std::exchange(other.m_fd, -1)), m_size(other.m_size) {}

ByteSource& ByteSource::operator=(ByteSource&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_memory = other.m_memory;
    m_origin = other.m_origin;
    m_fd = std::exchange(other.m_fd, -1);
    m_size = other.m_size;
  }
  return *this;
}

ByteSource::~ByteSource() {
  if (m_fd >= 0) ::close(m_fd);
}

bool ByteSource::read(std::uint64_t offset, std::span<std::byte> out) const {
  if (offset > m_size || out.size() > m_size - offset) return false;
  if (m_fd < 0) {
    if (offset < m_origin) return false;
    if (!out.empty()) std::memcpy(out.data(), m_memory.data() + (offset - m_origin), out.size());
    return true;
  }
  std::size_t done = 0;
  while (done < out.size()) {
    const auto got = ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace torchfix::binary
