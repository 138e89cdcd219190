#pragma once
// Wheels (.whl, zip archives) read in place through libarchive: members are
// streamed from the archive one at a time, never unpacked to disk.

#include <cstdint>
#include <filesystem>
#include <vector>

#include "binary/reader.hpp"
#include "core/base/error.hpp"

namespace torchfix::binary {

/// Bounds the memory read_wheel uses, bytes; tests lower them to make small
/// members take the streamed path.
struct WheelLimits {
  std::uint64_t in_memory_max = 8u << 20;  // members up to this size are read whole
  std::size_t window = 1u << 20;           // bytes kept behind a streamed member's read position
};

/// Reads every ELF or fatbin member of the wheel at `wheel` (any zip) and
/// returns one FileKernels per member that holds kernels or could not be read
/// (path "wheel.whl!member"); members without kernels are left out. Members
/// up to 8 MiB are read whole; larger ones are streamed, headers only, in at
/// most a few passes, so memory stays near 16 MiB whatever the wheel (a
/// member's declared size is never allocated). Errors: `wheel` is not a
/// regular file (a FIFO is refused without blocking), the archive cannot be
/// opened or its directory is corrupt (per-member problems go to
/// FileKernels::error).
Expected<std::vector<FileKernels>> read_wheel(const std::filesystem::path& wheel, const WheelLimits& limits = {});

/// Returns true when `path` names a wheel or other zip the reader opens as an archive.
bool is_wheel_path(const std::filesystem::path& path);

}  // namespace torchfix::binary
