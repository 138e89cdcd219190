#pragma once
// The TORCH_CUDA_ARCH_LIST grammar: parse, normalise, validate, and render an
// arch list in each spelling a build uses (torch, CMake CUDA_ARCHITECTURES,
// nvcc -gencode, flash-attn FLASH_ATTN_CUDA_ARCHS). Pure: text in, values out.
//
// Sources: PyTorch cmake/Modules_CUDA_fix/upstream/FindCUDA/select_compute_arch.cmake
// (entries `X.Y`, `X.Ya`, `X.Y(X.Z)`, `+PTX`, the names and what they expand
// to), torch/utils/cpp_extension.py _get_cuda_arch_flags (`X.Yf`, ';' or ' '
// separators), CMake CUDA_ARCHITECTURES docs (`-real`/`-virtual` suffixes),
// flash-attention setup.py (FLASH_ATTN_CUDA_ARCHS: integers joined by ';');
// summarised in shared/facts/pytorch-build.md.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"

namespace torchfix {

/// Describes one entry of an arch list: SASS for `cc` (with its variant),
/// compiled from the PTX of `virtual_cc` when given (`8.6(8.0)`), plus PTX
/// embedded in the binary when `ptx` is set (`+PTX`).
struct ArchTarget {
  ComputeCapability cc;                         // real arch of the SASS image
  ArchVariant variant = ArchVariant::generic;   // `a` (specific) or `f` (family) suffix
  bool ptx = false;                             // also embed PTX (of virtual_cc when set, else cc)
  std::optional<ComputeCapability> virtual_cc;  // `X.Y(X.Z)`: the PTX the SASS is built from

  /// Returns the compute capability whose PTX feeds this target (virtual_cc or cc).
  ComputeCapability ptx_cc() const { return virtual_cc.value_or(cc); }

  auto operator<=>(const ArchTarget&) const = default;
};

/// Holds a normalised arch list: targets sorted by compute capability and
/// variant, without duplicates.
struct ArchList {
  std::vector<ArchTarget> targets;

  bool empty() const { return targets.empty(); }
  bool operator==(const ArchList&) const = default;
};

/// Names the spellings an arch list is rendered in.
enum class ArchFormat {
  torch,       // TORCH_CUDA_ARCH_LIST: "8.6;12.0+PTX"
  cmake,       // CMAKE_CUDA_ARCHITECTURES: "86-real;120" (plain number = SASS + PTX)
  gencode,     // nvcc flags: "-gencode arch=compute_86,code=sm_86 ..."
  flash_attn,  // FLASH_ATTN_CUDA_ARCHS: "86;120" (numbers only; variants and PTX dropped)
};

/// Says where to embed PTX when an arch list is made from GPUs.
enum class PtxPolicy {
  newest,  // PTX for the newest arch only, so newer GPUs can JIT (the default)
  none,    // SASS only: smallest and fastest build
  all,     // PTX for every arch
};

/// Parses a TORCH_CUDA_ARCH_LIST value: entries separated by ';' or
/// whitespace, each `X.Y`, `X.Ya`, `X.Yf` or `X.Y(X.Z)`, optionally followed
/// by `+PTX`, or a name (Kepler, Kepler+Tesla, Maxwell, Maxwell+Tegra, Pascal,
/// Volta, Volta+Tegra, Turing, Ampere, Ampere+Tegra, Ada, Hopper, Blackwell,
/// Blackwell+Tegra; each optionally `+PTX`) expanded as select_compute_arch.cmake
/// does. Returns the normalised list. Errors name the offending entry and what
/// to write instead: `Auto`, `All` and `Common` are refused (they depend on the
/// machine or compile every arch); empty lists, commas, `sm_XY` spellings,
/// `a` before 9.0, `f` before 10.0 and `X.Y(X.Z)` with X.Z above X.Y are rejected.
Expected<ArchList> parse_arch_list(std::string_view text);

/// Returns `list` with duplicates merged (a target asked once with +PTX and
/// once without keeps the PTX) and targets sorted by (cc, variant, virtual_cc).
ArchList normalise(ArchList list);

/// Builds the arch list for a set of GPU compute capabilities: one generic
/// SASS target per distinct capability, PTX placed as `policy` says.
ArchList arch_list_for_gpus(const std::vector<ComputeCapability>& gpus, PtxPolicy policy);

/// Renders `list` in `format` (see ArchFormat for each spelling). CMake cannot
/// say "SASS for X.Y from the PTX of X.Z", so `8.6(8.0)` renders as `86-real`
/// (plus `80-virtual` when it carries +PTX).
std::string render(const ArchList& list, ArchFormat format);

/// Returns the nvcc arguments of `list` as separate argv entries:
/// "-gencode", "arch=compute_86,code=sm_86", ... (SASS first, then PTX).
std::vector<std::string> gencode_args(const ArchList& list);

/// Returns the images a build with `list` produces: sm_XY[a|f] for each
/// target, compute_XY[a|f] for each target with PTX; sorted, no duplicates.
std::vector<Arch> images(const ArchList& list);

/// Returns the highest compute capability in `list`; nullopt when empty.
std::optional<ComputeCapability> newest(const ArchList& list);

/// Returns "PTX policy" names: "newest", "none", "all".
std::string_view to_string(PtxPolicy policy);
/// Parses "newest", "none" or "all"; errors name the value.
Expected<PtxPolicy> parse_ptx_policy(std::string_view text);

}  // namespace torchfix
