#pragma once
// Finds the folders of run-time data (recipes/, templates/).

#include <filesystem>

#include "core/error.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Returns the folder that holds `recipes/` and `templates/`: $TORCHFIX_DATA_DIR
/// when set, else the executable's folder (a build tree), else
/// <prefix>/share/torchfix next to <prefix>/bin. Errors list the places tried.
Expected<std::filesystem::path> find_data_dir(const Environment& env);

}  // namespace torchfix
