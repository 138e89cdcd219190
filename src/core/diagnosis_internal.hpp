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

/// Holds what is known about the images torch carries, and from where.
struct TorchImages {
  std::vector<Arch> images;                  // union (binaries, flags or table); for display
  const PackageKernels* binaries = nullptr;  // binary truth, when read from disk
  std::string source;                        // "read from torch's binaries", "torch._C._cuda_getArchFlags()", ...
};

/// Returns torch's images in `env`: from its binaries, else its arch flags,
/// else the official wheel table row of its variant on `platform` ("x86_64").
TorchImages torch_images(const PythonEnv& env, const Knowledge& knowledge, const std::string& platform);

/// Returns the verdicts of a snapshot: every check, with the fixes that are
/// not remedies (the resolver's remedies are attached by attach_remedies).
Diagnosis diagnose_verdicts(const Snapshot& snapshot, const Knowledge& knowledge);

/// Appends a problem for each GPU the driver cannot drive (per-generation
/// driver range, recipes/drivers.toml).
void diagnose_gpu_drivers(const Snapshot& snapshot, const Knowledge& knowledge, std::vector<Finding>& out);

/// Resolves the problems of each Python environment (and the machine's driver
/// problems) with the resolver, checks each winner by applying it and
/// diagnosing again, and puts the checked remedies first among the fixes of
/// the findings they fix; records them in `diagnosis.remedies`.
void attach_remedies(const Snapshot& snapshot, const Knowledge& knowledge, Diagnosis& diagnosis);

}  // namespace torchfix::detail
