#pragma once
// The part of builder/fetch.hpp's inspect_source that needs no git: whether the
// folder is there and what its top level holds. Shared by the libgit2 build
// (fetch.cpp) and the build without it (fetch_unavailable.cpp).

#include <filesystem>

#include "builder/plan.hpp"

namespace torchfix {

/// Starts a SourceStatus for `dir`: state absent ("no folder yet") when it is
/// missing or empty, and returns false; otherwise fills top_files with its
/// top-level names and returns true (state is left for the caller). Never
/// throws: an unreadable folder lists what could be read.
bool list_source_folder(const std::filesystem::path& dir, SourceStatus& s);

}  // namespace torchfix
