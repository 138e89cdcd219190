#pragma once
// Lays out what a plan needs on disk before its first step: the files it
// carries (builder/plan.hpp PlanFile) and the nvcc stand-in's toolkit folder,
// whose entries link to the real toolkit's except bin/nvcc, which links to
// torchfix (run as nvcc it rewrites arch flags: cli/nvcc_wrap.cpp).

#include "builder/plan.hpp"
#include "core/base/error.hpp"

namespace torchfix {

/// Writes every PlanFile of `plan` (folders created, existing files
/// replaced) and, with plan.nvcc_wrap, (re)creates the stand-in folder: only
/// symbolic links inside it are removed or made, so a folder torchfix did not
/// make is never emptied. Errors: a file or link cannot be written, the real
/// toolkit folder cannot be read.
Expected<void> prepare_plan_files(const BuildPlan& plan);

}  // namespace torchfix
