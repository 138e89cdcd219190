#pragma once
// Renders torchfix tune --model: per GPU, the training step's throughput and
// peak memory under each setting (cumulative and alone), the largest batch
// that fits, and the advice (code, environment line, numerics) as text or
// JSON (docs/tune.md).

#include <nlohmann/json_fwd.hpp>

#include "core/tune/tune.hpp"
#include "report/printer.hpp"

namespace torchfix {

/// Prints the model table and advice of `gpu` (which holds a model result).
void print_tune_model(const TuneReport& report, const GpuRun& gpu, Printer& out);

/// Returns the JSON of `gpu`'s model result: runs with factors over the
/// defaults, skipped settings with why, the largest batch, and the advice.
nlohmann::json tune_model_json(const TuneReport& report, const GpuRun& gpu);

}  // namespace torchfix
