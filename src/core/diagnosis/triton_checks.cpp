#include "core/diagnosis/triton_checks.hpp"

#include <algorithm>
#include <filesystem>

#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/extension_checks.hpp"
#include "core/resolver/resolver.hpp"
#include "core/situation/triton.hpp"

namespace torchfix::detail {
namespace {

std::string lower_dashed(std::string name) {
  std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::ranges::replace(name, '_', '-');
  return name;
}

void check_inductor_floor(const Situation& x, const PythonEnv& env, std::vector<Finding>& out) {
  const ComputeCapability floor{7, 0};
  for (const GpuGroup& group : x.gpu_groups) {
    if (!(group.cc < floor)) continue;
    Finding f = env_finding(
        "torch.compile-floor", Severity::warning, env, "torch",
        "torch.compile cannot use " + group.label() + ": Inductor's Triton backend needs compute capability >= 7.0");
    about_gpus(f, group);
    f.details.push_back("eager torch runs; torch.compile stops with: Found " +
                        (group.name.empty() ? "the GPU" : group.name) +
                        " which is too old to be supported by the triton GPU compiler, which is used as the backend. "
                        "Triton only supports devices of CUDA Capability >= 7.0 (torch/_inductor)");
    f.details.push_back(
        "bfloat16 needs compute capability >= 8.0 (torch.cuda.is_bf16_supported() is False): use "
        "float16 on this GPU");
    f.fixes.push_back({"Run without compilation (torch.compile becomes a no-op) and use float16 instead of bfloat16",
                       {set_env_command(x.shell, "TORCH_COMPILE_DISABLE", "1")}});
    out.push_back(std::move(f));
  }
}

// Says whether the marker of torch's Requires-Dist line `pin` holds here:
// torch's wheels pin `triton==X; platform_system == "Linux" and
// platform_machine == "x86_64"` (or without the machine), so the pin is
// absent on Windows and, with the machine, on aarch64.
bool marker_holds(const Situation& x, const std::string& pin) {
  const auto semi = pin.find(';');
  if (semi == std::string::npos) return true;
  const std::string marker = pin.substr(semi);
  if (marker.find("Linux") != std::string::npos && x.platform == PlatformKind::windows) return false;
  if (marker.find("x86_64") != std::string::npos && x.wheel_platform != "x86_64") return false;
  return true;
}

// Sets the Triton torch needs from its own METADATA (`triton_pins`) where
// a pin applies here: "triton==3.3.1" or "triton (==3.0.0)" (one release),
// "triton~=3.8.0" (torch 2.14 on: any 3.8.x); returns false when none does.
bool wanted_from_metadata(const Situation& x, const PythonEnv& env, TritonPair& pair) {
  for (const PackageKernels& p : env.kernels) {
    if (p.distribution != "torch") continue;
    for (const std::string& pin : p.provenance.triton_pins) {
      const std::string spec = pin.substr(0, pin.find(';'));
      const bool series = spec.find("~=") != std::string::npos;
      const auto op = series ? spec.find("~=") : spec.find("==");
      if (op == std::string::npos || spec.find(',') != std::string::npos || !marker_holds(x, pin)) continue;
      std::string version = spec.substr(op + 2, spec.find_first_of(" )", op + 2) - op - 2);
      const auto parsed = Version::parse(version);
      if (!parsed) continue;
      pair.wanted_name = lower_dashed(spec.substr(0, spec.find_first_of(" (=~")));
      pair.wanted = series ? parsed->major_minor() : version;
      pair.exact = !series;
      pair.source = "Requires-Dist of torch " + p.version + ": " + pin;
      return true;
    }
  }
  return false;
}

// Sets the Triton a released torch needs from [[torch_triton]]: the
// platform's distribution (triton-windows on Windows); returns false for a
// nightly (its Triton moves between releases) or a torch the table lacks.
bool wanted_from_table(const Situation& x, const Knowledge& k, const PythonEnv& env, TritonPair& pair) {
  const auto text = env.distributions.find("torch");
  if (!env.torch || (text != env.distributions.end() && text->second.find(".dev") != std::string::npos)) return false;
  const auto release = Version::parse(env.torch->version);
  if (!release) return false;
  const std::string name = x.platform == PlatformKind::windows ? "triton-windows" : "triton";
  const TorchTriton* row = k.triton_for_torch(name, *release);
  if (!row) return false;
  pair.wanted_name = name;
  pair.wanted = row->triton.str();
  pair.exact = row->exact();
  pair.source = "recipes/triton-ptxas.toml [[torch_triton]]: " + row->source;
  return true;
}

// The installed Triton distributions of `env`, lower-dashed name -> version.
std::vector<std::pair<std::string, std::string>> installed_tritons(const PythonEnv& env) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [dist, version] : env.distributions) {
    const std::string name = lower_dashed(dist);
    if (std::ranges::find(k_triton_distributions, name) != std::end(k_triton_distributions))
      out.emplace_back(name, version);
  }
  return out;
}

void check_torch_triton_pin(const Situation& x, const PythonEnv& env, const std::optional<TritonPair>& pair,
                            std::vector<Finding>& out) {
  // Two distributions of one import package: package.shared-import decides.
  if (!pair || pair->matches() || installed_tritons(env).size() > 1) return;
  const bool breaks = pair->breaks_compile();
  const std::string needs =
      pair->exact ? pair->wanted_name + "==" + pair->wanted : pair->wanted_name + " " + pair->wanted + ".x";
  Finding f = env_finding("triton.pin", breaks ? Severity::problem : Severity::warning, env, pair->installed_name,
                          "torch " + pair->torch + " needs " + needs + "; " + pair->installed_name + " " +
                              pair->installed + " is installed" + (breaks ? ": torch.compile fails" : ""));
  f.details.push_back(pair->source);
  if (breaks) {
    f.details.push_back(
        "torch.compile (Inductor) calls the API of the Triton minor release torch was released with; each torch "
        "minor release works only with its own (torch 2.7 with Triton 3.4: AttributeError: type object "
        "'CompiledKernel' has no attribute 'launch_enter_hook', woct0rdho/triton-windows#137)");
  } else {
    f.details.push_back("torch.compile generates code for the Triton it was released with; another one may fail");
  }
  f.fixes.push_back({"Install the Triton torch " + pair->torch + " needs (" + pair->requirement() + ")",
                     {triton_install_command(x, env, *pair)}});
  out.push_back(std::move(f));
}

void check_untracked_triton(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  const auto version = triton_version(env);
  if (!version || k.triton.empty() || k.triton_ptxas(*version)) return;
  const Version first = std::ranges::min_element(k.triton, {}, &TritonPtxas::min)->min;
  const auto release = Version::parse(*version);
  if (!release || !(Version({release->major(), release->minor()}) < first)) return;
  for (const GpuGroup& group : x.gpu_groups) {
    if (group.cc.major < 10) continue;
    Finding f =
        env_finding("triton.untracked", Severity::note, env, "triton",
                    "Triton " + *version + " is older than recipes/triton-ptxas.toml (from " + first.str() +
                        "): whether its bundled ptxas knows sm_" + std::to_string(group.cc.number()) + "a is unknown");
    about_gpus(f, group);
    f.unchecked = true;
    f.fixes.push_back({"Install a Triton the table covers (" + first.str() +
                           " or newer) with a torch "
                           "that requires it, or point TRITON_PTXAS_PATH at a CUDA toolkit's ptxas that knows the GPU",
                       {}});
    out.push_back(std::move(f));
  }
}

// Returns the torch facts of `env`, nullptr when it has no torch.
const EnvFacts* torch_facts(const Situation& x, const PythonEnv& env) {
  for (const EnvFacts& facts : x.pythons) {
    if (facts.env == &env && facts.release) return &facts;
  }
  return nullptr;
}

// Returns the official wheel of torch `release` that the Triton fix installs:
// one that carries kernels for `gpu` and runs on the driver, the installed
// variant first, else the lowest CUDA; nullptr when the tables have none.
const WheelVariant* torch_wheel_for(const Situation& x, const Knowledge& k, const EnvFacts& torch,
                                    const Version& release, ComputeCapability gpu) {
  const WheelVariant* best = nullptr;
  for (const WheelVariant& w : k.wheels) {
    if (w.platform != x.wheel_platform || !w.covers_release(release) || best_reach(w.images, gpu) == Reach::none ||
        !driver_fits(k, w.cuda, x.driver, x.platform))
      continue;
    if (w.variant == torch.variant) return &w;
    if (!best || w.cuda < best->cuda) best = &w;
  }
  return best;
}

// Returns the Triton row that torch `release` requires (the newest row whose
// torch is at or below it), nullptr when none is tracked.
const TritonPtxas* triton_of_torch(const Knowledge& k, const Version& release) {
  const TritonPtxas* best = nullptr;
  for (const TritonPtxas& row : k.triton) {
    if (row.torch && *row.torch <= release && (!best || *row.torch > *best->torch)) best = &row;
  }
  return best;
}

// Adds the fix that moves Triton through torch, which requires its Triton
// exactly (a Triton installed on its own breaks torch.compile): torch
// `fixed_in_torch` when the installed one is older, else the Triton the
// installed torch requires; a bare Triton upgrade where there is no torch.
void add_triton_move(const Situation& x, const Knowledge& k, const PythonEnv& env, const GpuGroup& group,
                     const TritonPtxasGap& gap, Finding& f) {
  const EnvFacts* torch = torch_facts(x, env);
  const auto pip = [&](const std::string& spec) {
    return command_line(x.shell, {env.interpreter, "-m", "pip", "install", spec});
  };
  if (!torch) {
    if (gap.fixed_in)
      f.fixes.push_back({"Install Triton " + gap.fixed_in->str() + " or newer, whose bundled ptxas knows " + gap.target,
                         {pip("triton>=" + gap.fixed_in->str())}});
    return;
  }
  if (!gap.fixed_in_torch) return;
  const Version installed({torch->release->major(), torch->release->minor()});
  // A nightly of release X.Y ("2.7.0.dev20250226") may still pin an older
  // Triton than X.Y.0 does: it moves to the release.
  const auto text = env.distributions.find("torch");
  const bool nightly = text != env.distributions.end() && text->second.find(".dev") != std::string::npos;
  if (installed > *gap.fixed_in_torch || (installed == *gap.fixed_in_torch && !nightly)) {
    if (const TritonPtxas* row = triton_of_torch(k, installed))
      f.fixes.push_back({"Install the Triton torch " + installed.str() + " requires (" + row->min.str() +
                             "), whose bundled ptxas knows " + gap.target,
                         {pip("triton==" + row->min.str() + ".*")}});
    return;
  }
  const WheelVariant* wheel = torch_wheel_for(x, k, *torch, *gap.fixed_in_torch, group.cc);
  if (!wheel) return;
  std::vector<std::string> companions;
  for (const char* name : k_torch_companions) {
    if (env.distributions.contains(name)) companions.emplace_back(name);
  }
  f.fixes.push_back(
      {"Install torch " + gap.fixed_in_torch->str() + " from " + wheel->variant + ": it requires Triton " +
           gap.fixed_in->str() + ", whose bundled ptxas knows " + gap.target,
       wheel_commands(WheelChange{wheel, *gap.fixed_in_torch, false}, env.interpreter, companions, x.shell)});
}

// Adds the fixes of a ptxas gap: the installed toolkit's ptxas through the
// override variable where this Triton can drive it, else the torch whose
// pinned Triton bundles a ptxas that knows the arch (torch requires its
// Triton exactly, so a Triton installed on its own breaks torch.compile).
void add_ptxas_fixes(const Situation& x, const Knowledge& k, const PythonEnv& env, const GpuGroup& group,
                     const TritonPtxasGap& gap, Finding& f) {
  if (const auto ptxas = ptxas_for(gap, x.snapshot->toolkits)) {
    f.fixes.push_back({"Point Triton at nvcc " + ptxas->toolkit->version->str() + "'s ptxas (torchfix env exports it)",
                       {set_env_command(x.shell, gap.variable, ptxas->path)}});
  } else if (!gap.exportable) {
    f.details.push_back("Triton " + gap.triton + " reads its override as " + gap.variable +
                        ", a name no shell can export: only another Triton helps");
  } else if (gap.cuda_max && gap.needed > *gap.cuda_max) {
    f.details.push_back("pointing " + gap.variable + " at a newer ptxas does not help: Triton " + gap.triton +
                        " cannot drive a ptxas newer than CUDA " + gap.cuda_max->str() +
                        " (its ptx_get_version), and " + gap.target + " needs CUDA " + gap.needed.str());
  }
  add_triton_move(x, k, env, group, gap, f);
  if (f.fixes.empty() && gap.closable_by_variable()) {
    f.fixes.push_back(
        {"Install a CUDA toolkit >= " + gap.needed.str() + " and point " + gap.variable + " at its bin/ptxas", {}});
  }
}

// Triton assembles for the GPU's exact arch with its bundled ptxas: torch
// runs, but torch.compile and Triton kernels fail on a ptxas that predates it.
// `coming` judges the Triton the pin fix installs instead of the installed one.
void check_triton_ptxas(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out,
                        const std::optional<std::string>& coming = std::nullopt) {
  const Snapshot& s = *x.snapshot;
  const auto version = coming ? coming : triton_version(env);
  if (!version) return;
  for (const GpuGroup& group : x.gpu_groups) {
    auto gap = triton_ptxas_gap(k, *version, group.cc);
    if (!gap) continue;
    if (gap->closable_by_variable()) {
      if (auto set = s.environment.find(gap->variable); set != s.environment.end() && !set->second.empty()) continue;
    }
    Finding f = env_finding("triton.ptxas", Severity::warning, env, "triton",
                            "Triton " + gap->triton + " cannot compile kernels for " + group.label() + ": its ptxas " +
                                gap->bundled.str() + " predates " + gap->target);
    about_gpus(f, group);
    f.details.push_back("torch runs, but torch.compile and Triton kernels stop with: ptxas fatal : Value '" +
                        gap->target + "' is not defined for option 'gpu-name'");
    f.details.push_back("needs the ptxas of CUDA >= " + gap->needed.str() + " (" + gap->source + ")");
    if (coming) f.details.push_back("Triton " + *coming + " is the one the Triton fix above installs");
    add_ptxas_fixes(x, k, env, group, *gap, f);
    out.push_back(std::move(f));
  }
}

std::string comma_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The fix of a missing libcuda.so: a link in a folder the user owns, found
// through the variable this Triton reads (TRITON_LIBCUDA_PATH from 2.2,
// read by libcuda_dirs(); 2.0 asks `whereis` and reads no variable, but gcc
// searches LIBRARY_PATH). Triton 2.1 reads no variable and asserts that
// libcuda.so sits beside an ldconfig entry: only a link there helps.
Fix libcuda_link_fix(const Version& triton, const std::string& target) {
  const std::string own = "$HOME/.local/lib/triton-libcuda";
  const std::string link = "mkdir -p \"" + own + "\" && ln -sf " + quote_posix(target) + " \"" + own + "/libcuda.so\"";
  if (triton >= Version({2, 2})) {
    return {
        "Link libcuda.so to the driver's libcuda.so.1 in a folder of your own and point Triton at it "
        "(TRITON_LIBCUDA_PATH, read by Triton's libcuda_dirs())",
        {link, "export TRITON_LIBCUDA_PATH=\"" + own + "\""}};
  }
  if (triton < Version({2, 1})) {
    return {
        "Link libcuda.so to the driver's libcuda.so.1 in a folder of your own and put it on gcc's LIBRARY_PATH "
        "(Triton 2.0 reads no variable of its own)",
        {link, "export LIBRARY_PATH=\"" + own + "${LIBRARY_PATH:+:$LIBRARY_PATH}\""}};
  }
  const std::string dir = std::filesystem::path(target).parent_path().string();
  return {"Link libcuda.so beside the driver's libcuda.so.1 (Triton 2.1 reads no variable and looks only there)",
          {"sudo ln -s " + quote_posix(target) + " " + quote_posix(dir + "/libcuda.so")}};
}

// Triton 2.0-3.5 build their launcher with `gcc ... -lcuda -L<libcuda_dirs()>`,
// which needs the unversioned libcuda.so that driver packages without their
// development link (and WSL2's /usr/lib/wsl/lib, off ld's folders) leave out:
// eager torch runs, torch.compile stops at its first kernel.
void check_libcuda_link(const Situation& x, const PythonEnv& env, std::vector<Finding>& out) {
  const auto& link = x.snapshot->platform.libcuda_link;
  const auto text = triton_version(env);
  const auto triton = text ? Version::parse(text->substr(0, text->find('+'))) : std::nullopt;
  const EnvFacts* torch = torch_facts(x, env);
  if (!link || !triton || !torch || *torch->release < Version({2, 0}) || !(*triton < Version({3, 6}))) return;
  const auto compiles = [](const GpuGroup& g) { return !(g.cc < ComputeCapability{7, 0}); };
  const auto group = std::ranges::find_if(x.gpu_groups, compiles);
  if (group == x.gpu_groups.end()) return;
  // 2.1-2.3 assert that libcuda.so sits in libcuda_dirs() itself.
  const bool own_dirs_only = !(*triton < Version({2, 1})) && *triton < Version({3, 0});
  if (link->libcuda_so && !own_dirs_only) return;
  if (link->libcuda_so &&
      std::ranges::find(link->triton_dirs, std::filesystem::path(*link->libcuda_so).parent_path().string()) !=
          link->triton_dirs.end())
    return;
  Finding f = env_finding(
      "triton.libcuda", Severity::warning, env, "triton",
      "torch.compile cannot build Triton's launcher: no libcuda.so where Triton " + *text + " links -lcuda");
  about_gpus(f, *group);
  f.details.push_back(
      "eager torch runs; torch.compile stops at its first kernel with: /usr/bin/ld: cannot find -lcuda");
  f.details.push_back(
      "Triton's libcuda_dirs(): " + (link->triton_dirs.empty() ? "none" : comma_list(link->triton_dirs)) +
      "; then gcc's: " + comma_list(link->linker_dirs));
  f.details.push_back(
      "driver packages without the development link, and WSL2's /usr/lib/wsl/lib, give only "
      "libcuda.so.1 (pytorch/pytorch#94585, microsoft/WSL#8587); Triton 3.6 links libcuda.so.1 itself");
  std::optional<std::string> target = link->libcuda_so_1;
  if (!target && x.snapshot->platform.wsl2) target = "/usr/lib/wsl/lib/libcuda.so.1";
  if (target) {
    f.fixes.push_back(libcuda_link_fix(*triton, *target));
  } else {
    f.fixes.push_back(
        {"Link libcuda.so to the driver's libcuda.so.1 (no libcuda.so.1 was found by Triton's lookup: "
         "run `sudo ldconfig` first)",
         {}});
  }
  out.push_back(std::move(f));
}

}  // namespace

bool TritonPair::breaks_compile() const {
  const auto have = Version::parse(installed);
  const auto want = Version::parse(wanted);
  return installed_name != wanted_name || !have || !want || have->major_minor() != want->major_minor();
}

bool TritonPair::matches() const {
  if (installed_name != wanted_name) return false;
  return exact ? installed == wanted : !breaks_compile();
}

std::string TritonPair::requirement() const {
  if (exact) return wanted_name + "==" + wanted;
  const auto want = Version::parse(wanted);
  return wanted_name + "<" + std::to_string(want->major()) + "." + std::to_string(want->minor() + 1);
}

std::optional<TritonPair> triton_pair(const Situation& x, const Knowledge& k, const PythonEnv& env) {
  const auto installed = installed_tritons(env);
  if (!env.torch || installed.empty()) return std::nullopt;
  TritonPair pair;
  pair.torch = env.torch->version;
  if (!wanted_from_metadata(x, env, pair) && !wanted_from_table(x, k, env, pair)) return std::nullopt;
  if (!Version::parse(pair.wanted)) return std::nullopt;
  pair.installed_name = installed.front().first;
  pair.installed = installed.front().second;
  for (const auto& [name, version] : installed) {
    if (name != pair.wanted_name) continue;
    pair.installed_name = name;
    pair.installed = version;
  }
  return pair;
}

std::string triton_install_command(const Situation& x, const PythonEnv& env, const TritonPair& pair) {
  // triton-windows' README and its maintainer (#137) cap the series: pip -U
  // then takes its newest post release.
  if (!pair.exact) return command_line(x.shell, {env.interpreter, "-m", "pip", "install", "-U", pair.requirement()});
  return command_line(x.shell, {env.interpreter, "-m", "pip", "install", "--no-deps", pair.requirement()});
}

void check_triton_stack(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  const auto pair = triton_pair(x, k, env);
  // The ptxas checks judge the installed Triton: where the pin finding
  // replaces it, they wait for the Triton it installs (one decision).
  const bool replaced = pair && pair->breaks_compile() && installed_tritons(env).size() == 1;
  if (!replaced) check_triton_ptxas(x, k, env, out);
  // Inductor (torch.compile) came with torch 2.0.
  if (const EnvFacts* torch = torch_facts(x, env); torch && !(*torch->release < Version({2, 0}))) {
    check_inductor_floor(x, env, out);
  }
  check_torch_triton_pin(x, env, pair, out);
  // Then the ptxas of the Triton that fix installs, where it names one release of PyPI's triton.
  if (replaced && pair->exact && pair->wanted_name != "triton-windows")
    check_triton_ptxas(x, k, env, out, pair->wanted);
  if (!replaced) check_untracked_triton(x, k, env, out);
  check_libcuda_link(x, env, out);
}

}  // namespace torchfix::detail
