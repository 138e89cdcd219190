#include "core/arch/arch.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace torchfix {
namespace {

// Integrated parts (PyTorch 2.11 torch/cuda/__init__.py DEVICE_REQUIREMENT).
constexpr std::array k_tegra = {53, 62, 72, 87, 101, 110};

// Jetson Thor reports 10.1 under CUDA 12.x drivers and 11.0 under CUDA 13;
// sm_101 was renamed sm_110 in CUDA 13.0, and PyTorch's table lets 101 match
// both (shared/facts/arch-rules.md).
bool tegra_exact_match(int image, int gpu) {
  return image == gpu || (image == 101 && gpu == 110);
}

Expected<int> parse_number(std::string_view digits, std::string_view whole) {
  int value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size() || value < 20 || value > 999) {
    return fail("'" + std::string(whole) +
                "' is not a CUDA arch: expected a compute capability like 8.6 or 12.0, "
                "or an arch like sm_86, sm_120a, compute_90");
  }
  return value;
}

}  // namespace

std::string ComputeCapability::str() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

Expected<ComputeCapability> ComputeCapability::parse(std::string_view text) {
  std::string_view rest = text;
  for (std::string_view prefix : {"sm_", "compute_"}) {
    if (rest.starts_with(prefix)) rest.remove_prefix(prefix.size());
  }
  if (!rest.empty() && (rest.back() == 'a' || rest.back() == 'f')) rest.remove_suffix(1);
  if (auto dot = rest.find('.'); dot != std::string_view::npos) {
    int major = 0;
    int minor = 0;
    auto a = std::from_chars(rest.data(), rest.data() + dot, major);
    auto b = std::from_chars(rest.data() + dot + 1, rest.data() + rest.size(), minor);
    if (a.ec != std::errc{} || a.ptr != rest.data() + dot || b.ec != std::errc{} ||
        b.ptr != rest.data() + rest.size() || dot == 0 || dot + 2 != rest.size() || major < 1 || major > 99) {
      return fail("'" + std::string(text) +
                  "' is not a compute capability: expected X.Y with one minor digit, like 8.6 or 12.0");
    }
    return ComputeCapability{major, minor};
  }
  TF_TRY(number, parse_number(rest, text));
  return ComputeCapability::from_number(number);
}

std::string Arch::name() const {
  std::string out = kind == ImageKind::sass ? "sm_" : "compute_";
  out += std::to_string(cc.number());
  if (variant == ArchVariant::specific) out += 'a';
  if (variant == ArchVariant::family) out += 'f';
  return out;
}

Expected<Arch> Arch::parse(std::string_view text) {
  Arch arch;
  std::string_view rest = text;
  if (rest.starts_with("sm_")) {
    arch.kind = ImageKind::sass;
    rest.remove_prefix(3);
  } else if (rest.starts_with("compute_")) {
    arch.kind = ImageKind::ptx;
    rest.remove_prefix(8);
  } else {
    return fail("'" + std::string(text) +
                "' is not an nvcc arch name: expected sm_XY or compute_XY, optionally with a or f "
                "(sm_120a, compute_90)");
  }
  if (!rest.empty() && rest.back() == 'a') {
    arch.variant = ArchVariant::specific;
    rest.remove_suffix(1);
  } else if (!rest.empty() && rest.back() == 'f') {
    arch.variant = ArchVariant::family;
    rest.remove_suffix(1);
  }
  TF_TRY(number, parse_number(rest, text));
  arch.cc = ComputeCapability::from_number(number);
  return arch;
}

bool is_tegra(ComputeCapability cc) {
  return std::ranges::find(k_tegra, cc.number()) != k_tegra.end();
}

bool sass_runs_on(const Arch& sass, ComputeCapability gpu) {
  const int image = sass.cc.number();
  if (is_tegra(gpu) || is_tegra(sass.cc)) return tegra_exact_match(image, gpu.number());
  switch (sass.variant) {
    case ArchVariant::specific:
      return sass.cc == gpu;
    case ArchVariant::family:
    case ArchVariant::generic:
      return sass.cc.major == gpu.major && gpu.minor >= sass.cc.minor;
  }
  return false;
}

bool ptx_runs_on(const Arch& ptx, ComputeCapability gpu) {
  switch (ptx.variant) {
    case ArchVariant::specific:
      return ptx.cc == gpu;
    case ArchVariant::family:
      return ptx.cc.major == gpu.major && gpu.minor >= ptx.cc.minor;
    case ArchVariant::generic:
      return gpu >= ptx.cc;
  }
  return false;
}

Reach best_reach(const std::vector<Arch>& images, ComputeCapability gpu) {
  bool jit = false;
  for (const Arch& image : images) {
    if (image.kind == ImageKind::sass && sass_runs_on(image, gpu)) return Reach::native;
    if (image.kind == ImageKind::ptx && ptx_runs_on(image, gpu)) jit = true;
  }
  return jit ? Reach::ptx_jit : Reach::none;
}

std::string_view to_string(Reach reach) {
  switch (reach) {
    case Reach::native:
      return "native";
    case Reach::ptx_jit:
      return "ptx-jit";
    case Reach::none:
      return "none";
  }
  return "none";
}

}  // namespace torchfix
