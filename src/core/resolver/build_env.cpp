// The variables and tag of a source build a fix prints: the recipe's arch
// switch and fixed environment, and the release tag it checks out.

#include <string>
#include <utility>
#include <vector>

#include "core/arch/arch_list.hpp"
#include "core/facts/recipe.hpp"
#include "core/resolver/resolver_internal.hpp"

namespace torchfix::detail {

// The release tag (in the recipe's tag_format) of an installed or target
// `version` ("2.6.3+cu124" -> v2.6.3); "" for a version that names no
// release (a dev or git build).
std::string release_tag(const Recipe& rec, const std::string& version) {
  const std::string v = version.substr(0, version.find('+'));
  const auto post = v.find(".post");
  const std::string base = v.substr(0, post);
  if (base.empty() || base.find_first_not_of("0123456789.") != std::string::npos ||
      (post != std::string::npos && v.find_first_not_of("0123456789", post + 5) != std::string::npos)) {
    return "";
  }
  std::string tag = rec.tag_format;
  if (const auto at = tag.find("{version}"); at != std::string::npos) tag.replace(at, 9, v);
  return tag;
}

// The variables that make pip build `package` from source for `archs`: its
// recipe's arch variable (the targets snapped as `torchfix build` snaps them,
// core/recipe snap_arch_for_recipe), the Tegra targets its switch cannot make
// SASS for also through extra_gencode_variable, and its fixed environment;
// TORCH_CUDA_ARCH_LIST without a recipe. `snapped` is null when the recipe
// cannot target an arch (then the GPUs' own list is passed: unsupported).
std::vector<std::pair<std::string, std::string>> build_env(const Recipe* r, const std::vector<ComputeCapability>& archs,
                                                           const RecipeArch* snapped) {
  const ArchList list = arch_list_for_gpus(archs, PtxPolicy::none);
  if (!r) return {{"TORCH_CUDA_ARCH_LIST", render(list, ArchFormat::torch)}};
  std::vector<std::pair<std::string, std::string>> out;
  if (!snapped) {
    out.emplace_back(r->arch_variable, render(list, r->arch_format));
  } else {
    out.emplace_back(r->arch_variable, render(snapped->all, r->arch_format));  // as builder/plan_make.cpp sets it
    if (!snapped->extra.empty()) {
      out.emplace_back(r->extra_gencode_variable, render(snapped->extra, ArchFormat::gencode));
    }
  }
  for (const RecipeEnv& e : r->env) {
    if (e.value.find('{') == std::string::npos) out.emplace_back(e.name, e.value);
  }
  return out;
}

}  // namespace torchfix::detail
