// Diagnosis of Python environments: does torch (and every package that ships
// its own CUDA kernels) run on each GPU under this driver, and if not, which
// command fixes it.

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/extension_checks.hpp"
#include "core/diagnosis/triton_checks.hpp"
#include "core/resolver/resolver.hpp"
#include "core/situation/coverage.hpp"
#include "core/situation/ngc.hpp"

namespace torchfix::detail {
namespace {

Finding make(std::string id, Severity severity, const PythonEnv& env, std::string title) {
  return env_finding(std::move(id), severity, env, {}, std::move(title));
}

// How a package's kernel modules reach one GPU. Modules whose images are all
// arch-specific (sm_90a, sm_100f) are kernels a library loads only on those
// GPUs (torch 2.11 carries 59 sm_100a-only modules): they are not counted
// against other GPUs. A package cannot run when none of its modules reaches
// the GPU; when only some miss it, the calls into those kernels fail
// ("partial"), which a library that dispatches by capability never makes.
struct PackageReach {
  Coverage counted;           // modules with at least one generic image
  std::set<Arch> images;      // every image in the package
  Reach reach = Reach::none;  // worst reach over modules that reach it; none if none does
};

std::optional<PackageReach> package_reach(const PackageKernels& p, ComputeCapability gpu) {
  PackageReach out;
  for (const BinaryKernels& b : p.binaries) {
    for (const ModuleGroup& g : b.groups) out.images.insert(g.images.begin(), g.images.end());
    // The rule `torchfix inspect` applies to each file (core/situation/coverage.hpp).
    const Coverage c = library_coverage(b, gpu);
    out.counted.modules += c.modules;
    out.counted.native += c.native;
    out.counted.ptx_jit += c.ptx_jit;
    out.counted.none += c.none;
  }
  if (out.counted.modules == 0) return std::nullopt;
  out.reach = library_reach(out.counted);
  return out;
}

std::string partial_text(const PackageReach& r, ComputeCapability gpu) {
  return "partial: " + std::to_string(r.counted.none) + " of " + std::to_string(r.counted.modules) +
         " kernel modules have no image for " + gpu.str() +
         "; a call into one of their kernels fails with \"no kernel "
         "image is available\"";
}

// Reach of torch on one GPU, and a short description of what serves it.
Reach torch_reach(const TorchImages& t, ComputeCapability gpu, std::string& detail) {
  if (t.binaries) {
    auto r = package_reach(*t.binaries, gpu);
    if (!r) return best_reach(t.images, gpu);
    if (r->reach != Reach::none && r->counted.none > 0) detail = partial_text(*r, gpu);
    return r->reach;
  }
  return best_reach(t.images, gpu);
}

// PyTorch warns at startup when a GPU's capability lies outside the
// [lowest, highest] sm_XY of its arch flags (torch/cuda/__init__.py,
// _check_capability / _check_cubins), ignoring same-major compatibility.
bool torch_would_warn(const std::vector<Arch>& flags, ComputeCapability gpu) {
  std::optional<int> low;
  std::optional<int> high;
  for (const Arch& a : flags) {
    if (a.kind != ImageKind::sass) continue;
    low = std::min(low.value_or(a.cc.number()), a.cc.number());
    high = std::max(high.value_or(a.cc.number()), a.cc.number());
  }
  return low && (gpu.number() < *low || gpu.number() > *high);
}

// Returns the first image in `images` that runs natively on `gpu`.
std::string serving_sass(const std::vector<Arch>& images, ComputeCapability gpu) {
  for (const Arch& a : images) {
    if (a.kind == ImageKind::sass && sass_runs_on(a, gpu)) return a.name();
  }
  return {};
}

// On Jetson the driver comes with JetPack: the oldest tracked L4T release
// whose CUDA has torch's major (recipes/drivers.toml [[l4t]]), never a desktop floor.
std::string jetpack_for(const Knowledge& k, const Version& cuda) {
  const L4tRelease* best = oldest_l4t_for(k, cuda);
  const std::string major = std::to_string(cuda.major()) + ".x";
  if (!best)
    return "the driver comes with JetPack: a CUDA " + major + " build needs a JetPack that ships CUDA " + major;
  return "the driver comes with JetPack: a CUDA " + major + " build needs a JetPack that ships CUDA " + major +
         " (the oldest tracked: JetPack " + best->jetpack.str() + ", Jetson Linux R" + best->release.str() + "; " +
         best->source + ")";
}

// Checks the driver against torch's CUDA; returns false when torch cannot run
// at all. Fixes for a driver that is too old come from the resolver
// (attach_remedies), which weighs a driver upgrade against other wheels.
bool check_driver(const Situation& x, const Knowledge& k, const PythonEnv& env, const Version& cuda,
                  std::vector<Finding>& out) {
  const bool windows = windows_driver(x.platform);
  const std::optional<Version> driver_cuda = x.driver.cuda;
  if (!driver_cuda) return true;
  bool minor_compat = false;
  if (driver_fits(k, cuda, x.driver, x.platform, &minor_compat)) {
    if (minor_compat) {
      Finding f = make("driver.minor-compat", Severity::warning, env,
                       "torch " + env.torch->version + " (CUDA " + cuda.major_minor() + ") runs on this driver (CUDA " +
                           driver_cuda->major_minor() + ") only through minor-version compatibility");
      f.package = "torch";
      f.details.push_back(
          "no JIT of PTX newer than the driver, some features limited "
          "(https://docs.nvidia.com/deploy/cuda-compatibility/)");
      // The resolver's driver decision: CUDA's floor, and each GPU's own
      // (a B200 needs 570.133.20, not CUDA 12.8's 570.26).
      const DriverDecision decided = decide_driver(constraints_for(x, std::nullopt, k, {}), k, cuda);
      if (const auto& change = decided.change) {
        f.fixes.push_back({"Upgrade the driver" + std::string(windows ? " on Windows" : "") +
                               " to >= " + change->minimum.str() + " for full CUDA " + cuda.major_minor() + " support" +
                               (change->why.empty() ? "" : " (" + change->why.back() + ")"),
                           {}});
      }
      out.push_back(std::move(f));
    }
    return true;
  }
  Finding f = make("driver.too-old", Severity::problem, env,
                   "The driver is too old for torch " + env.torch->version + ": it supports CUDA " +
                       driver_cuda->major_minor() + ", torch needs CUDA " + cuda.major_minor());
  f.package = "torch";
  if (x.platform == PlatformKind::tegra) {
    f.details.push_back(jetpack_for(k, cuda));
  } else if (const MinorCompat* compat = k.minor_compat_for(cuda.major())) {
    const Version& v = windows && compat->windows ? *compat->windows : compat->linux;
    f.details.push_back("a CUDA " + std::to_string(cuda.major()) + ".x build needs a driver >= " + v.str() +
                        " (minor-version compatibility floor, " + compat->source + ")");
  }
  f.details.push_back("torch fails at start with: The NVIDIA driver on your system is too old");
  if (x.snapshot->platform.container) {
    f.details.push_back(
        "this is a container: the driver belongs to the host, and nothing installed inside the "
        "container can upgrade it");
  }
  if (x.platform == PlatformKind::wsl2) {
    f.details.push_back("this is WSL2: the driver is the Windows host's; nothing installed inside WSL can upgrade it");
  }
  out.push_back(std::move(f));
  return false;
}

// Says how torch reaches one group of identical GPUs; adds its indices to
// `running` or `failing`.
Finding judge_torch_on(const Situation& x, const EnvFacts& facts, const Version& cuda, const GpuGroup& group,
                       std::vector<int>& running, std::vector<int>& failing) {
  const PythonEnv& env = *facts.env;
  const TorchImages& images = facts.images;
  const Gpu* gpu = group.first;
  const std::vector<Arch>& flags = env.torch->arch_flags.empty() ? images.images : env.torch->arch_flags;
  std::string partial;
  Reach reach = torch_reach(images, *gpu->cc, partial);
  // PTX from CUDA X needs a driver that supports X: no minor-version compatibility for JIT.
  const bool jit_blocked = reach == Reach::ptx_jit && x.driver.cuda && *x.driver.cuda < cuda;
  Finding f = make("torch.arch", Severity::ok, env, "");
  about_gpus(f, group);
  f.package = "torch";
  f.reach = jit_blocked ? Reach::none : reach;
  f.details.push_back("torch's archs (" + images.source + "): " + join_archs(images.images));
  if (!partial.empty()) f.details.push_back(partial);
  const std::string who = "torch " + env.torch->version;
  std::vector<int>& bucket = reach == Reach::none || jit_blocked ? failing : running;
  bucket.insert(bucket.end(), group.indices.begin(), group.indices.end());
  if (reach == Reach::native) {
    const std::string sass =
        images.binaries ? std::string("its SASS") : serving_sass(images.images, *gpu->cc) + " SASS";
    f.title = who + " runs on " + group.label() + " with " + sass;
    if (torch_would_warn(flags, *gpu->cc)) {
      f.severity = Severity::note;
      f.title += "; torch's startup warning about capability " + gpu->cc->str() + " is a false alarm";
      f.details.push_back(
          "torch warns when a GPU's capability is above its highest arch, ignoring that SASS runs "
          "on later minors of the same major (CUDA Programming Guide, Binary Compatibility)");
    }
  } else if (reach == Reach::ptx_jit && !jit_blocked) {
    f.severity = Severity::warning;
    f.title = who + " reaches " + group.label() + " only through PTX JIT";
    f.details.push_back(
        "the first run of each kernel compiles it (minutes at first start); the result is cached "
        "in ~/.nv/ComputeCache, limited by CUDA_CACHE_MAXSIZE");
    f.fixes.push_back({"Give the JIT cache room for torch's kernels (4 GiB)",
                       {set_env_command(x.shell, "CUDA_CACHE_MAXSIZE", "4294967296")}});
  } else {
    f.severity = Severity::problem;
    f.title = who + " cannot run on " + group.label();
    if (jit_blocked) {
      f.details.push_back("only PTX reaches it, and PTX from CUDA " + cuda.major_minor() +
                          " needs a driver that supports CUDA " + cuda.major_minor());
    } else {
      f.details.push_back("no SASS for " + gpu->cc->str() +
                          (is_tegra(*gpu->cc) ? " (Tegra needs its exact arch)" : "") +
                          " and no PTX at or below it: kernels fail with \"no kernel image is available for "
                          "execution on the device\"");
      if (!torch_would_warn(flags, *gpu->cc)) {
        f.details.push_back("torch's startup check does not warn about this GPU; the first kernel launch fails");
      }
    }
  }
  return f;
}

// Adds "torch.mixed-gpus" when torch runs on some GPUs and not on others,
// with the CUDA_VISIBLE_DEVICES that keeps it on those it runs on.
void add_mixed_gpus(const Situation& x, const PythonEnv& env, std::vector<int> running, const std::vector<int>& failing,
                    std::vector<Finding>& out) {
  if (running.empty() || failing.empty()) return;
  std::ranges::sort(running);
  std::string ok_list;
  for (int i : running) ok_list += (ok_list.empty() ? "" : ",") + std::to_string(i);
  Finding f = make("torch.mixed-gpus", Severity::problem, env,
                   "Mixed GPUs: torch " + env.torch->version + " runs on GPU " + ok_list + " but not on the others");
  f.package = "torch";
  // GPU indices here are the driver's (PCI order); CUDA numbers fastest
  // first unless told otherwise, so pin the order before choosing.
  f.fixes.push_back({"Until reinstalled, use only the GPUs it runs on",
                     {set_env_command(x.shell, "CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
                      set_env_command(x.shell, "CUDA_VISIBLE_DEVICES", ok_list)}});
  out.push_back(std::move(f));
}

// Judges torch on every GPU group: by its images when known, else by what
// its CUDA version can hold (check_torch_by_cuda). Kernels the driver cannot
// unpack fail on every GPU.
void check_torch_on_gpus(const Situation& x, const Knowledge& k, const EnvFacts& facts, const Version& cuda,
                         std::vector<Finding>& out) {
  if (facts.images.images.empty()) {
    check_torch_by_cuda(x, k, *facts.env, cuda, out);
    return;
  }
  const PackageKernels* binaries = facts.images.binaries;
  const FatbinCompression* packed = binaries ? missed_compression_floor(x, k, *binaries, cuda.major()) : nullptr;
  std::vector<int> running;
  std::vector<int> failing;
  for (const GpuGroup& group : x.gpu_groups) {
    Finding f = judge_torch_on(x, facts, cuda, group, running, failing);
    if (packed && f.severity != Severity::problem)
      torch_cannot_unpack(x, *facts.env, *binaries, *packed, cuda, group, f);
    out.push_back(std::move(f));
  }
  if (!packed) add_mixed_gpus(x, *facts.env, std::move(running), failing, out);
}

// What a rebuild of a package whose kernels miss a GPU needs; the rebuild
// itself is the resolver's remedy (attach_remedies).
void add_rebuild_details(const Situation& x, const Knowledge& k, const PackageKernels& p,
                         const std::vector<ComputeCapability>& ccs, Finding& f) {
  for (ComputeCapability cc : ccs) {
    if (const ExtensionSupport* support = k.extension(p.distribution); support && cc < support->min_cc) {
      f.details.push_back(p.distribution + " does not support " + cc.str() +
                          " upstream (it needs compute capability >= " + support->min_cc.str() + ": " +
                          support->source + "); a source build for it is unsupported and may fail");
    }
    const auto window = k.nvcc_window_for(cc);
    if (!window) continue;
    const Toolkit* t = x.current_toolkit;
    if (!t || !t->version) {
      f.details.push_back("a rebuild for " + cc.str() + " needs " + window->str() + " (no nvcc found)");
    } else if (!toolkit_targets(*t, cc)) {
      f.details.push_back("a rebuild for " + cc.str() + " needs " + window->str() + "; the installed nvcc " +
                          t->version->str() + " cannot target " + cc.str());
    }
  }
}

void check_packages(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  for (const PackageKernels& p : env.kernels) {
    // torch is judged above; nvidia-* are CUDA's own libraries, which pick
    // kernels per arch at run time and keep some outside .nv_fatbin (measured
    // on the H200 machine: nvidia-cufft 12.0.0.61 shows one sm_75 module,
    // nvidia-cublas 13.1 has 1187 of 2975 modules without sm_90 and runs):
    // their support follows their CUDA release, checked through torch.
    if (p.distribution == "torch" || p.distribution.starts_with("nvidia-")) continue;
    std::vector<Finding> per_gpu;
    bool missing = false;
    const PackageKernels loaded = as_loaded(k, env, p);
    for (const GpuGroup& group : x.gpu_groups) {
      const Gpu* gpu = group.first;
      auto r = package_reach(loaded, *gpu->cc);
      if (!r) continue;
      const std::string who = p.distribution + (p.version.empty() ? "" : " " + p.version);
      Finding f = make("package.arch", Severity::ok, env, who + " runs on " + group.label());
      about_gpus(f, group);
      f.package = p.distribution;
      f.reach = r->reach;
      f.details.push_back("kernels: " + join_archs({r->images.begin(), r->images.end()}) + " in " +
                          std::to_string(r->counted.modules) + " kernel modules");
      if (r->reach == Reach::none) {
        f.severity = Severity::problem;
        f.title = who + " cannot run on " + group.label() + ": \"no kernel image is available\"";
        if (is_tegra(*gpu->cc))
          f.details.push_back("Tegra parts need SASS built for exactly " + gpu->cc->str() + ", or PTX at or below it");
        missing = true;
      } else if (r->counted.none > 0) {
        f.severity = Severity::warning;
        f.title = who + " lacks kernels for " + group.label() + " in " + std::to_string(r->counted.none) + " of " +
                  std::to_string(r->counted.modules) + " kernel modules";
        f.details.push_back(partial_text(*r, *gpu->cc));
        missing = true;
      } else if (r->reach == Reach::ptx_jit) {
        f.severity = Severity::warning;
        f.title = who + " reaches " + group.label() + " only through PTX JIT (slow first start)";
      }
      per_gpu.push_back(std::move(f));
    }
    if (missing) {
      for (Finding& f : per_gpu) {
        if (f.severity == Severity::problem || (f.severity == Severity::warning && f.reach != Reach::ptx_jit)) {
          add_rebuild_details(x, k, p, x.gpus, f);
        }
      }
    }
    for (Finding& f : per_gpu) out.push_back(std::move(f));
  }
  check_extension_stack(x, k, env, out);
}

// Compares torch's compiled-in arch flags (--import) with what its binaries
// hold: the flags are not an inventory (torch 2.11.0+cu130 says 12.0+PTX in
// its release notes and ships no PTX).
void compare_flags_with_binaries(const PythonEnv& env, std::vector<Finding>& out) {
  if (!env.torch || env.torch->arch_flags.empty()) return;
  const PackageKernels* torch = nullptr;
  for (const PackageKernels& p : env.kernels) {
    if (p.distribution == "torch" && !p.binaries.empty()) torch = &p;
  }
  if (!torch) return;
  std::set<Arch> held;
  for (const BinaryKernels& b : torch->binaries) {
    for (const ModuleGroup& g : b.groups) held.insert(g.images.begin(), g.images.end());
  }
  std::vector<Arch> missing;
  std::vector<Arch> extra;
  for (const Arch& a : env.torch->arch_flags) {
    if (!held.contains(a)) missing.push_back(a);
  }
  for (const Arch& a : held) {
    if (std::ranges::find(env.torch->arch_flags, a) == env.torch->arch_flags.end()) extra.push_back(a);
  }
  if (missing.empty() && extra.empty()) return;
  Finding f = make("torch.flags-vs-binaries", missing.empty() ? Severity::note : Severity::warning, env,
                   "torch's arch flags (" + join_archs(env.torch->arch_flags) + ") differ from its binaries");
  f.package = "torch";
  if (!missing.empty()) f.details.push_back("named in the flags, absent from every binary: " + join_archs(missing));
  if (!extra.empty()) f.details.push_back("in the binaries, not in the flags: " + join_archs(extra));
  f.details.push_back("torchfix decides from the binaries");
  out.push_back(std::move(f));
}

// Says why `env` cannot be judged (it does not run, or has no torch) as a
// finding in `out`; returns false then.
bool env_has_torch(const PythonEnv& env, const std::string& where, std::vector<Finding>& out) {
  if (env.status == PythonStatus::not_runnable || (env.status == PythonStatus::timed_out && !env.torch)) {
    Finding f = make("python.unusable", Severity::warning, env, "Cannot probe " + where);
    f.details.push_back(env.error);
    out.push_back(std::move(f));
    return false;
  }
  if (env.status == PythonStatus::no_torch || !env.torch) {
    out.push_back(make("python.no-torch", Severity::note, env, "No torch in " + where));
    return false;
  }
  return true;
}

// Adds "torch.import" when importing torch hangs, crashes or fails, then
// "torch.found" with what torch is and what is installed beside it.
void add_torch_found(const Situation& x, const Knowledge& k, const PythonEnv& env, const std::string& where,
                     std::vector<Finding>& out) {
  const TorchBuild& torch = *env.torch;
  if (env.status == PythonStatus::crashed || env.status == PythonStatus::timed_out ||
      env.status == PythonStatus::import_failed) {
    const char* what = env.status == PythonStatus::timed_out ? "hangs"
                       : env.status == PythonStatus::crashed ? "crashes"
                                                             : "fails";
    Finding f = make("torch.import", Severity::problem, env, std::string("`import torch` ") + what + " in " + where);
    f.package = "torch";
    f.details.push_back(env.error);
    add_import_fixes(x, k, env, f);
    out.push_back(std::move(f));
  }
  Finding found = make("torch.found", Severity::ok, env, "torch " + torch.version + " in " + where);
  found.package = "torch";
  found.details.push_back("location: " + torch.location);
  if (torch.cuda) found.details.push_back("built for CUDA " + *torch.cuda);
  if (torch.cudnn) found.details.push_back("cuDNN " + std::to_string(*torch.cudnn));
  for (const auto& [name, version] : env.distributions) found.details.push_back(name + " " + version);
  out.push_back(std::move(found));
}

// Adds "torch.rocm" or "torch.cpu-only" for a torch without CUDA: a
// problem where there are NVIDIA GPUs, a note where there are none.
void add_torch_without_cuda(const PythonEnv& env, bool have_gpus, std::vector<Finding>& out) {
  const TorchBuild& torch = *env.torch;
  const bool rocm = torch.hip.has_value();
  Finding f = make(rocm ? "torch.rocm" : "torch.cpu-only", have_gpus ? Severity::problem : Severity::note, env,
                   "torch " + torch.version + " is a " + (rocm ? "ROCm (AMD) build" : "CPU-only build") +
                       (have_gpus ? ": it cannot use the NVIDIA GPU" : " (no NVIDIA GPU here: nothing to fix)"));
  f.package = "torch";
  if (have_gpus) f.details.push_back("an installed CUDA toolkit does not change this: the wheel itself has no CUDA");
  out.push_back(std::move(f));
}

// Adds "torch.toolkit-mismatch" when the nvcc a build uses now is of
// another CUDA major than torch's: cpp_extension refuses it. The fix points
// CUDA_HOME at an installed toolkit of torch's major (the newest), else
// names the one to install at the CUDA installer's default prefix.
void check_toolkit_match(const Situation& x, const PythonEnv& env, const Version& cuda, std::vector<Finding>& out) {
  const Toolkit* t = x.current_toolkit;
  if (!t || !t->version || t->version->major() == cuda.major()) return;
  Finding f = make("torch.toolkit-mismatch", Severity::warning, env,
                   "nvcc " + t->version->str() + " does not match torch's CUDA " + cuda.major_minor() +
                       ": extension builds against this torch will fail");
  f.package = "torch";
  f.details.push_back("torch.utils.cpp_extension stops with: The detected CUDA version (" + t->version->major_minor() +
                      ") mismatches the version that was used to compile PyTorch (" + cuda.major_minor() + ")");
  const Toolkit* same_major = nullptr;
  for (const Toolkit& other : x.snapshot->toolkits) {
    if (other.version && other.version->major() == cuda.major() &&
        (!same_major || *other.version > *same_major->version)) {
      same_major = &other;
    }
  }
  if (same_major) {
    const std::string home = std::filesystem::path(same_major->nvcc).parent_path().parent_path().string();
    f.fixes.push_back(
        {"Point CUDA_HOME at the installed CUDA " + same_major->version->str() + " toolkit before building",
         {set_env_command(x.shell, "CUDA_HOME", home)}});
  } else {
    f.fixes.push_back({"Install a CUDA " + cuda.major_minor() +
                           " toolkit (https://developer.nvidia.com/cuda-toolkit-archive; no CUDA " +
                           std::to_string(cuda.major()) + ".x toolkit is installed) and point CUDA_HOME at it",
                       {set_env_command(x.shell, "CUDA_HOME", "/usr/local/cuda-" + cuda.major_minor()) +
                        "   # the installer's default"}});
  }
  out.push_back(std::move(f));
}

// Judges a CUDA torch on GPUs: the driver, then the GPUs its kernels reach
// (those it misses are said even when the driver cannot load it, since a
// driver upgrade alone would not fix them), Triton, the toolkit.
void check_cuda_torch(const Situation& x, const Knowledge& k, const EnvFacts& facts, const Version& cuda,
                      std::vector<Finding>& out) {
  const PythonEnv& env = *facts.env;
  compare_flags_with_binaries(env, out);
  if (check_driver(x, k, env, cuda, out)) {
    check_torch_on_gpus(x, k, facts, cuda, out);
  } else {
    std::vector<Finding> arch;
    check_torch_on_gpus(x, k, facts, cuda, arch);
    for (Finding& f : arch) {
      if (f.severity == Severity::problem) out.push_back(std::move(f));
    }
  }
  check_triton_stack(x, k, env, out);
  check_toolkit_match(x, env, cuda, out);
}

}  // namespace

void diagnose_pythons(const Situation& x, const Knowledge& k, std::vector<Finding>& out) {
  const bool have_gpus = !x.known_gpus.empty();
  for (const EnvFacts& facts : x.pythons) {
    const PythonEnv& env = *facts.env;
    const std::string where = env.interpreter + (env.python_version ? " (Python " + *env.python_version + ")" : "");
    if (!env_has_torch(env, where, out)) continue;
    add_torch_found(x, k, env, where, out);
    if (env.torch->hip || !env.torch->cuda) {
      add_torch_without_cuda(env, have_gpus, out);
    } else if (!facts.cuda) {
      continue;
    } else if (have_gpus) {
      // A torch that does not import gets no "runs on GPU" verdict, only what holds once it does.
      std::vector<Finding> found;
      check_cuda_torch(x, k, facts, *facts.cuda, found);
      std::erase_if(found,
                    [&](const Finding& f) { return f.severity == Severity::ok && env.status != PythonStatus::ok; });
      std::ranges::move(found, std::back_inserter(out));
    }
    check_packages(x, k, env, out);
  }
}

}  // namespace torchfix::detail
