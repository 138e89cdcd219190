// Packages that compile their CUDA ops at run time with CUDA_HOME's nvcc
// (recipes/extensions.toml [[runtime_build]]: DeepSpeed's op_builder, gsplat
// without its prebuilt library). Beside them an nvcc of another CUDA major
// than torch's is no longer a warning about builds the user may never run:
// every op they build fails (deepspeedai/DeepSpeed-MII#277). Pure, like
// extension_checks.cpp.

#include <algorithm>
#include <filesystem>

#include "core/base/text.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/extension_checks.hpp"
#include "core/resolver/resolver.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix::detail {
namespace {

// Returns the official wheel of the installed torch release built for CUDA
// major `major` that this platform, Python and driver run, the newest CUDA
// first; nullptr when the wheel table has none.
const WheelVariant* torch_for_major(const Situation& x, const Knowledge& k, const PythonEnv& env,
                                    const Version& release, int major) {
  if (const TorchPython* row = k.torch_python(release); row && env.python_version) {
    const auto py = Version::parse(*env.python_version);
    const auto mm = py ? Version::parse(py->major_minor()) : std::nullopt;
    if (mm && (*mm < row->python_min || row->python_max < *mm)) return nullptr;
  }
  const WheelVariant* best = nullptr;
  for (const WheelVariant& w : k.wheels) {
    if (w.platform != x.wheel_platform || !w.url.empty() || !w.covers_release(release) || w.cuda.major() != major) {
      continue;
    }
    if (x.driver.cuda && *x.driver.cuda < w.cuda) continue;  // the driver must run it natively
    if (!best || best->cuda < w.cuda) best = &w;
  }
  return best;
}

// Returns the names of the packages of `env` that build ops at run time here.
std::vector<std::string> runtime_builders(const Knowledge& k, const PythonEnv& env) {
  std::vector<std::string> names;
  for (const PackageKernels& p : env.kernels) {
    if (runtime_build_of(k, p)) names.push_back(p.distribution);
  }
  for (const auto& [name, version] : env.distributions) {
    if (std::ranges::find(env.kernels, name, &PackageKernels::distribution) != env.kernels.end()) continue;
    PackageKernels listed;  // listed by name only: no compiled library read
    listed.distribution = name;
    if (runtime_build_of(k, listed)) names.push_back(name);
  }
  return names;
}

// Adds the cheaper fix first: torch of the toolkit's major, from its index.
void add_torch_of_toolkit(const Situation& x, const Knowledge& k, const PythonEnv& env, const Version& toolkit,
                          Finding& f) {
  const auto release = Version::parse(env.torch->version.substr(0, env.torch->version.find('+')));
  const WheelVariant* w = release ? torch_for_major(x, k, env, *release, toolkit.major()) : nullptr;
  if (!w) {
    f.details.push_back("no official torch " + (release ? release->str() : env.torch->version) + " wheel for CUDA " +
                        std::to_string(toolkit.major()) +
                        ".x that this driver runs (recipes/torch-wheels.toml): the toolkit must change");
    return;
  }
  std::vector<std::string> companions;
  for (const char* name : k_torch_companions) {
    if (env.distributions.contains(name)) companions.emplace_back(name);
  }
  const WheelChange change{w, *release, true};
  f.fixes.insert(f.fixes.begin(), Fix{"Install torch " + release->str() + " from the " + w->variant + " index (CUDA " +
                                          w->cuda.major_minor() + ", the major of nvcc " + toolkit.str() +
                                          "; the driver runs it): the ops then build with the installed toolkit",
                                      wheel_commands(change, env.interpreter, companions, x.shell)});
}

// Returns `text` with {nvcc} and {torch} replaced by those CUDA versions.
std::string refusal_text(std::string text, const std::string& nvcc, const std::string& torch) {
  for (const auto& [key, value] : {std::pair{std::string("{nvcc}"), nvcc}, std::pair{std::string("{torch}"), torch}}) {
    if (const auto at = text.find(key); at != std::string::npos) text.replace(at, key.size(), value);
  }
  return text;
}

}  // namespace

const RuntimeBuild* runtime_build_of(const Knowledge& k, const PackageKernels& p) {
  const auto row =
      std::ranges::find(k.runtime_builds, normalise_distribution(p.distribution), &RuntimeBuild::distribution);
  if (row == k.runtime_builds.end()) return nullptr;
  const bool prebuilt = !p.binaries.empty() && p.provenance.installer != k_with_installer;
  return row->unless_prebuilt && prebuilt ? nullptr : &*row;
}

void check_runtime_builds(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  const std::vector<std::string> names = runtime_builders(k, env);
  if (names.empty() || !env.torch || !env.torch->cuda) return;
  const auto mismatch = std::ranges::find_if(
      out, [&](const Finding& f) { return f.id == "torch.toolkit-mismatch" && f.python == env.interpreter; });
  const Toolkit* t = x.current_toolkit;
  const auto row =
      std::ranges::find(k.runtime_builds, normalise_distribution(names.front()), &RuntimeBuild::distribution);
  const std::string torch_cuda = Version::parse(*env.torch->cuda).value_or(Version({0})).major_minor();
  if (!t) {
    Finding f = env_finding("package.runtime-build", Severity::warning, env, names.front(),
                            names.front() +
                                " compiles its CUDA ops at run time with CUDA_HOME's nvcc, and no nvcc "
                                "is installed: those ops cannot be built");
    f.details.push_back(row->source);
    f.fixes.push_back({"Install a CUDA " + torch_cuda +
                           " toolkit (torch's CUDA major; "
                           "https://developer.nvidia.com/cuda-toolkit-archive) and point CUDA_HOME at it",
                       {}});
    out.push_back(std::move(f));
    return;
  }
  if (mismatch == out.end() || !t->version) return;
  Finding& f = *mismatch;
  f.id = "package.runtime-build";
  f.severity = Severity::problem;
  f.package = names.front();
  std::string packages;
  for (const std::string& name : names) packages += (packages.empty() ? "" : ", ") + name;
  f.title = packages + (names.size() == 1 ? " compiles its" : " compile their") + " CUDA ops at run time with nvcc " +
            t->version->str() + ", and torch " + env.torch->version + " is built for CUDA " + torch_cuda +
            ": every such op fails";
  const std::vector<std::string> why = {
      "they stop with: " + refusal_text(row->refusal, t->version->major_minor(), torch_cuda), row->source,
      "CUDA_HOME's nvcc: " + t->nvcc + " (" + t->origin + ")"};
  f.details.insert(f.details.begin(), why.begin(), why.end());
  add_torch_of_toolkit(x, k, env, *t->version, f);
}

}  // namespace torchfix::detail
