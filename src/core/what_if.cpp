#include "core/what_if.hpp"

namespace torchfix {
namespace {

// Arch flags stay empty: diagnosis takes them from the wheel table and says
// so, instead of presenting table values as torch's own.
Expected<TorchBuild> torch_from_version(const std::string& text) {
  const auto plus = text.find('+');
  auto release = Version::parse(text);
  if (!release || plus == std::string::npos || plus + 1 == text.size()) {
    return fail("--torch '" + text +
                "' is not a torch version with its variant, like 2.6.0+cu126, 2.9.1+cpu or "
                "2.5.1+rocm6.2");
  }
  const std::string variant = text.substr(plus + 1);
  TorchBuild torch;
  torch.version = text;
  torch.location = "(what-if)";
  if (variant.starts_with("cu")) {
    auto digits = Version::parse(variant.substr(2));
    if (!digits || digits->parts().size() != 1 || digits->major() < 100) {
      return fail("--torch '" + text + "': variant '" + variant + "' is not cuXYZ (cu126, cu128, cu130)");
    }
    torch.cuda = std::to_string(digits->major() / 10) + "." + std::to_string(digits->major() % 10);
  } else if (variant.starts_with("rocm")) {
    torch.hip = variant.substr(4);
  } else if (variant != "cpu") {
    return fail("--torch '" + text + "': unknown variant '" + variant + "' (expected cuXYZ, cpu or rocmX.Y)");
  }
  return torch;
}

}  // namespace

Expected<void> apply_what_if(Snapshot& s, const WhatIf& w, const Knowledge& k) {
  if (w.machine) {
    if (*w.machine != "x86_64" && *w.machine != "aarch64") {
      return fail("--platform '" + *w.machine + "' is not x86_64 or aarch64");
    }
    s.platform.machine = *w.machine;
    s.what_if = true;
  }
  if (!w.gpus.empty()) {
    s.gpus.clear();
    for (const std::string& spec : w.gpus) {
      auto cc = k.resolve_gpu(spec);
      if (!cc) return std::unexpected(cc.error());
      Gpu gpu;
      gpu.index = static_cast<int>(s.gpus.size());
      const bool named = !ComputeCapability::parse(spec);
      gpu.name = named ? spec : k.product_name(*cc);
      gpu.cc = *cc;
      gpu.source = "what-if";
      s.gpus.push_back(std::move(gpu));
    }
    s.platform.cuda_visible_devices.reset();
    s.what_if = true;
  }
  if (w.driver) {
    auto v = Version::parse(*w.driver);
    if (!v || v->str() != *w.driver) {
      return fail("--driver '" + *w.driver + "' is not a driver version (570.124.04) or a CUDA version (12.8)");
    }
    if (v->major() >= 100) {
      s.driver.version = *v;
      s.driver.cuda_version = k.cuda_for_driver(*v);
      if (!s.driver.cuda_version) {
        return fail("--driver " + *w.driver +
                    " is older than every driver in recipes/toolkits.toml (CUDA 11.8 needs 520.61.05)");
      }
    } else {
      s.driver.version.reset();
      s.driver.cuda_version = Version({v->major(), v->minor()});
    }
    s.driver.source = "what-if";
    s.what_if = true;
  }
  if (w.torch) {
    auto torch = torch_from_version(*w.torch);
    if (!torch) return std::unexpected(torch.error());
    PythonEnv* env = nullptr;
    for (PythonEnv& p : s.pythons) {
      if (p.torch) {
        env = &p;
        break;
      }
    }
    if (!env) {
      s.pythons.push_back(PythonEnv{});
      env = &s.pythons.back();
      env->interpreter = "python3";
      env->origin = "what-if";
    }
    env->status = PythonStatus::ok;
    env->error.clear();
    env->torch = *torch;
    std::erase_if(env->kernels, [](const PackageKernels& p) { return p.distribution == "torch"; });
    s.what_if = true;
  }
  return {};
}

}  // namespace torchfix
