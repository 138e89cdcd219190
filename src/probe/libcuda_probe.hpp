#pragma once
// Where the `-lcuda` of Triton's launcher build finds libcuda.so (Linux):
// Triton's own lookup (libcuda_dirs() of its NVIDIA backend) and the
// linker's folders, checked on the real files under a root.

#include <filesystem>
#include <string_view>

#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Records what Triton 3.0-3.5's libcuda_dirs() returns and what `gcc -lcuda
/// -L<those>` then finds, reading files under `root` (paths recorded as on
/// the machine). `ldconfig_listing` is the output of `/sbin/ldconfig -p`
/// (empty when it did not run). The lookup (triton/backends/nvidia/driver.py
/// of the 3.0-3.5 PyPI wheels): TRITON_LIBCUDA_PATH alone when set; else the
/// folders of the listing's lines that contain "libcuda.so.1"; else the
/// LD_LIBRARY_PATH folders holding libcuda.so.1. The link then searches
/// LIBRARY_PATH and ld's default folders (`ld --verbose` SEARCH_DIR, Debian
/// 12 binutils) for `machine` ("x86_64"). Never fails.
LibcudaLink probe_libcuda_link(const Environment& env, std::string_view ldconfig_listing, std::string_view machine,
                               const std::filesystem::path& root = "/");

}  // namespace torchfix
