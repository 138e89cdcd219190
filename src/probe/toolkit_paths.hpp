#pragma once
// Where probe_toolkits looks for nvcc, per platform: toolkit_paths.cpp
// (Linux) and toolkit_paths_win.cpp (Windows). Internal to src/probe.

#include <string>
#include <utility>
#include <vector>

#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Lists candidate nvcc paths with their origin ("PATH", "CUDA_HOME",
/// "/usr/local/cuda", "CUDA_PATH_V12_8", ...), most specific first: what the
/// user pointed at wins over what merely exists on disk. Paths may not
/// exist; the caller keeps the executable ones. `root` prefixes the fixed
/// Linux folders (tests); Windows reads its folders from `env`.
std::vector<std::pair<std::string, std::string>> nvcc_candidates(const Environment& env,
                                                                 const std::vector<PythonEnv>& pythons,
                                                                 const std::string& root);

}  // namespace torchfix
