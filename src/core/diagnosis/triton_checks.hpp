#pragma once
// torch.compile's floor and the Triton that torch pins, as findings with
// their fixes. Pure: reads the Situation (the GPUs, grouped) and the Knowledge only.

#include <vector>

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix::detail {

/// Adds for `env` (a torch environment):
///  - "triton.ptxas" (warning) per group of identical GPUs whose `a` arch the
///    installed Triton's bundled ptxas predates (recipes/triton-ptxas.toml),
///    unless its variable (TRITON_PTXAS_PATH) is set: torch runs, Triton
///    kernels do not. Fixes: an installed toolkit's ptxas, a newer Triton;
///  - "torch.compile-floor" (warning) per group of identical GPUs below compute capability 7.0:
///    Inductor's Triton backend refuses it ("Found <GPU> which is too old to be
///    supported by the triton GPU compiler ... CUDA Capability >= 7.0",
///    torch/_inductor); eager torch still runs. Fix: TORCH_COMPILE_DISABLE=1
///    and float16 for bfloat16 below 8.0 (torch.cuda.is_bf16_supported());
///  - "triton.pin" (warning): the installed Triton is not the one torch's
///    METADATA requires (Requires-Dist triton==X or pytorch-triton==X);
///  - "triton.untracked" (note) per group of identical GPUs of compute capability 10.0 or more
///    when the Triton release is older than every row of
///    recipes/triton-ptxas.toml: whether its ptxas knows the arch is unknown.
void check_triton_stack(const Situation& situation, const Knowledge& k, const PythonEnv& env,
                        std::vector<Finding>& out);

}  // namespace torchfix::detail
