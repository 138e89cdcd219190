#include "binary/source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace torchfix::binary {

ByteSource::ByteSource(std::span<const std::byte> memory, std::uint64_t origin)
    : m_memory(memory), m_origin(origin), m_size(origin + memory.size()) {}

ByteSource::ByteSource(std::uint64_t size, std::function<bool(std::uint64_t, std::span<std::byte>)> reader)
    : m_reader(std::move(reader)), m_size(size) {}

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

Expected<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes) {
  TF_TRY(file, open_regular_file(path));
  std::string text;
  text.resize(static_cast<std::size_t>(std::min<std::uint64_t>(file.size, max_bytes)));
  std::size_t done = 0;
  while (done < text.size()) {
    const auto got = ::read(file.fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(file.fd);
      return fail("cannot read '" + path.string() + "': " + std::strerror(error));
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  ::close(file.fd);
  text.resize(done);
  return text;
}

Expected<ByteSource> ByteSource::open(const std::filesystem::path& path) {
  TF_TRY(file, open_regular_file(path));
  return ByteSource(file.fd, file.size);
}

ByteSource::ByteSource(ByteSource&& other) noexcept
    : m_memory(other.m_memory),
      m_reader(std::move(other.m_reader)),
      m_origin(other.m_origin),
      m_fd(std::exchange(other.m_fd, -1)),
      m_size(other.m_size) {}

ByteSource& ByteSource::operator=(ByteSource&& other) noexcept {
  if (this != &other) {
    if (m_fd >= 0) ::close(m_fd);
    m_memory = other.m_memory;
    m_reader = std::move(other.m_reader);
    m_origin = other.m_origin;
    m_fd = std::exchange(other.m_fd, -1);
    m_size = other.m_size;
  }
  return *this;
}

ByteSource::~ByteSource() {
  if (m_fd >= 0) ::close(m_fd);
}

std::uint64_t ByteSource::next_data(std::uint64_t offset) const {
  if (m_fd < 0 || offset >= m_size) return offset;
  const off_t data = ::lseek(m_fd, static_cast<off_t>(offset), SEEK_DATA);
  if (data < 0) return errno == ENXIO ? m_size : offset;  // ENXIO: only a hole is left
  return std::max<std::uint64_t>(offset, static_cast<std::uint64_t>(data));
}

bool ByteSource::read(std::uint64_t offset, std::span<std::byte> out) const {
  if (offset > m_size || out.size() > m_size - offset) return false;
  if (out.empty()) return true;  // nothing to read: no reader sees an empty (null) span
  if (m_reader) return m_reader(offset, out);
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
