#include "core/facts/gpu_name.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "core/base/nearest.hpp"

namespace torchfix {
namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

// "80gb", "32g", "480gb", "96gb": a memory size, not part of the product.
bool memory_size(std::string_view w) {
  for (std::string_view unit : {"gb", "g", "tb"}) {
    if (w.ends_with(unit) && all_digits(w.substr(0, w.size() - unit.size()))) return true;
  }
  return false;
}

// NVML's MIG device names carry a profile like "1g.10gb" or "3g.40gb".
bool mig_profile(std::string_view w) {
  const auto dot = w.find("g.");
  return dot != std::string_view::npos && all_digits(w.substr(0, dot)) && memory_size(w.substr(dot + 2));
}

bool noise_word(std::string_view w) {
  static const std::set<std::string_view> k_noise = {"nvidia", "geforce", "tesla", "sxm", "sxm2",       "sxm3", "sxm4",
                                                     "sxm5",   "sxm6",    "pcie",  "nvl", "generation", "mig"};
  if (k_noise.contains(w) || memory_size(w) || mig_profile(w)) return true;
  return w.starts_with("hbm") || w.starts_with("gddr");  // hbm2e, hbm3, gddr6x
}

// True when `part` appears in `whole` as consecutive words.
bool contains_run(const std::vector<std::string>& whole, const std::vector<std::string>& part) {
  if (part.empty() || part.size() > whole.size()) return false;
  return std::ranges::search(whole, part).begin() != whole.end();
}

std::string joined(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : std::string(separator)) + w;
  return out;
}

struct Candidate {
  const GpuProduct* product;
  const std::string* name;
};

std::string nearest_product(const std::vector<std::string>& wanted, const std::vector<GpuProduct>& products) {
  const std::string compact = joined(wanted, "");
  std::vector<std::string> compacts;
  std::vector<Candidate> named;
  for (const GpuProduct& p : products) {
    for (const std::string& n : p.names) {
      compacts.push_back(joined(gpu_name_words(n), ""));
      named.push_back({&p, &n});
    }
  }
  // "5070ti" is inside "rtx5070ti": the shortest name holding it is meant.
  std::size_t best = compacts.size();
  for (std::size_t i = 0; i < compacts.size(); ++i) {
    if (compact.size() >= 3 && compacts[i].find(compact) != std::string::npos &&
        (best == compacts.size() || compacts[i].size() < compacts[best].size()))
      best = i;
  }
  if (best == compacts.size()) {
    const std::string near = nearest_word(compact, compacts);
    if (near.empty()) return {};
    best = static_cast<std::size_t>(std::ranges::find(compacts, near) - compacts.begin());
  }
  return "'" + *named[best].name + "' (" + named[best].product->cc.str() + ")";
}

}  // namespace

std::vector<std::string> gpu_name_words(std::string_view name) {
  std::string lowered;
  for (char c : name) {
    const bool space = c == '-' || c == '_' || c == '(' || c == ')' || c == ',' || c == '/';
    lowered += space ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::istringstream stream(lowered);
  std::vector<std::string> words;
  for (std::string w; stream >> w;) {
    if (!noise_word(w)) words.push_back(w);
  }
  return words;
}

Expected<ComputeCapability> match_gpu_name(std::string_view spec, const std::vector<GpuProduct>& products) {
  const std::vector<std::string> wanted = gpu_name_words(spec);
  if (wanted.empty()) return fail("--gpu needs a value: a product name (\"RTX 5090\"), sm_120 or 12.0");
  std::set<ComputeCapability> exact;
  std::set<ComputeCapability> longest;  // products whose whole name is in `spec`, the most words
  std::size_t longest_words = 0;
  std::vector<std::string> longest_names;
  std::set<ComputeCapability> partial;
  std::vector<std::string> partial_names;
  for (const GpuProduct& product : products) {
    for (const std::string& name : product.names) {
      const std::vector<std::string> words = gpu_name_words(name);
      if (words == wanted) {
        exact.insert(product.cc);
      } else if (contains_run(wanted, words)) {
        if (words.size() > longest_words) {
          longest.clear();
          longest_names.clear();
        }
        if (words.size() >= longest_words) {
          longest_words = words.size();
          longest.insert(product.cc);
          longest_names.push_back(name + " (" + product.cc.str() + ")");
        }
      } else if (contains_run(words, wanted)) {
        partial.insert(product.cc);
        partial_names.push_back(name + " (" + product.cc.str() + ")");
      }
    }
  }
  if (exact.size() == 1) return *exact.begin();
  if (exact.empty() && longest.size() == 1) return *longest.begin();
  if (exact.empty() && longest.empty() && partial.size() == 1) return *partial.begin();
  if (exact.size() > 1 || longest.size() > 1 || partial.size() > 1) {
    const auto& names = longest.size() > 1 ? longest_names : partial_names;
    return fail("GPU name '" + std::string(spec) + "' is ambiguous: " + joined(names, ", ") +
                "; give the full product name or the compute capability (e.g. 12.0)");
  }
  const std::string near = nearest_product(wanted, products);
  if (!near.empty()) {
    return fail("unknown GPU '" + std::string(spec) + "': did you mean " + near +
                "? Else give the compute capability (see https://developer.nvidia.com/cuda-gpus), e.g. --gpu 12.0");
  }
  return fail("unknown GPU '" + std::string(spec) +
              "': not a product in recipes/gpus.toml, nor sm_XY or X.Y; give the compute capability "
              "(see https://developer.nvidia.com/cuda-gpus), e.g. --gpu 12.0");
}

}  // namespace torchfix
