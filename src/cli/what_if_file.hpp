#pragma once
// A what-if file: the doctor's --gpu/--driver/--torch/--platform values as
// JSON, named by TORCHFIX_WHAT_IF, so each node of a cluster (or of the test
// cluster, one file per node) can answer with its own values under one
// command line: {"gpus": ["V100"], "driver": "535.104.05", "torch": "2.9.1+cu130",
// "platform": "x86_64"}; every key optional.

#include <string>

#include "cli/context.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix::cli {

/// Adds the values of the file named by TORCHFIX_WHAT_IF in `env` to
/// `what_if` where the command line gave none. Nothing happens when the
/// variable is unset or empty. Errors: the file cannot be read, is not JSON,
/// or a key has the wrong type (the message names the file and the key).
Expected<void> merge_what_if_file(const Environment& env, WhatIf& what_if);

}  // namespace torchfix::cli
