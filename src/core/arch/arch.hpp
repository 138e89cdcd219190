#pragma once
// Compute capabilities, CUDA arch names (sm_XY, compute_XY, a/f variants) and
// the rule that decides whether a binary image runs on a GPU.
//
// Source of the rules: CUDA C++ Programming Guide, "Binary Compatibility" and
// "Application Compatibility"; NVIDIA Blackwell and Hopper compatibility
// guides; PyTorch 2.11 torch/cuda/__init__.py (table DEVICE_REQUIREMENT) for
// the Tegra parts; summarised in shared/facts/arch-rules.md.

#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"

namespace torchfix {

/// Holds a compute capability X.Y (a GPU's, or the target of an image).
struct ComputeCapability {
  int major = 0;
  int minor = 0;

  /// Returns the two-digit-or-more arch number used in sm_XY (12.0 -> 120).
  int number() const { return major * 10 + minor; }
  /// Returns "X.Y" ("12.0").
  std::string str() const;

  /// Parses "12.0", "120", "sm_120", "compute_120" or "sm_120a" (the variant
  /// suffix is ignored). Errors name the value and the accepted forms.
  static Expected<ComputeCapability> parse(std::string_view text);
  /// Builds from an arch number (120 -> 12.0, 75 -> 7.5).
  static ComputeCapability from_number(int number) { return {number / 10, number % 10}; }

  auto operator<=>(const ComputeCapability&) const = default;
};

/// Says which GPUs an image targets beyond its compute capability:
/// generic (sm_90), arch-specific `a` (sm_90a: exactly 9.0), family-specific
/// `f` (sm_100f: 10.x at or above 10.0; CUDA 12.9+).
enum class ArchVariant { generic, specific, family };

/// Says what an image is: SASS (a cubin, for one real arch) or PTX (virtual ISA).
enum class ImageKind { sass, ptx };

/// Names one image target: sm_120a (SASS) or compute_90 (PTX).
struct Arch {
  ImageKind kind = ImageKind::sass;
  ComputeCapability cc;
  ArchVariant variant = ArchVariant::generic;

  /// Returns the nvcc spelling: "sm_120a", "compute_90", "sm_100f".
  std::string name() const;

  /// Parses "sm_XY[a|f]" or "compute_XY[a|f]"; errors name the value.
  static Expected<Arch> parse(std::string_view text);

  auto operator<=>(const Arch&) const = default;
};

/// Says how an image (or a set of images) reaches a GPU.
enum class Reach {
  native,   // a SASS image runs as is
  ptx_jit,  // only PTX: the driver compiles it at first use (minutes; cached)
  none,     // nothing runs: "no kernel image is available for execution on the device"
};

/// Returns true for integrated (Tegra) parts, which load only their exact
/// cubin: 5.3, 6.2, 7.2, 8.7, 10.1 and 11.0 (Jetson Thor, 10.1 before CUDA 13).
/// Source: PyTorch 2.11 torch/cuda/__init__.py DEVICE_REQUIREMENT.
bool is_tegra(ComputeCapability cc);

/// Decides whether one SASS image runs on a GPU of capability `gpu`:
/// generic sm_X.Y runs on X.Z for Z >= Y (same major); `a` only on exactly X.Y;
/// `f` on the same major at or above X.Y; Tegra GPUs and Tegra images only on
/// an exact match (sm_101 also on 11.0, the renamed Thor).
bool sass_runs_on(const Arch& sass, ComputeCapability gpu);

/// Decides whether one PTX image can be JIT-compiled for `gpu`: generic PTX
/// for any capability >= its own, across majors; `a` PTX only on exactly its
/// capability; `f` PTX like `f` SASS. Whether the driver understands the PTX
/// ISA version is a separate check (see Diagnosis).
bool ptx_runs_on(const Arch& ptx, ComputeCapability gpu);

/// Returns the best reach of `images` on `gpu`: native if any SASS image runs,
/// else ptx_jit if any PTX image does, else none.
Reach best_reach(const std::vector<Arch>& images, ComputeCapability gpu);

/// Returns "native", "ptx-jit" or "none".
std::string_view to_string(Reach reach);

}  // namespace torchfix
