#pragma once
// doctor --run: kernels launched for real on every GPU (torch and each CUDA
// extension, through the measurement child) against the doctor's static
// verdicts. A disagreement means one of torchfix's rules is wrong. Pure.

#include <vector>

#include "core/diagnosis/diagnosis.hpp"
#include "core/tune/tune.hpp"

namespace torchfix {

/// Returns one finding per GPU and package launched: ok when the launch and
/// the static verdict ("torch.arch"/"package.arch" findings of `verdicts`)
/// agree; a problem titled "torchfix's rules disagree with a real launch"
/// (with the error and the verdict) when they do not; a problem when the
/// launch failed and no static verdict covered it; a warning when an
/// extension could not be imported (not a kernel question). `run` must be a
/// report of mode "run" or "tune" with status ok.
std::vector<Finding> kernel_run_findings(const Diagnosis& verdicts, const TuneReport& run);

}  // namespace torchfix
