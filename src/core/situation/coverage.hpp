#pragma once
// Coverage of a binary's kernel modules on one GPU: a library is built from
// many translation units, each its own module (fatbin) with its own images,
// so a library runs only when every module that holds kernels does.

#include <optional>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Counts kernel modules of a binary by how they reach a GPU.
struct Coverage {
  int modules = 0;  // modules that hold at least one SASS or PTX image
  int native = 0;   // of those, modules with SASS that runs on the GPU
  int ptx_jit = 0;  // modules without such SASS but with PTX the driver can JIT
  int none = 0;     // modules with no usable image: their kernels fail to launch
};

/// Counts the modules of `binary` by their best reach on a GPU of capability
/// `gpu` (rules of best_reach). Groups with no images are not counted.
Coverage coverage_on(const BinaryKernels& binary, ComputeCapability gpu);

/// Returns the worst reach over modules that hold kernels: none if any module
/// has no usable image, else ptx_jit if any needs JIT, else native (also for
/// a binary with no kernel modules: nothing in it can fail).
Reach worst_reach(const Coverage& coverage);

/// Counts the modules of one library on a GPU as the doctor judges it:
/// modules whose images are all arch-specific (sm_90a, sm_100f) are left out,
/// since the library loads them only on those GPUs, unless every module is
/// (then the file is those GPUs' library and cannot run elsewhere).
Coverage library_coverage(const BinaryKernels& binary, ComputeCapability gpu);

/// Returns how a library reaches a GPU from its library_coverage: none only
/// when no counted module reaches it (a library dispatches by capability, so
/// modules for other archs beside ones that cover the GPU are not called on
/// it), else ptx_jit if any module needs JIT, else native (also with no
/// kernel modules: nothing in it can fail).
Reach library_reach(const Coverage& coverage);

/// Counts how an arch is carried across a binary's modules.
struct ArchShare {
  Arch arch;
  int modules = 0;  // modules holding an image for exactly this arch
};

/// Lists every image arch of `binary` with the number of modules that hold
/// it, sorted SASS first, then by compute capability (sm_80 before sm_90a).
std::vector<ArchShare> arch_shares(const BinaryKernels& binary);

/// Returns the total number of modules with images in `binary`.
int kernel_modules(const BinaryKernels& binary);

}  // namespace torchfix
