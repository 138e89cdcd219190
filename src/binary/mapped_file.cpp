#include "binary/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace torchfix::binary {
namespace {

std::string system_error(const std::filesystem::path& path, const char* what) {
  return "cannot " + std::string(what) + " '" + path.string() + "': " + std::strerror(errno);
}

}  // namespace

Expected<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(system_error(path, "open"));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    auto message = system_error(path, "stat");
    ::close(fd);
    return fail(message);
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return fail("'" + path.string() + "' is not a regular file");
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  if (size == 0) {
    ::close(fd);
    return MappedFile(nullptr, 0);
  }
  // PROT_WRITE on a private mapping: libelf may convert data in place; the
  // file itself is never modified.
  void* data = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  auto message = data == MAP_FAILED ? system_error(path, "mmap") : std::string();
  ::close(fd);
  if (data == MAP_FAILED) return fail(message);
  // Headers are scattered through the file: read-ahead would pull in the
  // compressed payloads between them.
  ::madvise(data, size, MADV_RANDOM);
  return MappedFile(static_cast<std::byte*>(data), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (m_data) ::munmap(m_data, m_size);
    m_data = std::exchange(other.m_data, nullptr);
    m_size = std::exchange(other.m_size, 0);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (m_data) ::munmap(m_data, m_size);
}

}  // namespace torchfix::binary
