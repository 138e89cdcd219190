#pragma once
// Random-access reads from a file image: a span in memory (wheel members,
// fuzz inputs) or an open file (pread). Reading headers with pread instead of
// mmap keeps the resident set at what was read (mmap faults map 64 KiB
// around each touched header: 130 MB for libtorch_cuda.so instead of 10).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

#include "core/error.hpp"

namespace torchfix::binary {

/// Reads bytes at offsets of one file image; owns the file descriptor when
/// opened from a path.
class ByteSource {
 public:
  /// Wraps bytes in memory that hold the image from file offset `origin` on
  /// (reads below it fail); the bytes must outlive the source.
  explicit ByteSource(std::span<const std::byte> memory, std::uint64_t origin = 0);
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
  /// Copies `out.size()` bytes at `offset` into `out`; returns false when the
  /// range is not inside the image or the read fails.
  bool read(std::uint64_t offset, std::span<std::byte> out) const;

 private:
  ByteSource(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  std::span<const std::byte> m_memory;
  std::uint64_t m_origin = 0;
  int m_fd = -1;
  std::uint64_t m_size = 0;
};

}  // namespace torchfix::binary
