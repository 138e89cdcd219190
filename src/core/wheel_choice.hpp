#pragma once
// Chooses the official PyTorch wheel that runs on a set of GPUs under a given
// driver, and spells the install command (pip and uv).

#include <optional>
#include <string>
#include <vector>

#include "core/knowledge.hpp"

namespace torchfix {

/// Describes what a wheel choice must satisfy.
struct WheelNeeds {
  std::vector<ComputeCapability> gpus;     // every GPU the wheel must run on
  std::optional<Version> driver_cuda;      // CUDA the driver supports; nullopt: unknown
  std::optional<Version> driver_version;   // for minor-version compatibility; nullopt: unknown
  std::string platform = "x86_64";         // "x86_64" or "aarch64"
  std::optional<Version> current_release;  // torch release installed now (2.8.0), if any
  bool ignore_driver = false;              // find the wheel as if the driver were upgraded
};

/// Describes the chosen wheel.
struct WheelChoice {
  const WheelVariant* wheel = nullptr;
  Version release;  // "2.8.0" when keeping the installed release, else "2.11" (newest in the table)
  bool same_release = false;
  bool needs_ptx_jit = false;  // some GPU is reached only through PTX
  bool minor_compat = false;   // runs on the driver only through minor-version compatibility
};

/// Chooses a wheel: the installed release from another variant when one fits,
/// else the newest release that does; among variants, native SASS over PTX,
/// then the newest CUDA the driver supports. With the driver unknown, the
/// lowest CUDA variant wins over the newest release (it runs on most drivers). nullopt when no wheel in the
/// table covers every GPU under the driver.
std::optional<WheelChoice> choose_wheel(const Knowledge& knowledge, const WheelNeeds& needs);

/// Returns true when `wheel` can run on a driver supporting `driver_cuda`
/// (version `driver_version`): the driver supports the wheel's CUDA, or the
/// same major through minor-version compatibility (sets `minor_compat`).
/// Unknown driver values count as fitting.
bool driver_fits(const Knowledge& knowledge, const Version& wheel_cuda, const std::optional<Version>& driver_cuda,
                 const std::optional<Version>& driver_version, bool* minor_compat = nullptr);

/// Returns the install commands for `choice` (pip, then the uv form), e.g.
/// `pip install --force-reinstall 'torch==2.8.0' torchvision --index-url https://download.pytorch.org/whl/cu126`.
/// `companions` are other installed torch packages to reinstall with it
/// (torchvision, torchaudio). `python` is the interpreter to run pip with.
std::vector<std::string> install_commands(const WheelChoice& choice, const std::vector<std::string>& companions,
                                          const std::string& python);

}  // namespace torchfix
