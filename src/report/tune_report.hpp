#pragma once
// Renders torchfix tune: human text (per GPU: smoke test, extensions,
// throughput with share of peak, conv2d autotuning, advice with the lines to
// apply) or JSON holding every number (docs/tune.md).

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "core/tune/tune.hpp"
#include "report/printer.hpp"

namespace torchfix {

/// Prints the measurements of every GPU in `report` and the advice for each.
void print_tune(const TuneReport& report, const std::vector<GpuPeak>& peaks, Printer& out);

/// Returns tune's JSON document: torch, settings, allocator, and per GPU the
/// smoke test, extensions, matmul rows (TFLOPS, published peak, share),
/// conv2d times and the advice (schema_version 1).
nlohmann::json tune_json(const TuneReport& report, const std::vector<GpuPeak>& peaks);

}  // namespace torchfix
