#pragma once
// Random-access reads from a file image: a span in memory (wheel members,
// fuzz inputs) or an open file (pread). Reading headers with pread instead of
// mmap keeps the resident set at what was read (mmap faults map 64 KiB
// around each touched header: 130 MB for libtorch_cuda.so instead of 10).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "core/base/error.hpp"

namespace torchfix::binary {

/// Returns the little-endian value of type T at byte `at` of `bytes` (every
/// format read here is little-endian on the machines that run CUDA). The
/// caller checks that sizeof(T) bytes are there; memcpy avoids unaligned loads.
template <typename T>
T load_le(std::span<const std::byte> bytes, std::size_t at) {
  T value{};
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

/// Holds an open regular file: its descriptor (close-on-exec; the caller
/// closes it) and its size in bytes.
struct RegularFile {
  int fd = -1;
  std::uint64_t size = 0;
};

/// Opens `path` for reading without blocking on the open (a FIFO or a device
/// never stalls it) and checks that it is a regular file. Errors name the
/// path and say why: missing, unreadable, a directory, or "not a regular file
/// (a FIFO, socket or device)".
Expected<RegularFile> open_regular_file(const std::filesystem::path& path);

/// Reads at most `max_bytes` of the regular file `path` (RECORD, METADATA):
/// errors as for open_regular_file, or a failed read.
Expected<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes);

/// Reads bytes at offsets of one file image; owns the file descriptor when
/// opened from a path.
class ByteSource {
 public:
  /// Wraps bytes in memory that hold the image from file offset `origin` on
  /// (reads below it fail); the bytes must outlive the source.
  explicit ByteSource(std::span<const std::byte> memory, std::uint64_t origin = 0);
  /// Reads through `reader` (a wheel member streamed from its archive), an
  /// image of `size` bytes; `reader` returns false when it cannot serve a range.
  ByteSource(std::uint64_t size, std::function<bool(std::uint64_t offset, std::span<std::byte> out)> reader);
  /// Opens `path` for reading. Errors name the path and the system error
  /// (missing, unreadable, not a regular file).
  static Expected<ByteSource> open(const std::filesystem::path& path);

  ByteSource(ByteSource&& other) noexcept;
  ByteSource& operator=(ByteSource&& other) noexcept;
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;
  ~ByteSource();

  /// Returns the size of the image, bytes.
  std::uint64_t size() const { return m_size; }
  /// Returns the file descriptor, or -1 for a source in memory.
  int fd() const { return m_fd; }
  /// Returns the first offset at or after `offset` that may hold a non-zero
  /// byte: past the holes of a sparse file (SEEK_DATA), else `offset` itself.
  std::uint64_t next_data(std::uint64_t offset) const;
  /// Copies `out.size()` bytes at `offset` into `out`; returns false when the
  /// range is not inside the image or the read fails.
  bool read(std::uint64_t offset, std::span<std::byte> out) const;

 private:
  ByteSource(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  std::span<const std::byte> m_memory;
  std::function<bool(std::uint64_t, std::span<std::byte>)> m_reader;
  std::uint64_t m_origin = 0;
  int m_fd = -1;
  std::uint64_t m_size = 0;
};

}  // namespace torchfix::binary
