#pragma once
// The operating system's side of binary/source.hpp, internal to src/binary:
// positioned reads of an open file, hole skipping and access checks, from
// source_posix.cpp (pread, SEEK_DATA, access) or source_win.cpp (ReadFile
// at an offset; no holes are skipped; every existing file counts as
// readable until it is opened).

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "binary/source.hpp"

namespace torchfix::binary {

/// Reads up to `size` bytes at `offset` of the open file `fd` into `buffer`
/// without moving its position; returns the count, 0 at the end, -1 on an
/// error.
std::int64_t read_at(int fd, void* buffer, std::size_t size, std::uint64_t offset);

/// Returns the first offset >= `offset` holding data in the open file `fd`
/// of `size` bytes: `size` when only a hole is left, `offset` when unknown.
std::uint64_t next_data_at(int fd, std::uint64_t offset, std::uint64_t size);

/// Says what a caller wants of a path: read a file, or list a folder.
enum class Access { read, list };

/// Says whether this user may read the file (or list the folder) `path`.
bool can_read(const std::filesystem::path& path, Access access);

}  // namespace torchfix::binary
