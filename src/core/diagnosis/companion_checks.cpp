// Torch's companions (torchvision, torchaudio) beside a CUDA torch: their
// compiled operators must be there and of torch's variant. A `+cpu`
// torchvision beside torch 2.1.0+cu118 imports, and every op on a CUDA tensor
// fails ("Could not run 'torchvision::nms' with arguments from the 'CUDA'
// backend", ultralytics/ultralytics#5059). Pure, like extension_checks.cpp.

#include <algorithm>

#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/extension_checks.hpp"
#include "core/resolver/resolver_internal.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix::detail {
namespace {

// Returns the name of the file at `path` (either separator) up to its first dot.
std::string file_stem(std::string_view path) {
  std::string_view name = path.substr(path.find_last_of("/\\") + 1);
  return std::string(name.substr(0, name.find('.')));
}

const CompanionOps* ops_row(const Knowledge& k, std::string_view name) {
  const auto row = std::ranges::find(k.companion_ops, name, &CompanionOps::distribution);
  return row == k.companion_ops.end() ? nullptr : &*row;
}

const EnvFacts* facts_of(const Situation& x, const PythonEnv& env) {
  const auto f = std::ranges::find(x.pythons, &env, &EnvFacts::env);
  return f == x.pythons.end() ? nullptr : &*f;
}

// What a companion of `name` that does not match says when it is used.
std::string fails_with(std::string_view name, CompanionMismatch::Kind kind) {
  const std::string n(name);
  switch (kind) {
    case CompanionMismatch::Kind::cpu_build:
      return "ops on CUDA tensors fail with: Could not run '" + n + "::...' with arguments from the 'CUDA' backend";
    case CompanionMismatch::Kind::other_major:
      return "its import fails with: Detected that PyTorch and " + n + " were compiled with different CUDA versions";
    case CompanionMismatch::Kind::no_ops:
      break;
  }
  return "its ops fail with: No such operator " + n + "::... (its C++ operators are not registered)";
}

// Says what the local tag of `version` says against torch's CUDA `cuda`: a
// CPU build, or a build for another CUDA major; nullopt when it says neither.
std::optional<CompanionMismatch> tag_mismatch(const std::string& version, const Version& cuda) {
  const auto plus = version.find('+');
  if (plus == std::string::npos) return std::nullopt;
  const std::string tag = version.substr(plus + 1);
  if (tag == "cpu") {
    return CompanionMismatch{version, "its local tag +cpu names a CPU build: its compiled ops hold no CUDA kernels",
                             CompanionMismatch::Kind::cpu_build};
  }
  const auto built = Version::from_cuda_variant(tag);
  if (!built || built->major() == cuda.major()) return std::nullopt;
  return CompanionMismatch{version,
                           "its local tag +" + tag + " names a build for CUDA " + built->major_minor() +
                               ", torch's is CUDA " + cuda.major_minor() + " (another major)",
                           CompanionMismatch::Kind::other_major};
}

// Says what the files read of companion `p` lack: its ops library, or CUDA
// kernels in it; nullopt when they hold both (or were not read: a what-if).
std::optional<CompanionMismatch> files_mismatch(const PythonEnv& env, const CompanionOps& row, const PackageKernels* p,
                                                const std::string& version) {
  using Kind = CompanionMismatch::Kind;
  const std::string library = row.distribution + "/" + row.library;
  if (!p) {
    // The scan read torch's own files here: the companion's ops library was not among what it found.
    const bool scanned = std::ranges::find(env.kernels, "torch", &PackageKernels::distribution) != env.kernels.end();
    if (!scanned) return std::nullopt;
    // Absence is no proof (an .egg install is not read, a snapshot may list
    // torch's files alone): a warning, which moves nothing.
    return CompanionMismatch{version,
                             "its ops library " + library +
                                 " was not among the files read (an .egg install is not read): its ops may be missing",
                             Kind::no_ops, false, true};
  }
  if (p->provenance.installer == k_with_installer) return std::nullopt;
  const bool has_library =
      std::ranges::any_of(p->binaries, [&](const BinaryKernels& b) { return file_stem(b.path) == row.library; });
  if (!has_library) return CompanionMismatch{version, "no compiled ops: its install holds no " + library, Kind::no_ops};
  const bool kernels = std::ranges::any_of(p->binaries, [](const BinaryKernels& b) {
    return std::ranges::any_of(b.groups, [](const ModuleGroup& g) { return !g.images.empty() && g.modules > 0; });
  });
  if (kernels) return std::nullopt;
  return CompanionMismatch{version, "its compiled ops (" + library + ") hold no CUDA kernels: a CPU build",
                           Kind::cpu_build};
}

}  // namespace

std::optional<CompanionMismatch> companion_mismatch(const Situation& x, const Knowledge& k, const PythonEnv& env,
                                                    std::string_view name) {
  // Without an NVIDIA GPU nothing runs on CUDA tensors: a CPU companion is as good.
  if (!env.torch || !env.torch->cuda || env.torch->hip || x.known_gpus.empty()) return std::nullopt;
  if (std::ranges::find(k_torch_companions, name) == std::end(k_torch_companions)) return std::nullopt;
  const auto cuda = Version::parse(*env.torch->cuda);
  const auto installed = env.distributions.find(std::string(name));
  const auto kernels = std::ranges::find(env.kernels, name, &PackageKernels::distribution);
  const PackageKernels* p = kernels == env.kernels.end() ? nullptr : &*kernels;
  if (!cuda || (installed == env.distributions.end() && !p)) return std::nullopt;
  const std::string version = p ? p->version : installed->second;
  std::optional<CompanionMismatch> m = tag_mismatch(version, *cuda);
  if (const CompanionOps* row = ops_row(k, name); !m && row) m = files_mismatch(env, *row, p, version);
  if (!m) return std::nullopt;
  // Torch's own index serves the companion built for it, except where torch
  // came from no index: NVIDIA's JetPack wheels (torch alone) and local builds.
  const EnvFacts* facts = facts_of(x, env);
  m->from_index = x.platform != PlatformKind::tegra && facts && !facts->variant.empty();
  return m;
}

// Says where a companion's ops do not match torch's CUDA build. Where torch's
// index serves the companion, the fix is the resolver's (the installed torch
// reinstalled with its companions from that index: reinstall_companions);
// elsewhere the release paired with torch is built from source here.
void check_companions(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  for (const char* name : k_torch_companions) {
    const auto m = companion_mismatch(x, k, env, name);
    if (!m) continue;
    Finding f = env_finding(
        m->from_index ? "package.companion-variant" : "package.companion-build",
        m->unseen ? Severity::warning : Severity::problem, env, name,
        std::string(name) + " " + m->version + " does not match torch " + env.torch->version + ": " + m->why);
    f.details.push_back(fails_with(name, m->kind));
    if (const CompanionOps* row = ops_row(k, name)) f.details.push_back(row->source);
    std::erase_if(out, [&](const Finding& v) {
      return (v.id == "package.arch" || v.id == "package.unknown") && v.python == env.interpreter && v.package == name;
    });
    if (!m->from_index) add_companion_build(x, k, env, name, f);
    out.push_back(std::move(f));
  }
}

void add_companion_build(const Situation& x, const Knowledge& k, const PythonEnv& env, std::string_view name,
                         Finding& f) {
  const EnvFacts* facts = facts_of(x, env);
  const std::string paired = facts && facts->release ? k.release_for_torch(name, *facts->release) : "";
  const Recipe* recipe = k.build_recipe(std::string(name));
  const std::string torch = facts && facts->release ? facts->release->str() : env.torch->version;
  if (paired.empty() || !recipe) {
    f.fixes.push_back({"Build the " + std::string(name) + " release paired with torch " + torch +
                           " from source against it: no index has a CUDA build of it for this torch, and "
                           "recipes/torch-wheels.toml [[extension_pin]] pairs no " +
                           std::string(name) + " release with torch " + torch,
                       {}});
    return;
  }
  std::string tag = recipe->tag_format;
  if (const auto at = tag.find("{version}"); at != std::string::npos) tag.replace(at, 9, paired);
  const std::string source = k.pin_of(name, paired) ? " (" + k.pin_of(name, paired)->source + ")" : "";
  f.fixes.push_back({"Build " + std::string(name) + " " + paired + ", the release paired with torch " + torch + source +
                         ", from source against the installed torch: no index has a CUDA build of it for " +
                         (x.platform == PlatformKind::tegra ? "Jetson (NVIDIA's JetPack wheels are torch alone)"
                                                            : "a torch built locally"),
                     {"torchfix build " + std::string(name) + " --ref " + tag + " --arch " + cc_list(x.gpus)}});
}

}  // namespace torchfix::detail
