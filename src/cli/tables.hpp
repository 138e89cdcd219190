#pragma once
// Reads the tables of tune and the container fix from the data folder:
// recipes/ngc-pytorch.toml and recipes/gpu-peaks.toml.

#include <filesystem>
#include <vector>

#include "core/ngc_table.hpp"
#include "core/tune.hpp"

namespace torchfix::cli {

/// Reads and parses recipes/ngc-pytorch.toml under `data_dir`. Errors name
/// the file and what is wrong (missing, bad TOML, a row without its source).
Expected<NgcTable> load_ngc_table(const std::filesystem::path& data_dir);

/// Reads and parses recipes/gpu-peaks.toml under `data_dir`; errors as above.
Expected<std::vector<GpuPeak>> load_gpu_peaks(const std::filesystem::path& data_dir);

}  // namespace torchfix::cli
