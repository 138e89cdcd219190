#include "build/plan.hpp"

#include <algorithm>
#include <tuple>

namespace torchfix {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

}  // namespace

// Snap each target down to the newest arch the project has kernels for, of
// the same major (flash-attn builds 80 and runs it on 8.6: SASS of 8.0 runs
// on 8.x, CUDA Programming Guide "Binary Compatibility").
Expected<RecipeArch> snap_arch_for_recipe(const ArchList& list, const Recipe& recipe, std::vector<std::string>& notes) {
  if (recipe.arch_supported.empty()) return RecipeArch{list, {}};
  std::vector<std::string> known;
  for (ComputeCapability s : recipe.arch_supported) known.push_back(s.str());
  RecipeArch out;
  for (const ArchTarget& t : list.targets) {
    if (std::ranges::find(recipe.arch_supported, t.cc) != recipe.arch_supported.end()) {
      out.all.targets.push_back(t);
      continue;
    }
    std::optional<ComputeCapability> best;
    for (ComputeCapability s : recipe.arch_supported) {
      if (s.major == t.cc.major && s <= t.cc) best = s;
    }
    if (!best) {
      return fail("recipe '" + recipe.name + "' has no kernels for compute capability " + t.cc.str() +
                  " (it builds only " + join(known, ";") + ", per " + recipe.file +
                  "): the project does not support this GPU upstream");
    }
    // An integrated (Tegra) GPU runs only SASS built for exactly its
    // capability (arch-rules.md): snapping 8.7 to 8.0 would rebuild a binary
    // that cannot run there. The project supports the generation (8.0), so
    // its kernels compile for 8.7 when nvcc is asked directly.
    if (is_tegra(t.cc)) {
      if (recipe.extra_gencode_variable.empty()) {
        return fail("recipe '" + recipe.name + "' cannot ask for SASS of exactly " + t.cc.str() +
                    " (an integrated GPU): its " + recipe.arch_variable + " accepts only " + join(known, ";") + " (" +
                    recipe.file + ")");
      }
      out.all.targets.push_back(t);
      out.extra.targets.push_back(t);
      notes.push_back(recipe.arch_variable + " accepts only " + join(known, ";") + ": " + t.cc.str() +
                      " (integrated GPU, exact SASS) is added through " + recipe.extra_gencode_variable);
      continue;
    }
    notes.push_back(recipe.name + " builds " + best->str() + " kernels for " + t.cc.str() + " GPUs");
    out.all.targets.push_back({*best, ArchVariant::generic, t.ptx, std::nullopt});
  }
  out.all = normalise(std::move(out.all));
  out.extra = normalise(std::move(out.extra));
  return out;
}

std::string_view to_string(FetchAction action) {
  switch (action) {
    case FetchAction::clone:
      return "clone";
    case FetchAction::resume:
      return "resume";
    case FetchAction::checkout:
      return "checkout";
    case FetchAction::use_as_is:
      return "use-as-is";
    case FetchAction::refuse_dirty:
      return "refuse-dirty";
  }
  return "clone";
}

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host_start = scheme + 3;
  const auto path_start = url.find('/', host_start);
  const auto at = url.rfind('@', path_start == std::string_view::npos ? url.size() : path_start);
  if (at == std::string_view::npos || at < host_start) return std::string(url);
  return std::string(url.substr(0, host_start)) + "***" + std::string(url.substr(at));
}

}  // namespace torchfix
