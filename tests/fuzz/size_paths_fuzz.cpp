// libFuzzer target for the size paths: every length, count and offset a file
// declares, where a few input bytes claim gigabytes. The first byte picks
//   0: a sparse image: bytes 1-5 give its size (up to 1 TiB), the rest its
//      first bytes, zeros after (a real sparse file: read with libelf, and
//      with the libelf-free reader through a callback);
//   1: a wheel (zip) read through libarchive, whole and streamed.
// Any allocation over -malloc_limit_mb (default: -rss_limit_mb, 2048 in
// .ci/fuzz) is a finding: sizes must be capped by what the bytes hold.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "binary/reader.hpp"
#include "binary/wheel.hpp"

namespace {

// Returns a memory file holding `data`, `size` bytes long (a hole after the
// data), or -1.
int memory_file(const std::uint8_t* data, std::size_t length, std::uint64_t size) {
  const int fd = ::memfd_create("fuzz", MFD_CLOEXEC);
  if (fd < 0) return -1;
  if (::write(fd, data, length) != static_cast<ssize_t>(length) || ::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string fd_path(int fd) {
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace torchfix::binary;
  if (size < 1) return 0;
  const std::uint8_t mode = data[0] % 2;
  if (mode == 0) {
    if (size < 6) return 0;
    std::uint64_t declared = 0;
    for (int i = 0; i < 5; ++i) declared |= std::uint64_t{data[1 + i]} << (8 * i);
    const std::uint8_t* image = data + 6;
    const std::size_t length = size - 6;
    declared = std::max<std::uint64_t>(declared, length);
    const int fd = memory_file(image, length, declared);
    if (fd < 0) return 0;
    (void)read_kernels_file(fd_path(fd));
    ::close(fd);
    // The libelf-free reader through a callback (how wheel members are read):
    // no holes to skip there, so only images a stream could plausibly hold.
    if (declared > (64u << 20)) return 0;
    const ByteSource sparse(declared, [&](std::uint64_t offset, std::span<std::byte> out) {
      std::memset(out.data(), 0, out.size());
      if (offset < length) {
        std::memcpy(out.data(), image + offset, std::min<std::uint64_t>(out.size(), length - offset));
      }
      return true;
    });
    (void)read_kernels_headers(sparse);
    return 0;
  }
  const int fd = memory_file(data + 1, size - 1, size - 1);
  if (fd < 0) return 0;
  (void)read_wheel(fd_path(fd));
  (void)read_wheel(fd_path(fd), WheelLimits{.in_memory_max = 0, .window = 4096});
  ::close(fd);
  return 0;
}
