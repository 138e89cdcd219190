#pragma once
// What the doctor says about NVIDIA NGC PyTorch containers: the what-if
// verdict on one image (--container) and the notes for a machine that runs
// inside an NGC image. The container as a fix is a resolver candidate
// (CandidateKind::container, core/resolver/resolver_container.cpp). Pure: findings
// from the Situation (derived once by the caller) and the tables.

#include <vector>

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/ngc.hpp"

namespace torchfix {

/// Returns the finding on `image` for this machine's GPUs and driver
/// (`doctor --container`): ok when it runs, a problem with the reason per GPU
/// and the tag that would run (or the driver it needs) when it does not.
/// Errors: a tag that is not in recipes/ngc-pytorch.toml (names the known range).
Expected<Finding> container_finding(const Situation& situation, const Knowledge& knowledge, const NgcTable& table,
                                    const NgcImageRef& image);

/// Adds the notes of a machine running inside an NGC PyTorch image
/// (NVIDIA_PYTORCH_VERSION in the snapshot's environment): which release,
/// that its pip constraint file pins torch (so a `pip install torch` fix
/// will not apply; the container upgrade is offered instead), and that fp32
/// matmuls run as TF32 (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1). Does nothing
/// outside NGC images.
void add_inside_ngc_notes(Diagnosis& diagnosis, const Situation& situation, const Knowledge& knowledge,
                          const NgcTable& table);

}  // namespace torchfix
