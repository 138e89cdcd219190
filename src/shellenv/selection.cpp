#include "shellenv/selection.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <tuple>

#include "core/arch/arch_list.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/triton.hpp"
#include "core/tune/tune.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;

std::string version_text(const std::optional<Version>& v) {
  return v ? v->str() : std::string("?");
}

// The toolkit root is the folder above nvcc's bin/ (/usr/local/cuda-13.0,
// site-packages/nvidia/cuda_nvcc); nullopt for an nvcc not in a bin/ folder.
std::optional<fs::path> toolkit_root(const Toolkit& toolkit) {
  const fs::path bin = fs::path(toolkit.nvcc).parent_path();
  if (bin.filename() != "bin" || !bin.has_parent_path()) return std::nullopt;
  return bin.parent_path();
}

std::vector<ComputeCapability> gpu_ccs(const Snapshot& snapshot) {
  std::vector<ComputeCapability> out;
  for (const Gpu& gpu : snapshot.gpus) {
    if (gpu.cc && std::ranges::find(out, *gpu.cc) == out.end()) out.push_back(*gpu.cc);
  }
  std::ranges::sort(out);
  return out;
}

std::string gpu_label(const Snapshot& snapshot, ComputeCapability cc) {
  for (const Gpu& gpu : snapshot.gpus) {
    if (gpu.cc == cc && !gpu.name.empty()) return gpu.name + " (" + cc.str() + ")";
  }
  return "GPU " + cc.str();
}

void add_toolkit_vars(const Toolkit& toolkit, const std::string& reason, std::vector<EnvVar>& out) {
  auto root = toolkit_root(toolkit);
  if (!root) return;
  const std::string what = "nvcc " + version_text(toolkit.version) + " (found via " + toolkit.origin + ")";
  // cpp_extension and PyTorch's CMake look for the toolkit in CUDA_HOME
  // (shared/facts/pytorch-build.md, "Environment the build reads").
  out.push_back({"CUDA_HOME", root->string(), VarAction::set, Purpose::build, what + ": " + reason});
  out.push_back({"PATH", (*root / "bin").string(), VarAction::prepend, Purpose::build,
                 "puts " + what + " first on PATH, so `nvcc` and CUDA_HOME agree"});
}

void add_arch_list(const Snapshot& snapshot, const Toolchain& toolchain, std::vector<EnvVar>& out) {
  if (toolchain.arch.empty()) return;
  std::string why = "compile extensions for this machine's GPUs: ";
  const auto ccs = gpu_ccs(snapshot);
  for (std::size_t i = 0; i < ccs.size(); ++i) why += (i ? ", " : "") + gpu_label(snapshot, ccs[i]);
  why += " (" + toolchain.arch_reason + ")";
  out.push_back(
      {"TORCH_CUDA_ARCH_LIST", render(toolchain.arch, ArchFormat::torch), VarAction::set, Purpose::build, why});
}

// The compiler variables only when the decision differs from what a build
// would use anyway (the user's CUDAHOSTCXX/CXX, or g++ on PATH).
void add_host_compiler(const Toolchain& toolchain, std::vector<EnvVar>& out) {
  if (!toolchain.compiler) return;
  const HostCompilerChoice& c = *toolchain.compiler;
  if (toolchain.current && toolchain.current->path == c.cxx.path) return;
  std::string why = c.reason;
  if (toolchain.current && toolchain.current_outside_bounds) {
    why = std::string(to_string(toolchain.current->family)) + " " + version_text(toolchain.current->version) + " (" +
          toolchain.current->path + ") is too new for nvcc " +
          (toolchain.toolkit ? version_text(toolchain.toolkit->version) : "?") + " (" + toolchain.bounds_text +
          "); use " + std::string(to_string(c.cxx.family)) + " " + version_text(c.cxx.version) + ": " + c.reason;
  }
  out.push_back({"CUDAHOSTCXX", c.cxx.path, VarAction::set, Purpose::build, "nvcc's host compiler: " + why});
  if (!c.cc.empty())
    out.push_back({"CC", c.cc, VarAction::set, Purpose::build, "C compiler of the build (same family): " + why});
  out.push_back({"CXX", c.cxx.path, VarAction::set, Purpose::build, "C++ compiler of the build: " + why});
}

void add_ptx_cache(const Snapshot& snapshot, const Knowledge& knowledge, std::vector<EnvVar>& out) {
  // The doctor decides how torch reaches each GPU (from torch's binaries,
  // its arch flags or the official wheel's list); one source of truth.
  for (const Finding& f : diagnose(snapshot, knowledge).findings) {
    if (f.id != "torch.arch" || f.reach != Reach::ptx_jit) continue;
    // CUDA Programming Guide, "CUDA Environment Variables": the JIT cache
    // (~/.nv/ComputeCache) holds at most CUDA_CACHE_MAXSIZE bytes, default
    // 1 GiB (256 MiB on older drivers and embedded platforms), maximum 4 GiB;
    // torch's PTX for one GPU outgrows the default and is recompiled at
    // every start (minutes).
    out.push_back({"CUDA_CACHE_MAXSIZE", "4294967296", VarAction::set, Purpose::runtime,
                   f.title + ": keep up to 4 GiB (the maximum) of JIT-compiled kernels cached"});
    return;
  }
}

// Triton's bundled ptxas against each GPU: the one decision the doctor makes
// too (core/situation/triton.hpp); here it becomes the override variable.
void add_triton_ptxas(const Snapshot& snapshot, const SelectionInputs& inputs, std::vector<EnvVar>& out) {
  for (const PythonEnv& env : snapshot.pythons) {
    const auto version = triton_version(env);
    if (!version) continue;
    for (ComputeCapability cc : gpu_ccs(snapshot)) {
      const auto gap = triton_ptxas_gap(*inputs.knowledge, *version, cc);
      if (!gap) continue;
      const auto ptxas = ptxas_for(*gap, snapshot.toolkits);  // the newest toolkit new enough
      if (!ptxas) continue;
      if (std::ranges::any_of(out, [&](const EnvVar& v) { return v.name == gap->variable; })) continue;
      out.push_back({gap->variable, ptxas->path, VarAction::set, Purpose::runtime,
                     "Triton " + *version + " bundles ptxas " + gap->bundled.str() + ", which does not know sm_" +
                         std::to_string(cc.number()) + "a of " + gpu_label(snapshot, cc) + " (needs CUDA >= " +
                         gap->needed.str() + "); use nvcc " + ptxas->toolkit->version->str() + "'s ptxas"});
    }
  }
}

// The environment part of `torchfix tune`'s advice (core/tune/tune.hpp): the
// allocator's expandable segments under the name the installed torch reads,
// and CUDA_MODULE_LOADING only where neither torch nor CUDA sets it already.
void add_runtime_settings(const Snapshot& snapshot, std::vector<EnvVar>& out) {
  const auto env = std::ranges::find_if(snapshot.pythons, [](const PythonEnv& p) { return p.torch.has_value(); });
  if (env == snapshot.pythons.end()) return;
  std::optional<std::string> alloc_conf;
  for (const char* name : {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"}) {
    if (auto it = snapshot.environment.find(name); it != snapshot.environment.end() && !alloc_conf)
      alloc_conf = it->second;
  }
  const bool tegra = std::ranges::any_of(snapshot.gpus, [](const Gpu& g) { return g.cc && is_tegra(*g.cc); });
  const auto cuda = env->torch->cuda ? Version::parse(*env->torch->cuda) : std::nullopt;
  for (const RuntimeVar& v : runtime_env(Version::parse(env->torch->version), cuda, tegra, alloc_conf)) {
    out.push_back({v.name, v.value, VarAction::set, Purpose::runtime, v.reason});
  }
}

}  // namespace

std::vector<EnvVar> select_variables(const Snapshot& snapshot, const SelectionInputs& inputs, PurposeFilter filter) {
  std::vector<EnvVar> out;
  const Knowledge& knowledge = *inputs.knowledge;
  if (const auto& tc = inputs.toolchain) {
    if (tc->toolkit) add_toolkit_vars(*tc->toolkit, tc->toolkit_reason, out);
    add_arch_list(snapshot, *tc, out);
    // A snapshot that does not know its CPUs gets no MAX_JOBS rather than a guess.
    if (snapshot.platform.cpus > 0 || snapshot.platform.cpu_quota) {
      out.push_back({"MAX_JOBS", std::to_string(tc->jobs.jobs), VarAction::set, Purpose::build,
                     "parallel compile jobs that fit this machine: " + tc->jobs.reason});
      out.push_back({"NVCC_THREADS", std::to_string(tc->jobs.nvcc_threads), VarAction::set, Purpose::build,
                     "threads per nvcc (flash-attn, vLLM read it); MAX_JOBS already accounts for them"});
    }
    add_host_compiler(*tc, out);
  }
  if (snapshot.platform.wsl2 && !snapshot.platform.libcuda_loadable) {
    // WSL2 maps the Windows driver's libcuda into /usr/lib/wsl/lib (NVIDIA
    // CUDA on WSL User Guide); when the loader does not find it there,
    // nothing CUDA runs. Elsewhere LD_LIBRARY_PATH is left alone: torch
    // wheels load their own CUDA libraries, and a toolkit's lib64 in front
    // can shadow them.
    out.push_back({"LD_LIBRARY_PATH", "/usr/lib/wsl/lib", VarAction::prepend, Purpose::runtime,
                   "WSL2: libcuda.so.1 of the Windows driver lives here and did not load"});
  }
  add_ptx_cache(snapshot, knowledge, out);
  add_triton_ptxas(snapshot, inputs, out);
  add_runtime_settings(snapshot, out);
  std::erase_if(out, [&](const EnvVar& v) { return !wanted(filter, v.purpose); });
  return out;
}

}  // namespace torchfix::shellenv
