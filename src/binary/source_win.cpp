// binary/source_os.hpp on Windows (source_posix.cpp is the POSIX side): C
// runtime descriptors opened with _wopen in binary mode, positioned reads
// through their HANDLE with an OVERLAPPED offset.
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#include <windows.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "binary/source_os.hpp"

namespace torchfix::binary {

Expected<RegularFile> open_regular_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return fail("cannot read '" + path.string() + "': is a directory");
  const int fd = ::_wopen(path.c_str(), _O_RDONLY | _O_BINARY | _O_NOINHERIT);
  if (fd < 0) return fail("cannot open '" + path.string() + "': " + std::strerror(errno));
  struct _stat64 info {};
  if (::_fstat64(fd, &info) != 0 || !(info.st_mode & _S_IFREG)) {
    ::_close(fd);
    return fail("cannot read '" + path.string() + "': is not a regular file (a pipe or device)");
  }
  return RegularFile{fd, static_cast<std::uint64_t>(info.st_size)};
}

std::int64_t read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset) {
  const auto handle = reinterpret_cast<HANDLE>(::_get_osfhandle(fd));
  if (handle == INVALID_HANDLE_VALUE) return -1;
  OVERLAPPED at{};
  at.Offset = static_cast<DWORD>(offset & 0xffffffffu);
  at.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD got = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(size, 1u << 30));
  if (!ReadFile(handle, buffer, want, &got, &at)) return GetLastError() == ERROR_HANDLE_EOF ? 0 : -1;
  return got;
}

std::uint64_t next_data_at(int /*fd*/, std::uint64_t offset, std::uint64_t /*size*/) {
  return offset;  // sparse files are rare on NTFS and FSCTL_QUERY_ALLOCATED_RANGES is not used yet
}

bool can_read(const std::filesystem::path& path, Access /*access*/) {
  return GetFileAttributesW(path.c_str()) != INVALID_FILE_ATTRIBUTES;  // ACLs are checked when it is opened
}

}  // namespace torchfix::binary
