#pragma once
// Helpers shared by the diagnosis files; not part of the public API.

#include <string>
#include <vector>

#include "core/diagnosis.hpp"

namespace torchfix::detail {

/// Returns "GPU 0 (NVIDIA H200, 9.0)" or "GPU 0 (9.0)".
std::string gpu_label(const Gpu& gpu);
/// Returns image names joined by ", " ("sm_80, sm_90, compute_90"), or "none".
std::string join_archs(const std::vector<Arch>& archs);
/// Returns the GPUs whose compute capability is known.
std::vector<const Gpu*> known_gpus(const Snapshot& snapshot);
/// Returns the toolkit an extension build would use: CUDA_HOME's, else the
/// one on PATH, else /usr/local/cuda's; nullptr when none.
const Toolkit* build_toolkit(const Snapshot& snapshot);
/// Returns true when `toolkit` can emit SASS that runs on `cc`.
bool toolkit_targets(const Toolkit& toolkit, ComputeCapability cc);

/// Appends the checks of each Python environment (torch and packages with kernels).
void diagnose_pythons(const Snapshot& snapshot, const Knowledge& knowledge, std::vector<Finding>& out);

}  // namespace torchfix::detail
