#include "core/diagnosis/triton_checks.hpp"

#include <algorithm>

#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/diagnosis/extension_checks.hpp"
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

void check_torch_triton_pin(const Situation& x, const PythonEnv& env, std::vector<Finding>& out) {
  const PackageKernels* torch = nullptr;
  for (const PackageKernels& p : env.kernels) {
    if (p.distribution == "torch") torch = &p;
  }
  if (!torch) return;
  for (const std::string& pin : torch->provenance.triton_pins) {
    const auto eq = pin.find("==");
    if (eq == std::string::npos) continue;
    const std::string name = lower_dashed(pin.substr(0, pin.find_first_of(" =")));
    const std::string wanted = pin.substr(eq + 2, pin.find_first_of(" ;,", eq + 2) - eq - 2);
    std::string installed;
    std::string installed_name;
    for (const auto& [dist, version] : env.distributions) {
      const std::string lower = lower_dashed(dist);
      if (lower == "triton" || lower == "pytorch-triton") {
        if (installed.empty() || lower == name) {
          installed = version;
          installed_name = lower;
        }
      }
    }
    if (installed.empty() || (installed_name == name && installed == wanted)) continue;
    Finding f = env_finding("triton.pin", Severity::warning, env, installed_name,
                            "torch " + torch->version + " requires " + name + "==" + wanted + "; " + installed_name +
                                " " + installed + " is installed");
    f.details.push_back("Requires-Dist of torch " + torch->version + ": " + pin);
    f.details.push_back("torch.compile generates code for the Triton it was released with; another one may fail");
    f.fixes.push_back(
        {"Install the Triton torch requires",
         {command_line(x.shell, {env.interpreter, "-m", "pip", "install", "--no-deps", name + "==" + wanted})}});
    out.push_back(std::move(f));
  }
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
    f.fixes.push_back({"Install a Triton the table covers (" + first.str() +
                           " or newer) with a torch "
                           "that requires it, or point TRITON_PTXAS_PATH at a CUDA toolkit's ptxas that knows the GPU",
                       {}});
    out.push_back(std::move(f));
  }
}

// Triton assembles for the GPU's exact arch with its bundled ptxas: torch
// runs, but torch.compile and Triton kernels fail on a ptxas that predates it.
void check_triton_ptxas(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  const auto version = triton_version(env);
  if (!version) return;
  for (const GpuGroup& group : x.gpu_groups) {
    const Gpu* gpu = group.first;
    auto gap = triton_ptxas_gap(k, *version, *gpu->cc);
    if (!gap) continue;
    if (auto set = s.environment.find(gap->variable); set != s.environment.end() && !set->second.empty()) continue;
    Finding f = env_finding("triton.ptxas", Severity::warning, env, "triton",
                            "Triton " + gap->triton + " cannot compile kernels for " + group.label() + ": its ptxas " +
                                gap->bundled.str() + " predates sm_" + std::to_string(gpu->cc->number()) + "a");
    about_gpus(f, group);
    f.details.push_back("torch runs, but torch.compile and Triton kernels stop with: ptxas fatal : Value 'sm_" +
                        std::to_string(gpu->cc->number()) + "a' is not defined for option 'gpu-name'");
    f.details.push_back("needs the ptxas of CUDA >= " + gap->needed.str() + " (" + gap->source + ")");
    if (const auto ptxas = ptxas_for(*gap, s.toolkits)) {
      f.fixes.push_back(
          {"Point Triton at nvcc " + ptxas->toolkit->version->str() + "'s ptxas (torchfix env exports it)",
           {set_env_command(x.shell, gap->variable, ptxas->path)}});
    }
    if (gap->fixed_in) {
      f.fixes.push_back(
          {"Or install Triton " + gap->fixed_in->str() + " or newer, whose bundled ptxas knows it",
           {command_line(x.shell, {env.interpreter, "-m", "pip", "install", "triton>=" + gap->fixed_in->str()})}});
    } else {
      f.fixes.push_back(
          {"Or install a CUDA toolkit >= " + gap->needed.str() + " and point " + gap->variable + " at its bin/ptxas",
           {}});
    }
    out.push_back(std::move(f));
  }
}

}  // namespace

void check_triton_stack(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out) {
  check_triton_ptxas(x, k, env, out);
  check_inductor_floor(x, env, out);
  check_torch_triton_pin(x, env, out);
  check_untracked_triton(x, k, env, out);
}

}  // namespace torchfix::detail
