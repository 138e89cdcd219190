#pragma once
// A read-only view of a whole file through mmap: pages are read from disk only
// when touched, so reading headers of a 1 GB library costs a few MB.

#include <cstddef>
#include <filesystem>
#include <span>

#include "core/error.hpp"

namespace torchfix::binary {

/// Maps a file privately (copy-on-write, never written back) for reading.
class MappedFile {
 public:
  /// Maps `path`; errors name the path and the system error (missing,
  /// unreadable, a directory). An empty file maps to an empty span.
  static Expected<MappedFile> open(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  /// Returns the file's bytes; valid while this object lives.
  std::span<std::byte> bytes() const { return {m_data, m_size}; }

 private:
  MappedFile(std::byte* data, std::size_t size) : m_data(data), m_size(size) {}
  std::byte* m_data = nullptr;
  std::size_t m_size = 0;
};

}  // namespace torchfix::binary
