#pragma once
// Finds CUDA binaries on disk: paths given by the user (files, directories,
// wheels) and the installed distributions of a Python site-packages.

#include <chrono>
#include <filesystem>
#include <vector>

#include "binary/reader.hpp"
#include "core/base/error.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix::binary {

/// Reads `path`: a wheel (members in place, see read_wheel), a directory
/// (recursively, without following symlinks: every ELF or fatbin file that
/// holds kernels or cannot be read, and wheels inside), or one file (returned
/// even when it holds no kernels). Errors: `path` does not exist or cannot be
/// listed; problems with single files go to FileKernels::error.
Expected<std::vector<FileKernels>> read_path(const std::filesystem::path& path);

/// Reads the kernels of every installed distribution in `site_packages`
/// (list_installed: RECORD, editable installs followed into their source
/// trees, conda-meta) with its Provenance. Returns one PackageKernels per
/// distribution with at least one CUDA-bearing library, one library that
/// links torch (DT_NEEDED libc10.so/libtorch*.so, kernels or not), or that
/// shares an import package with another distribution, sorted by name;
/// other libraries without fatbins are left out; a library that is listed but
/// missing or corrupt is kept with BinaryKernels::error set. Never throws;
/// reads only headers (mmap), never decompresses.
std::vector<PackageKernels> scan_site_packages(const std::filesystem::path& site_packages);

/// Holds what a time-bounded scan of a site-packages found.
struct SiteScan {
  std::vector<PackageKernels> packages;
  bool cut_short = false;  // the deadline came before every library was read
};

/// Scans as above until `deadline`, then stops (cut_short set): a slow
/// network file system or thousands of libraries must not hold the doctor.
/// FIFOs, sockets and devices listed in a RECORD are skipped, never opened
/// blocking. Libraries are read by up to 8 threads with the libelf-free
/// section reader (read_kernels_headers); the result does not depend on it.
SiteScan scan_site_packages(const std::filesystem::path& site_packages, std::chrono::steady_clock::time_point deadline);

}  // namespace torchfix::binary
