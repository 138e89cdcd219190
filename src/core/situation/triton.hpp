#pragma once
// Triton's bundled ptxas against a GPU: Triton assembles every kernel for the
// GPU's exact arch (sm_121a on GB10, sm_110a on Jetson Thor) with the ptxas
// in its wheel (recipes/triton-ptxas.toml), so a ptxas older than the first
// CUDA that knows that arch fails with "ptxas fatal : Value 'sm_121a' is not
// defined for option 'gpu-name'". One decision, used by the doctor and by
// `torchfix env` (TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Describes a Triton whose bundled ptxas cannot assemble for a GPU.
struct TritonPtxasGap {
  std::string triton;               // installed Triton version, "3.5.0"
  Version bundled;                  // the ptxas it would use for the GPU, "12.8.93"
  Version needed;                   // first CUDA whose ptxas knows the GPU's arch, "12.9"
  std::string target;               // the --gpu-name Triton passes: "sm_121a" ("sm_120" before 3.3)
  std::string variable;             // "TRITON_PTXAS_PATH" or "TRITON_PTXAS_BLACKWELL_PATH" (archs >= 10.0 on 3.6+)
  bool exportable = true;           // `variable` is a shell name (3.3's TRITON_PTXAS-BLACKWELL_PATH is not)
  std::optional<Version> cuda_max;  // newest CUDA whose ptxas this Triton can drive; nullopt: no limit known
  std::optional<Version> fixed_in;  // first tracked Triton release whose ptxas knows it; nullopt: none yet
  std::optional<Version> fixed_in_torch;  // the torch release that requires fixed_in, when tracked
  std::string source;                     // the table row's source

  /// Returns true when pointing `variable` at a ptxas of CUDA >= needed can
  /// close the gap: the name can be exported and this Triton can drive that ptxas.
  bool closable_by_variable() const;
};

/// Returns the Triton version installed in `env` ("triton" or
/// "pytorch-triton" distribution), nullopt when none is.
std::optional<std::string> triton_version(const PythonEnv& env);

/// Returns the gap between Triton `triton_version`'s bundled ptxas and GPU
/// `gpu`, nullopt when the ptxas knows the arch or the Triton version is not
/// in the table. The arch's first CUDA comes from recipes/toolkits.toml rows
/// naming exactly sm_XY.
std::optional<TritonPtxasGap> triton_ptxas_gap(const Knowledge& knowledge, std::string_view triton_version,
                                               ComputeCapability gpu);

/// Names an installed toolkit's ptxas that closes a gap.
struct PtxasChoice {
  const Toolkit* toolkit = nullptr;  // points into the toolkits searched
  std::string path;                  // <toolkit root>/bin/ptxas
};

/// Returns the newest of `toolkits` whose ptxas knows the gap's arch and that
/// the Triton can drive (gap.needed <= CUDA <= gap.cuda_max, nvcc in a bin/
/// folder), nullopt when none does or the gap is not closable by its variable.
std::optional<PtxasChoice> ptxas_for(const TritonPtxasGap& gap, const std::vector<Toolkit>& toolkits);

}  // namespace torchfix
