#include "core/situation/what_if.hpp"

#include <algorithm>
#include <cctype>

#include "core/base/text.hpp"
#include "core/situation/situation.hpp"

namespace torchfix {
namespace {

// The oldest driver branch the knowledge tables map to a CUDA version
// (R384: CUDA 9.0, recipes/toolkits.toml).
constexpr int k_oldest_branch = 384;

std::string lower(std::string text) {
  std::ranges::transform(text, text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The numeric release part of a version ("1.5.0.post8" -> 1.5.0,
// "2.6.0+cu126" -> 2.6.0); nullopt when it does not start with a number.
std::optional<Version> release_part(std::string_view text) {
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
  while (end > 0 && text[end - 1] == '.') --end;
  if (end == 0) return std::nullopt;
  auto v = Version::parse(text.substr(0, end));
  if (!v) return std::nullopt;
  return *v;
}

// The wheel table's platform name for the snapshot's platform (the one mapping, core/situation/situation.hpp).
std::string wheel_platform_of(const Snapshot& s) {
  return std::string(wheel_platform(platform_kind(s.platform, s.gpus)));
}

Expected<void> apply_platform(Snapshot& s, const std::string& text) {
  const std::string value = lower(text);
  Platform& p = s.platform;
  if (value == "linux-x86_64" || value == "x86_64") {
    p.machine = "x86_64";
    p.windows = p.wsl2 = false;
  } else if (value == "linux-aarch64" || value == "aarch64" || value == "linux-arm64" || value == "arm64") {
    p.machine = "aarch64";
    p.windows = p.wsl2 = false;
  } else if (value == "windows" || value == "windows-x86_64" || value == "win") {
    p.machine = "x86_64";
    p.windows = true;
    p.wsl2 = false;
    p.container = false;
  } else if (value == "wsl2" || value == "wsl") {
    // WSL2 maps the Windows driver's libcuda into /usr/lib/wsl/lib and has
    // /dev/dxg, no /dev/nvidia* (NVIDIA CUDA on WSL User Guide).
    p.machine = "x86_64";
    p.windows = false;
    p.wsl2 = true;
    p.libcuda_loadable = true;
    p.nvidia_device_nodes = false;
    p.wsl_dxg = p.wsl_libcuda = true;
  } else {
    return fail("--platform '" + text + "' is not one of linux-x86_64, linux-aarch64, windows, wsl2");
  }
  if (!p.wsl2) p.wsl_dxg = p.wsl_libcuda = std::nullopt;
  s.what_if = true;
  return {};
}

Expected<void> apply_gpus(Snapshot& s, const std::vector<std::string>& specs, const Knowledge& k) {
  s.gpus.clear();
  for (const std::string& spec : specs) {
    auto cc = k.resolve_gpu(spec);
    if (!cc) return std::unexpected(cc.error());
    // A capability no GPU has (sm_999, 4.2) would be diagnosed as a real GPU
    // of the future: refuse it, naming what the table knows.
    if (std::ranges::none_of(k.gpus, [&](const GpuProduct& g) { return g.cc == *cc; })) {
      std::vector<ComputeCapability> known;
      for (const GpuProduct& g : k.gpus) known.push_back(g.cc);
      std::ranges::sort(known);
      return fail("--gpu '" + spec + "': no NVIDIA GPU has compute capability " + cc->str() +
                  " (recipes/gpus.toml knows " + known.front().str() + " to " + known.back().str() +
                  "); give a product name or a capability from that table");
    }
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
  return {};
}

Expected<void> apply_driver(Snapshot& s, const std::string& text, const Knowledge& k) {
  // R570, the notation torchfix prints, names a branch as 570 does.
  const bool branch_form = text.size() > 1 && (text.front() == 'R' || text.front() == 'r');
  const std::string number = branch_form ? text.substr(1) : text;
  auto v = Version::parse(number);
  if (!v || v->str() != number || (branch_form && v->parts().size() != 1)) {
    return fail("--driver '" + text +
                "' is not a driver version (570.124.04), a branch (R570) or a CUDA version (12.8)");
  }
  const PlatformKind platform = platform_kind(s.platform, s.gpus);
  const DriverNumbering numbering = driver_numbering(platform);
  const bool windows_numbering = numbering == DriverNumbering::windows;
  if (v->major() >= 100) {
    if (v->major() < k_oldest_branch || v->major() > 9999) {
      return fail("--driver " + text + " is outside R384 (CUDA 9.0) to today's branches; give a driver like 470.82.01");
    }
    // The CUDA it supports is the tables' answer in the platform's numbering,
    // looked up by situate(); here only that some row knows it.
    const DriverGiven given = v->parts().size() == 1 ? DriverGiven::branch : DriverGiven::version;
    if (numbering != DriverNumbering::tegra && !cuda_of_driver(k, *v, given, numbering)) {
      std::string oldest;
      for (const DriverFloor& f : k.driver_floors) {
        if (f.cuda == Version({9, 0})) oldest = (windows_numbering && f.windows ? *f.windows : f.linux).str();
      }
      return fail("--driver " + text + " is older than every " + (windows_numbering ? "Windows" : "Linux") +
                  " driver in recipes/toolkits.toml" + (oldest.empty() ? "" : " (CUDA 9.0 needs " + oldest + ")"));
    }
    s.driver.version = *v;
    s.driver.cuda_version.reset();
  } else if (branch_form) {
    return fail("--driver " + text + ": a branch is R384 or later (R570)");
  } else {
    const Version cuda({v->major(), v->minor()});
    std::optional<Version> newest;
    for (const DriverFloor& f : k.driver_floors) {
      if (!newest || f.cuda > *newest) newest = f.cuda;
    }
    if (cuda < Version({9, 0}) || (newest && cuda.major() > newest->major())) {
      return fail("--driver " + text + ": the CUDA form must be between 9.0 and " +
                  (newest ? newest->str() : std::string("13.x")) + " (the CUDA a driver supports)");
    }
    s.driver.version.reset();
    s.driver.cuda_version = cuda;
  }
  s.driver.source = windows_numbering ? "what-if (Windows host driver)" : "what-if";
  s.what_if = true;
  return {};
}

// Arch flags stay empty: diagnosis takes them from the wheel table and says
// so, instead of presenting table values as torch's own.
Expected<TorchBuild> torch_from_version(const std::string& text, const Snapshot& snapshot, const Knowledge& k) {
  auto release = Version::parse(text.substr(0, text.find('+')));
  if (!release || release->parts().size() < 2) {
    return fail("--torch '" + text + "' is not a torch version like 2.6.0, 2.6.0+cu126, 2.9.1+cpu or 2.5.1+rocm6.2");
  }
  std::string variant;
  std::string version = text;
  if (const auto plus = text.find('+'); plus != std::string::npos) {
    variant = text.substr(plus + 1);
    if (variant.empty()) return fail("--torch '" + text + "': nothing after '+' (give cu126, cpu or rocm6.2)");
  } else {
    // `pip install torch==X.Y.Z` from PyPI: that release's default variant.
    const std::string where = wheel_platform_of(snapshot);
    const PypiDefault* row = k.pypi_default(*release, where);
    if (!row) {
      return fail("--torch " + text + ": recipes/torch-wheels.toml has no PyPI default for " + release->str() + " on " +
                  where + "; give the variant, like " + text + "+cu126");
    }
    variant = row->variant;
    version = text + "+" + variant;
  }
  TorchBuild torch;
  torch.version = version;
  torch.location = "(what-if)";
  if (variant.starts_with("cu")) {
    auto digits = Version::parse(variant.substr(2));
    if (!digits || digits->parts().size() != 1 || digits->major() < 100 || digits->major() > 999) {
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

PythonEnv& what_if_env(Snapshot& s) {
  for (PythonEnv& p : s.pythons) {
    if (p.torch) return p;
  }
  if (!s.pythons.empty()) return s.pythons.front();
  s.pythons.push_back(PythonEnv{});
  PythonEnv& env = s.pythons.back();
  env.interpreter = "python3";
  env.origin = "what-if";
  return env;
}

Expected<void> apply_with(Snapshot& s, const std::string& spec, const Knowledge& k) {
  const auto eq = spec.find("==");
  if (eq == std::string::npos || eq == 0 || eq + 2 >= spec.size()) {
    return fail("--with '" + spec + "' is not PKG==VERSION, like flash-attn==2.7.4");
  }
  const std::string name = normalise_distribution(spec.substr(0, eq));
  const std::string version = spec.substr(eq + 2);
  const auto release = release_part(version);
  if (!release) return fail("--with '" + spec + "': '" + version + "' is not a version");
  if (name == "torch") return fail("--with '" + spec + "': give torch with --torch " + version);
  PythonEnv& env = what_if_env(s);
  env.status = PythonStatus::ok;
  env.distributions[name] = version;
  std::erase_if(env.kernels, [&](const PackageKernels& p) { return normalise_distribution(p.distribution) == name; });
  // Triton compiles its kernels at run time: the doctor pairs it with torch
  // ([[torch_triton]]) instead of reading archs it does not have.
  if (std::ranges::find(k_triton_distributions, name) != std::end(k_triton_distributions)) {
    s.what_if = true;
    return {};
  }
  if (const ExtensionWheel* row = k.extension_wheel(name, *release)) {
    // The official wheel's archs, as the knowledge records them; one
    // module stands for the package's CUDA libraries.
    PackageKernels kernels;
    kernels.distribution = name;
    kernels.version = version;
    BinaryKernels binary;
    binary.path =
        "(what-if: " + name + " " + version + " wheel, archs from recipes/extensions.toml: " + row->arch_list + ")";
    binary.groups.push_back({row->images, 1});
    kernels.binaries.push_back(std::move(binary));
    env.kernels.push_back(std::move(kernels));
  } else {
    // No row: its archs are unknown, and the doctor says so (and still
    // applies the package's compute-capability floor, extension_checks).
    PackageKernels kernels;
    kernels.distribution = name;
    kernels.version = version;
    kernels.provenance.installer = std::string(k_with_installer);
    env.kernels.push_back(std::move(kernels));
  }
  s.what_if = true;
  return {};
}

}  // namespace

std::string borrowed_facts(const Snapshot& s, const WhatIf& w, bool probed_here) {
  if (!probed_here) return {};
  const bool any = !w.gpus.empty() || w.driver || w.torch || w.machine || !w.with.empty() || w.python_version;
  if (!any) return {};
  std::vector<std::string> parts;
  if (!s.toolkits.empty() || !s.compilers.empty()) parts.push_back("toolkits and compilers");
  if (s.platform.container) parts.push_back("container state");
  if (!w.machine) parts.push_back("platform (" + wheel_platform_of(s) + ")");
  if (!w.driver) parts.push_back("driver");
  if (!w.gpus.size()) parts.push_back("GPUs");
  if (!w.torch && std::ranges::any_of(s.pythons, [](const PythonEnv& p) { return p.torch.has_value(); }))
    parts.push_back("torch");
  if (!s.pythons.empty()) parts.push_back("installed packages");
  if (parts.empty()) return {};
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? ", " : "") + parts[i];
  return "what-if: " + text +
         " are this machine's (probed); describe another machine with --snapshot FILE or the "
         "what-if options";
}

void forget_reads(PythonEnv& env, std::initializer_list<std::string_view> names) {
  for (PackageKernels& p : env.kernels) {
    if (std::ranges::find(names, p.distribution) == names.end()) continue;
    p.provenance.torch_pins.clear();
    for (BinaryKernels& b : p.binaries) {
      b.torch_symbols.reset();
      b.cudart_major.reset();
    }
  }
}

void move_companions(PythonEnv& env, const Version& torch_release, const Knowledge& knowledge) {
  for (const char* name : k_torch_companions) {
    const auto installed = env.distributions.find(name);
    if (installed == env.distributions.end()) continue;
    installed->second = knowledge.release_for_torch(name, torch_release);
    // The release built for that torch, from its index: what the old files held says nothing of it.
    std::erase_if(env.kernels, [&](const PackageKernels& p) { return p.distribution == name; });
  }
}

Expected<void> apply_what_if(Snapshot& s, const WhatIf& w, const Knowledge& k) {
  if (w.machine) {
    if (auto r = apply_platform(s, *w.machine); !r) return r;
  }
  if (!w.gpus.empty()) {
    if (auto r = apply_gpus(s, w.gpus, k); !r) return r;
  }
  if (w.driver) {
    if (auto r = apply_driver(s, *w.driver, k); !r) return r;
  }
  if (w.torch) {
    auto torch = torch_from_version(*w.torch, s, k);
    if (!torch) return std::unexpected(torch.error());
    PythonEnv& env = what_if_env(s);
    env.status = PythonStatus::ok;
    env.error.clear();
    env.torch = *torch;
    env.distributions["torch"] = torch->version;
    std::erase_if(env.kernels, [](const PackageKernels& p) { return p.distribution == "torch"; });
    if (auto release = Version::parse(torch->version.substr(0, torch->version.find('+')))) {
      move_companions(env, *release, k);
    }
    s.what_if = true;
  }
  for (const std::string& spec : w.with) {
    if (auto r = apply_with(s, spec, k); !r) return r;
  }
  if (w.python_version) {
    auto v = Version::parse(*w.python_version);
    if (!v || v->str() != *w.python_version || v->major() != 3 || v->parts().size() < 2 || v->minor() > 99) {
      return fail("--python-version '" + *w.python_version + "' is not a Python 3 version like 3.12");
    }
    PythonEnv& env = what_if_env(s);
    env.python_version = *w.python_version;
    s.what_if = true;
  }
  return {};
}

}  // namespace torchfix
