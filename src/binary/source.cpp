#include "binary/source.hpp"

#include <unistd.h>  // read, close (MinGW has them too)

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "binary/source_os.hpp"

namespace torchfix::binary {

ByteSource::ByteSource(std::span<const std::byte> memory, std::uint64_t origin)
    : m_memory(memory), m_origin(origin), m_size(origin + memory.size()) {}

ByteSource::ByteSource(std::uint64_t size, std::function<bool(std::uint64_t, std::span<std::byte>)> reader)
    : m_reader(std::move(reader)), m_size(size) {}

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
  return next_data_at(m_fd, offset, m_size);
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
    const auto got = read_at(m_fd, out.data() + done, out.size() - done, offset + done);
    if (got <= 0) return false;
    done += static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace torchfix::binary
