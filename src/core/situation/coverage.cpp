#include "core/situation/coverage.hpp"

#include <algorithm>
#include <map>

namespace torchfix {

Coverage coverage_on(const BinaryKernels& binary, ComputeCapability gpu) {
  Coverage out;
  for (const ModuleGroup& group : binary.groups) {
    if (group.images.empty() || group.modules <= 0) continue;
    out.modules += group.modules;
    switch (best_reach(group.images, gpu)) {
      case Reach::native:
        out.native += group.modules;
        break;
      case Reach::ptx_jit:
        out.ptx_jit += group.modules;
        break;
      case Reach::none:
        out.none += group.modules;
        break;
    }
  }
  return out;
}

Reach worst_reach(const Coverage& coverage) {
  if (coverage.none > 0) return Reach::none;
  if (coverage.ptx_jit > 0) return Reach::ptx_jit;
  return Reach::native;
}

Coverage library_coverage(const BinaryKernels& binary, ComputeCapability gpu) {
  BinaryKernels general;
  for (const ModuleGroup& g : binary.groups) {
    if (std::ranges::any_of(g.images, [](const Arch& a) { return a.variant == ArchVariant::generic; })) {
      general.groups.push_back(g);
    }
  }
  return coverage_on(general.groups.empty() ? binary : general, gpu);
}

Reach library_reach(const Coverage& coverage) {
  if (coverage.modules > 0 && coverage.native + coverage.ptx_jit == 0) return Reach::none;
  return coverage.ptx_jit > 0 ? Reach::ptx_jit : Reach::native;
}

std::vector<ArchShare> arch_shares(const BinaryKernels& binary) {
  std::map<Arch, int> counts;
  for (const ModuleGroup& group : binary.groups) {
    if (group.modules <= 0) continue;
    // A group's images are unique per module; guard anyway so that a hand-made
    // snapshot with duplicates does not count a module twice.
    std::vector<Arch> images = group.images;
    std::ranges::sort(images);
    images.erase(std::unique(images.begin(), images.end()), images.end());
    for (const Arch& arch : images) counts[arch] += group.modules;
  }
  std::vector<ArchShare> out;
  for (const auto& [arch, modules] : counts) out.push_back({arch, modules});
  return out;
}

int kernel_modules(const BinaryKernels& binary) {
  int total = 0;
  for (const ModuleGroup& group : binary.groups) {
    if (!group.images.empty() && group.modules > 0) total += group.modules;
  }
  return total;
}

}  // namespace torchfix
