#pragma once
// Runs the measurement child (templates/tune_child.py) in the user's Python
// through the process runner, with a timeout and a live progress line; shared
// by `torchfix tune` and `torchfix doctor --run`.

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "core/situation/snapshot.hpp"
#include "core/tune/tune.hpp"
#include "probe/data_dir.hpp"

namespace torchfix::cli {

/// Says what the child does: measure (tune), only launch kernels (doctor
/// --run), or time a model's training step (tune --model).
enum class ChildMode { tune, run, model };

/// Describes a tune --model run: which model, how long, and per compute
/// capability ("9.0") the setting ids core/tune_model chose for it.
struct ModelRequest {
  TuneModel model = TuneModel::resnet50;
  int batch = 0;  // 0: the model's default
  int steps = 20;
  int warmup = 5;
  bool find_batch = true;
  int batch_limit = 8192;
  std::vector<std::pair<std::string, std::vector<std::string>>> settings;
};

/// Describes one run of the child.
struct ChildRequest {
  std::string python;  // interpreter
  ChildMode mode = ChildMode::tune;
  bool quick = false;                 // smaller matrices, shorter timing
  std::vector<int> gpu_indexes;       // empty: every GPU torch sees
  std::vector<std::string> packages;  // distributions whose kernels are launched
  ModelRequest model;                 // ChildMode::model only
  std::chrono::milliseconds timeout{120'000};
};

/// Runs the child (templates/tune_child.py with kernel_load.py and
/// tune_model.py of `data`, written into the run's private mkdtemp folder,
/// removed after it) and parses its JSON; while it runs, the progress it
/// writes is shown on the status line (smart terminals). Errors: a script
/// cannot be read or written, the interpreter cannot start, the child timed
/// out, crashed or printed no valid report (each with the last progress step
/// and stderr line).
Expected<TuneReport> run_measure_child(const ChildRequest& request, const DataSource& data, Context& ctx,
                                       const std::string& label);

/// Returns the distributions of `env` whose kernels the child should launch
/// or load: the known CUDA packages the probe listed and every package whose
/// binaries it read (a user's own or editable extension), once each; not
/// torch itself nor CUDA's own nvidia-* libraries.
std::vector<std::string> packages_to_launch(const PythonEnv& env);

}  // namespace torchfix::cli
