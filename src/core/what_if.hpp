#pragma once
// What-if mode: replace probed facts with values the user gives, so a user can
// ask before buying a GPU or upgrading a driver or torch.

#include <optional>
#include <string>
#include <vector>

#include "core/knowledge.hpp"
#include "core/snapshot.hpp"

namespace torchfix {

/// Holds the values given on the command line; empty ones change nothing.
struct WhatIf {
  std::vector<std::string> gpus;       // --gpu: product name, sm_XY or X.Y (repeatable)
  std::optional<std::string> driver;   // --driver: "570.124.04", or the CUDA it supports ("12.8")
  std::optional<std::string> torch;    // --torch: "2.6.0+cu126", "2.9.1+cpu", "2.5.1+rocm6.2"
  std::optional<std::string> machine;  // --platform: "x86_64" or "aarch64"
};

/// Applies `what_if` to `snapshot`: --gpu replaces the GPUs; --driver sets the
/// driver version and the CUDA it supports (from recipes/toolkits.toml);
/// --torch replaces torch in the first Python environment (or adds a
/// "what-if" one), with arch flags from the official wheel table when known.
/// Errors: an unknown GPU name, a value that is not a version, a torch
/// version without a "+variant" label.
Expected<void> apply_what_if(Snapshot& snapshot, const WhatIf& what_if, const Knowledge& knowledge);

}  // namespace torchfix
