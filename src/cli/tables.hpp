#pragma once
// Reads the tables a subcommand starts from: torchfix's data and its
// knowledge tables (load_inputs), and tune's recipes/gpu-peaks.toml (the NGC
// container table is knowledge: probe/knowledge_files.hpp).

#include <filesystem>
#include <vector>

#include "cli/context.hpp"
#include "core/facts/knowledge.hpp"
#include "core/tune/tune.hpp"
#include "probe/data_dir.hpp"

namespace torchfix::cli {

/// Holds what a subcommand reads before it probes: where torchfix's data is
/// (a data folder or the binary's copy) and the knowledge tables read from it.
struct Inputs {
  DataSource data;
  Knowledge knowledge;
};

/// Finds torchfix's data for ctx.env (find_data) and loads the knowledge
/// tables from it (load_knowledge). Errors say what is wrong with
/// TORCHFIX_DATA_DIR, or in which file and line.
Expected<Inputs> load_inputs(const Context& ctx);

/// Reads and parses recipes/gpu-peaks.toml of `data`. Errors name
/// the file and what is wrong (missing, bad TOML, a row without its source).
Expected<std::vector<GpuPeak>> load_gpu_peaks(const DataSource& data);

}  // namespace torchfix::cli
