#pragma once
// Chooses the variables of `torchfix env` from what the probes found (a
// Snapshot), the knowledge tables and the build planner's outputs. Pure: no
// files, no processes; every case is a unit test.
//
// Sources of the facts used here are cited next to each rule in
// selection.cpp and in docs/env.md.

#include <optional>
#include <string>
#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"
#include "core/situation/toolchain.hpp"
#include "shellenv/variables.hpp"

namespace torchfix::shellenv {

/// Holds what select_variables needs besides the Snapshot.
struct SelectionInputs {
  const Knowledge* knowledge = nullptr;  // bounds, first nvcc per arch, Triton's ptxas (required)
  std::optional<Toolchain> toolchain;    // decide_toolchain for this snapshot; nullopt: no build variables
};

/// Returns the variables for this machine, in snippet order, each with its
/// purpose and a one-line reason, keeping those `filter` wants:
/// from inputs.toolchain (the one decision doctor and build use too):
/// CUDA_HOME, PATH (its toolkit); TORCH_CUDA_ARCH_LIST (its arch list);
/// MAX_JOBS, NVCC_THREADS (its jobs); CUDAHOSTCXX, CXX, CC (its compiler, when
/// it is not the one a build would use anyway); LD_LIBRARY_PATH
/// (WSL2 whose libcuda does not load); CUDA_CACHE_MAXSIZE (a GPU reached by
/// torch only through PTX JIT, as diagnose() decides); TRITON_PTXAS_PATH or
/// TRITON_PTXAS_BLACKWELL_PATH (Triton's bundled ptxas too old for a GPU).
/// Never fails: a variable whose facts are unknown is left out.
std::vector<EnvVar> select_variables(const Snapshot& snapshot, const SelectionInputs& inputs, PurposeFilter filter);

}  // namespace torchfix::shellenv
