// The resolver's bridge to snapshots: constraints from a snapshot, and a
// remedy applied to a snapshot (core/resolver/resolver_fix.cpp spells it as commands).

#include <algorithm>
#include <optional>

#include "core/diagnosis/diagnosis.hpp"
#include "core/diagnosis/extension_checks.hpp"
#include "core/resolver/resolver.hpp"
#include "core/resolver/resolver_internal.hpp"
#include "core/situation/ngc.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix {

Constraints constraints_for(const Situation& x, std::optional<std::size_t> python, const Knowledge& k,
                            const std::vector<std::string>& failing) {
  const Snapshot& s = *x.snapshot;
  Constraints c;
  c.gpus = x.gpus;
  c.forward_compat = !x.known_gpus.empty() &&
                     std::ranges::all_of(x.known_gpus, [](const Gpu* g) { return forward_compat_allowed(*g); });
  if (x.driver.version || x.driver.cuda) c.drivers.push_back(x.driver);
  c.platform = x.platform;
  c.l4t = x.l4t_release;
  c.container = s.platform.container;
  c.os = s.platform.os;
  if (x.current_toolkit && x.current_toolkit->version) c.toolkit = x.current_toolkit->version;
  c.toolkits = s.toolkits;
  c.compilers = s.compilers;
  if (!python || *python >= s.pythons.size()) return c;
  const PythonEnv& env = s.pythons[*python];
  const EnvFacts& facts = x.pythons[*python];
  if (!env.interpreter.empty()) c.interpreter = env.interpreter;
  if (env.python_version) c.python = Version::parse(*env.python_version);
  c.index_pages = env.index_pages;
  if (env.torch) {
    InstalledTorch t;
    t.release = facts.release.value_or(Version({0}));
    t.variant = facts.variant;
    t.cuda = facts.cuda;
    t.images = facts.images.images;
    t.version = env.torch->version;
    t.nightly = facts.nightly;
    c.torch = std::move(t);
  }
  for (const char* name : k_torch_companions) {
    if (env.distributions.contains(name)) c.companions.emplace_back(name);
  }
  auto add = [&](const std::string& name, const std::string& version) {
    if (std::ranges::any_of(c.packages, [&](const InstalledPackage& p) { return p.name == name; })) return;
    c.packages.push_back({.name = name, .version = version, .runs = std::ranges::find(failing, name) == failing.end()});
  };
  for (const PackageKernels& p : env.kernels) {
    if (p.distribution != "torch" && !p.distribution.starts_with("nvidia-")) add(p.distribution, p.version);
    if (!c.packages.empty() && c.packages.back().name == p.distribution) {
      c.packages.back().editable_root = p.provenance.editable_root;
      c.packages.back().sets_arch = !p.provenance.arch_flags.empty();
      c.packages.back().torch_abi = std::ranges::any_of(p.binaries, &BinaryKernels::links_torch);
      c.packages.back().torch_pin = detail::metadata_torch_pin(p.provenance);
      c.packages.back().abi_broken = env.torch && detail::missing_torch_symbols(p, env.torch->version);
      c.packages.back().cudart_major = detail::linked_cudart_major(p);
      c.packages.back().built_against = detail::built_against_torch(k, p);
    }
  }
  for (const auto& [name, version] : env.distributions) {
    if (k.extension(name) || k.pins(name)) add(name, version);
  }
  for (InstalledPackage& p : c.packages) {
    const auto mismatch = detail::companion_mismatch(x, k, env, p.name);
    p.variant_broken = mismatch && mismatch->from_index && !mismatch->unseen;
    const auto release = Version::parse(p.version);
    for (ComputeCapability gpu : c.gpus) {
      const BrokenRelease* row = release ? k.broken_release(p.name, *release, gpu) : nullptr;
      if (row) p.fixed_release = row->fixed;
    }
  }
  return c;
}

namespace {

// Puts `env` inside the remedy's image: its torch and CUDA, its nvcc, and
// the host driver serving the image's CUDA where its cuda-compat applies.
void enter_image(Snapshot& s, PythonEnv& env, const ContainerChange& image, const Knowledge& k) {
  // Inside the image: its torch and CUDA; its cuda-compat package makes
  // the host driver serve the image's CUDA where compatibility applies.
  TorchBuild t;
  t.version = image.release->torch;
  t.cuda = image.release->cuda.major_minor();
  if (image.arch_list) t.arch_flags = image.arch_list->images;
  t.location = "(remedy: " + image.image + ")";
  env.torch = t;
  env.status = PythonStatus::ok;
  env.distributions["torch"] = t.version;
  std::erase_if(env.kernels, [](const PackageKernels& p) { return p.distribution == "torch"; });
  // The host's nvcc is not inside the image; the image's own matches its
  // CUDA (docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes,
  // "Contents of the PyTorch container": NVIDIA CUDA x.y).
  s.toolkits = {{"/usr/local/cuda/bin/nvcc", t.location, image.release->cuda, k.nvcc_archs_for(image.release->cuda),
                 "table (recipes/toolkits.toml)"}};
  if (image.compat && (!s.driver.cuda_version || *s.driver.cuda_version < image.release->cuda)) {
    s.driver.cuda_version = image.release->cuda;
    s.driver.source = "remedy (the image's CUDA forward compatibility)";
  }
}

}  // namespace

Snapshot apply_remedy(Snapshot s, std::optional<std::size_t> python, const Remedy& r, const Knowledge& k) {
  if (r.driver) {
    // The CUDA it supports is the tables' answer, looked up by situate().
    s.driver.version = r.driver->minimum;
    s.driver.cuda_version.reset();
    s.driver.source = "remedy";
  }
  if (!python || *python >= s.pythons.size()) return s;
  PythonEnv& env = s.pythons[*python];
  auto drop_kernels = [&](const std::string& name) {
    std::erase_if(env.kernels, [&](const PackageKernels& p) { return p.distribution == name; });
  };
  if (r.container) enter_image(s, env, *r.container, k);
  if (r.wheel && r.wheel->nightly) {
    // The nightly channel: torch stays a nightly of its variant (the newest
    // one, built for the same CUDA), its companions at the builds for it.
    move_companions(env, r.wheel->release, k);
  } else if (r.wheel) {
    const WheelVariant& w = *r.wheel->wheel;
    TorchBuild t;
    const bool exact = r.wheel->same_release || r.wheel->exact;
    std::string release = exact ? r.wheel->release.str() : r.wheel->release.major_minor() + ".0";
    // torch==X.Y.* installs the newest X.Y.Z; a release moved with it is the
    // one pinned to that newest torch ([[extension_pin]]'s last row of X.Y).
    for (const PackageMove& m : r.moves) {
      const ExtensionPin* pin = m.to.empty() ? nullptr : k.pin_of(m.package, m.to);
      if (!exact && pin && detail::major_minor_of(pin->torch) == detail::major_minor_of(r.wheel->release)) {
        release = pin->torch.str();
      }
    }
    t.version = w.torch.empty() ? release + "+" + w.variant : w.torch;
    t.cuda = w.cuda.major_minor();
    t.arch_flags = w.images;
    t.location = "(remedy)";
    env.torch = t;
    env.status = PythonStatus::ok;
    env.distributions["torch"] = t.version;
    drop_kernels("torch");
    // torchvision and torchaudio come with it, at the releases built for it.
    if (const auto torch = Version::parse(release); torch && w.url.empty()) move_companions(env, *torch, k);
  }
  for (const PackageMove& m : r.moves) {
    if (!m.to.empty()) env.distributions[m.package] = m.to;
    // Moved: its new release's own pin is the tables'. Rebuilt against the
    // torch the remedy leaves: no wheel's pin applies.
    for (PackageKernels& p : env.kernels) {
      if (p.distribution != m.package) continue;
      if (m.to.empty()) p.provenance.installer = std::string(k_rebuilt_installer);
      if (!m.to.empty()) p.version = m.to;
      // Another release's files: what the old ones held says nothing of them.
      if (!m.to.empty()) p.binaries.clear();
    }
    forget_reads(env, {m.package});
  }
  for (const PackageBuild& b : r.builds) {
    std::vector<Arch> built;
    for (ComputeCapability cc : b.archs) built.push_back({ImageKind::sass, cc, ArchVariant::generic});
    if (b.package == "pytorch") {
      TorchBuild t;
      t.version =
          (env.torch ? env.torch->version.substr(0, env.torch->version.find('+')) : std::string("2.0.0")) + "+src";
      if (b.nvcc_min) t.cuda = b.nvcc_min->major_minor();
      t.arch_flags = built;
      t.location = "(remedy)";
      env.torch = t;
      env.status = PythonStatus::ok;
      drop_kernels("torch");
      continue;
    }
    PackageKernels rebuilt;
    rebuilt.distribution = b.package;
    for (const PackageKernels& p : env.kernels) {
      if (p.distribution == b.package) rebuilt.version = p.version;
    }
    rebuilt.binaries.push_back({"(rebuilt by the remedy)", {{built, 1}}, {}, {}});
    rebuilt.provenance.installer = std::string(k_rebuilt_installer);
    drop_kernels(b.package);
    env.kernels.push_back(std::move(rebuilt));
  }
  return s;
}

}  // namespace torchfix
