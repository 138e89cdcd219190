#pragma once
// torch.compile's floor and the Triton that torch pins, as findings with
// their fixes. Pure: reads the Situation (the GPUs, grouped) and the Knowledge only.

#include <optional>
#include <string>
#include <vector>

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix::detail {

/// Describes the Triton torch.compile needs beside one environment's torch
/// and the Triton installed there: torch's own Requires-Dist where it
/// applies to this platform (Linux wheels pin `triton==X` with a Linux-only
/// marker), else recipes/triton-ptxas.toml [[torch_triton]] (triton-windows
/// on Windows, from the fork's README table).
struct TritonPair {
  std::string installed_name;  // "triton-windows", "triton", "pytorch-triton"
  std::string installed;       // "3.4.0.post20"
  std::string wanted_name;     // the distribution torch needs
  std::string wanted;          // "3.3.1" (one release) or "3.3" (any 3.3.x)
  bool exact = false;          // `wanted` is one release
  std::string source;          // torch's Requires-Dist line, or the table row's source
  std::string torch;           // the installed torch's version text

  /// Returns true when the installed Triton is another minor release than
  /// the one torch needs (or another distribution): torch.compile fails.
  bool breaks_compile() const;
  /// Returns true when the installed Triton is exactly what torch needs.
  bool matches() const;
  /// Returns the requirement that installs the needed Triton:
  /// "triton==3.3.1", or "triton-windows<3.4" (the README's form).
  std::string requirement() const;
};

/// Returns the Triton pairing of `env` (a torch environment with one Triton
/// distribution or more), nullopt when no Triton is installed, torch is not,
/// or neither torch's METADATA nor the table names the Triton it needs (a
/// nightly torch without its METADATA read).
std::optional<TritonPair> triton_pair(const Situation& situation, const Knowledge& k, const PythonEnv& env);

/// Returns the pip line that installs the Triton `pair` wants in `env`:
/// `--no-deps NAME==X` for one release, `-U "NAME<X.Y+1"` for a series.
std::string triton_install_command(const Situation& situation, const PythonEnv& env, const TritonPair& pair);

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
///  - "triton.pin": the installed Triton is not the one torch needs
///    (triton_pair): a problem for another minor release or distribution
///    (torch.compile fails), a warning for another patch release; skipped
///    where two Triton distributions share the import package (the
///    shared-import finding then installs the one triton_pair names), and
///    when it is a problem, the ptxas checks judge the Triton it installs;
///  - "triton.untracked" (note) per group of identical GPUs of compute capability 10.0 or more
///    when the Triton release is older than every row of
///    recipes/triton-ptxas.toml: whether its ptxas knows the arch is unknown.
void check_triton_stack(const Situation& situation, const Knowledge& k, const PythonEnv& env,
                        std::vector<Finding>& out);

}  // namespace torchfix::detail
