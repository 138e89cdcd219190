#pragma once
// Wheels (.whl, zip archives) read in place through libarchive: members are
// streamed from the archive into memory one at a time, never unpacked to disk.

#include <filesystem>
#include <vector>

#include "binary/reader.hpp"
#include "core/error.hpp"

namespace torchfix::binary {

/// Caps the size of one wheel member read into memory, bytes (4 GiB; the
/// largest CUDA library in a torch wheel is about 1.5 GB).
inline constexpr std::uint64_t k_wheel_member_max_bytes = 4ull << 30;

/// Reads every ELF or fatbin member of the wheel at `wheel` (any zip) and
/// returns one FileKernels per member that holds kernels or could not be read
/// (path "wheel.whl!member"); members without kernels are left out. Peak
/// memory is the size of the largest such member. Errors: the archive itself
/// cannot be opened or its directory is corrupt (per-member problems go to
/// FileKernels::error).
Expected<std::vector<FileKernels>> read_wheel(const std::filesystem::path& wheel);

/// Returns true when `path` names a wheel or other zip the reader opens as an archive.
bool is_wheel_path(const std::filesystem::path& path);

}  // namespace torchfix::binary
