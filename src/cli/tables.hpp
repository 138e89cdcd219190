#pragma once
// Reads the table of tune from the data folder or the binary: recipes/gpu-peaks.toml
// (the NGC container table is knowledge: probe/knowledge_files.hpp).

#include <filesystem>
#include <vector>

#include "core/tune/tune.hpp"
#include "probe/data_dir.hpp"

namespace torchfix::cli {

/// Reads and parses recipes/gpu-peaks.toml of `data`. Errors name
/// the file and what is wrong (missing, bad TOML, a row without its source).
Expected<std::vector<GpuPeak>> load_gpu_peaks(const DataSource& data);

}  // namespace torchfix::cli
