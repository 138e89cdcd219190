#include "core/situation/triton.hpp"

#include <algorithm>
#include <cctype>

namespace torchfix {
namespace {

Version mm(const Version& v) {
  return Version({v.major(), v.minor()});
}

// The first nvcc that accepts exactly sm_XY (Triton's target is sm_XYa, which
// the same release introduces); nullopt when every tracked nvcc accepts it.
std::optional<Version> first_exact(const Knowledge& k, ComputeCapability cc) {
  std::optional<Version> best;
  bool open = false;
  for (const NvccArchRange& range : k.nvcc_archs) {
    for (const Arch& arch : range.archs) {
      if (arch.cc != cc || arch.kind != ImageKind::sass) continue;
      if (!range.first) open = true;
      if (range.first && (!best || *range.first < *best)) best = range.first;
    }
  }
  return open ? std::nullopt : best;
}

Version bundled_for(const TritonPtxas& row, ComputeCapability gpu) {
  return gpu.number() >= 100 && row.ptxas_blackwell ? *row.ptxas_blackwell : row.ptxas;
}

}  // namespace

std::optional<std::string> triton_version(const PythonEnv& env) {
  for (const auto& [name, version] : env.distributions) {
    std::string lower = name;
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::ranges::replace(lower, '_', '-');
    if (lower == "triton" || lower == "pytorch-triton") return version;
  }
  return std::nullopt;
}

std::optional<TritonPtxasGap> triton_ptxas_gap(const Knowledge& k, std::string_view version, ComputeCapability gpu) {
  const TritonPtxas* row = k.triton_ptxas(version);
  if (!row) return std::nullopt;
  const auto needed = first_exact(k, gpu);
  const Version bundled = bundled_for(*row, gpu);
  if (!needed || mm(bundled) >= *needed) return std::nullopt;
  TritonPtxasGap gap;
  gap.triton = std::string(version);
  gap.bundled = bundled;
  gap.needed = *needed;
  // The `a` suffix: every arch from 9.0 on since 3.3, only 9.0 before
  // (sm_arch_from_capability / make_cubin in backends/nvidia/compiler.py).
  const bool suffixed = gpu.number() == 90 || (gpu.number() > 90 && mm(*Version::parse(version)) >= Version({3, 3}));
  gap.target = "sm_" + std::to_string(gpu.number()) + (suffixed ? "a" : "");
  gap.variable = "TRITON_PTXAS_PATH";
  if (gpu.number() >= 100 && row->ptxas_blackwell) {
    gap.variable = row->blackwell_variable.empty() ? "TRITON_PTXAS_BLACKWELL_PATH" : row->blackwell_variable;
  }
  gap.exportable = std::ranges::all_of(gap.variable, [](unsigned char c) { return std::isalnum(c) || c == '_'; });
  gap.cuda_max = row->ptxas_cuda_max;
  gap.source = row->source;
  for (const TritonPtxas& later : k.triton) {
    if (mm(bundled_for(later, gpu)) >= *needed && (!gap.fixed_in || later.min < *gap.fixed_in)) {
      gap.fixed_in = later.min;
      gap.fixed_in_torch = later.torch;
    }
  }
  return gap;
}

bool TritonPtxasGap::closable_by_variable() const {
  return exportable && (!cuda_max || needed <= *cuda_max);
}

std::optional<PtxasChoice> ptxas_for(const TritonPtxasGap& gap, const std::vector<Toolkit>& toolkits) {
  if (!gap.closable_by_variable()) return std::nullopt;
  const Toolkit* best = nullptr;
  for (const Toolkit& t : toolkits) {
    if (!t.version || !t.nvcc.ends_with("/bin/nvcc")) continue;
    const Version cuda = mm(*t.version);
    if (cuda >= gap.needed && (!gap.cuda_max || cuda <= *gap.cuda_max) && (!best || *t.version > *best->version)) {
      best = &t;
    }
  }
  if (!best) return std::nullopt;
  return PtxasChoice{best, best->nvcc.substr(0, best->nvcc.size() - 4) + "ptxas"};
}

}  // namespace torchfix
