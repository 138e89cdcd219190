// A CUDA torch whose arch list nothing tells (no table row: releases before
// 2.0, nightlies, local builds; binaries not read) is judged by what its CUDA
// version's nvcc can emit (recipes/toolkits.toml [[nvcc_arch]]): a GPU outside
// that window cannot have SASS in the build, whatever its arch list.

#include <algorithm>

#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/extension_checks.hpp"

namespace torchfix::detail {
namespace {

// "CUDA 11.7 can hold kernels for 3.5 up to 8.7", from the generic SASS
// targets its nvcc accepts; "" when the table tracks none for it.
std::string holds_text(const Knowledge& k, const Version& cuda) {
  std::optional<ComputeCapability> low;
  std::optional<ComputeCapability> high;
  for (const Arch& a : k.nvcc_archs_for(cuda)) {
    if (a.kind != ImageKind::sass || a.variant != ArchVariant::generic) continue;
    if (!low || a.cc < *low) low = a.cc;
    if (!high || a.cc > *high) high = a.cc;
  }
  if (!high) return {};
  return "CUDA " + cuda.major_minor() + " can hold kernels for " + low->str() + " up to " + high->str() +
         " (recipes/toolkits.toml)";
}

// The problem for a GPU whose SASS no nvcc of torch's CUDA emits.
Finding outside_window(const PythonEnv& env, const GpuGroup& group, const Version& cuda, const NvccWindow& window,
                       const std::string& holds) {
  Finding f = env_finding("torch.arch", Severity::problem, env, "torch",
                          "torch " + env.torch->version + " cannot run on " + group.label());
  about_gpus(f, group);
  f.reach = Reach::none;
  if (!holds.empty()) f.details.push_back(holds);
  f.details.push_back("SASS for " + group.cc.str() + " needs " + window.str() + ": a CUDA " + cuda.major_minor() +
                      " build has none, whatever its arch list (not in recipes/torch-wheels.toml, binaries not read)");
  // shared/facts/wheels-2026-12.md: an old CUDA's PTX on a newer GPU means a
  // long JIT, then failure (stemrollerapp/stemroller#102).
  f.details.push_back(
      "PTX from an older CUDA is not relied on: kernels fail with \"no kernel image is available for execution on "
      "the device\"");
  return f;
}

// The honest unknown: what the CUDA version allows, and that the build's own
// list is not known.
Finding archs_unknown(const Situation& x, const PythonEnv& env, const std::string& holds,
                      const std::vector<ComputeCapability>& open) {
  Finding f = env_finding("torch.archs-unknown", Severity::warning, env, "",
                          "torch " + env.torch->version + ": cannot tell which GPU archs it was built for");
  if (!holds.empty()) {
    std::string ccs;
    for (ComputeCapability cc : open) ccs += (ccs.empty() ? "" : ", ") + cc.str();
    f.details.push_back(holds + (ccs.empty() ? "" : "; whether this build has " + ccs + " is not known"));
  }
  if (env.torch->location == "(what-if)") {
    // --import would import this machine's torch, not the one asked about.
    f.details.push_back("recipes/torch-wheels.toml has no arch list for this what-if wheel (" +
                        std::string(x.wheel_platform) + "); give a variant the table knows");
  } else {
    f.details.push_back("its binaries were not read and its arch flags are unknown");
    f.fixes.push_back({"Run the doctor with the import, which asks torch itself", {"torchfix doctor --import"}});
  }
  return f;
}

}  // namespace

void check_torch_by_cuda(const Situation& x, const Knowledge& k, const PythonEnv& env, const Version& cuda,
                         std::vector<Finding>& out) {
  const std::string holds = holds_text(k, cuda);
  std::vector<ComputeCapability> open;
  for (const GpuGroup& group : x.gpu_groups) {
    const std::optional<NvccWindow> window = k.nvcc_window_for(group.cc);
    if (window && !window->contains(cuda)) {
      out.push_back(outside_window(env, group, cuda, *window, holds));
    } else {
      open.push_back(group.cc);
    }
  }
  if (!open.empty() || x.gpu_groups.empty()) out.push_back(archs_unknown(x, env, holds, open));
}

}  // namespace torchfix::detail
