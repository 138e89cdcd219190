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

#include "core/knowledge.hpp"
#include "core/snapshot.hpp"
#include "shellenv/triton_ptxas.hpp"
#include "shellenv/variables.hpp"

namespace torchfix::shellenv {

/// Holds the build parallelism the snippet exports (MAX_JOBS, NVCC_THREADS).
struct JobsPlan {
  int max_jobs = 1;      // parallel compile jobs
  int nvcc_threads = 1;  // threads per nvcc (nvcc --threads)
  std::string reason;    // why these numbers, one line
};

/// Holds what select_variables needs besides the Snapshot.
struct SelectionInputs {
  const Knowledge* knowledge = nullptr;  // bounds, first nvcc per arch (required)
  std::vector<TritonPtxas> triton;       // recipes/triton-ptxas.toml rows
  std::optional<JobsPlan> jobs;          // from the build planner (plan_jobs); nullopt: no MAX_JOBS
};

/// Returns the index in snapshot.toolkits of the toolkit builds should use:
/// among toolkits with a known version, the one whose major matches torch's
/// CUDA (extension builds refuse a mismatch), then that accepts every GPU's
/// arch, then the newest. nullopt when there is no toolkit with a version.
std::optional<std::size_t> choose_toolkit(const Snapshot& snapshot, const Knowledge& knowledge);

/// Returns the variables for this machine, in snippet order, each with its
/// purpose and a one-line reason, keeping those `filter` wants:
/// CUDA_HOME, PATH (chosen toolkit); TORCH_CUDA_ARCH_LIST (probed GPUs);
/// MAX_JOBS, NVCC_THREADS (inputs.jobs); CUDAHOSTCXX, CC, CXX (default compiler
/// outside the toolkit's bounds and another one inside); LD_LIBRARY_PATH
/// (WSL2 whose libcuda does not load); CUDA_CACHE_MAXSIZE (a GPU reached by
/// torch only through PTX JIT, as diagnose() decides); TRITON_PTXAS_PATH or
/// TRITON_PTXAS_BLACKWELL_PATH (Triton's bundled ptxas too old for a GPU).
/// Never fails: a variable whose facts are unknown is left out.
std::vector<EnvVar> select_variables(const Snapshot& snapshot, const SelectionInputs& inputs, PurposeFilter filter);

}  // namespace torchfix::shellenv
