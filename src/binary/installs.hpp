#pragma once
// Lists the distributions installed in one site-packages and the shared
// libraries each one owns: RECORD installs, both editable layouts (an
// .egg-link; PEP 660's __editable__ .pth with its finder module; PEP 610's
// direct_url.json with dir_info.editable) followed into the source tree and
// its build outputs, and conda packages (PREFIX/conda-meta/*.json).

#include <filesystem>
#include <string>
#include <vector>

#include "core/situation/snapshot.hpp"

namespace torchfix::binary {

/// Names one shared library (.so, .so.N, .pyd, .dll) a distribution owns.
struct InstalledLibrary {
  std::filesystem::path path;
  std::string missing;  // non-empty: listed but absent (the error to record)
};

/// Holds one installed distribution before its libraries are read.
struct Installed {
  PackageKernels package;                   // name, version, provenance; no binaries yet
  std::vector<InstalledLibrary> libraries;  // in RECORD (or walk) order
};

/// Lists every distribution of `site_packages` with its provenance and
/// libraries, sorted by name; a library is owned by the first distribution
/// that lists it (RECORD, then editable trees, then conda-meta). Reads only
/// small text files (RECORD, METADATA, INSTALLER, direct_url.json, .pth,
/// finder modules, conda-meta records) and walks editable source trees
/// (hidden folders, __pycache__ and node_modules skipped, at most 200000
/// entries each). Never throws.
std::vector<Installed> list_installed(const std::filesystem::path& site_packages);

/// Returns true when `name` is a shared library or Windows module by its name.
bool is_shared_library_name(const std::string& name);

}  // namespace torchfix::binary
