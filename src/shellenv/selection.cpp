#include "shellenv/selection.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <tuple>

#include "core/arch_list.hpp"
#include "core/diagnosis.hpp"
#include "core/tune.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;

Version mm(const Version& v) {
  return Version({v.major(), v.minor()});
}

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

// The SASS targets this nvcc accepts: its own --list-gpu-code when probed,
// else the knowledge table for its version.
std::vector<Arch> accepted_archs(const Toolkit& toolkit, const Knowledge& knowledge) {
  if (!toolkit.archs.empty()) return toolkit.archs;
  if (toolkit.version) return knowledge.nvcc_archs_for(*toolkit.version);
  return {};
}

bool accepts_exactly(const std::vector<Arch>& archs, ComputeCapability cc) {
  return std::ranges::any_of(archs, [&](const Arch& a) {
    return a.kind == ImageKind::sass && a.variant == ArchVariant::generic && a.cc == cc;
  });
}

// The capability to compile for a GPU with this nvcc: the GPU's own when nvcc
// knows it, else the newest generic SASS nvcc knows that still runs on the GPU
// (GB10, 12.1, runs sm_120 SASS: arch-rules.md, "SASS"); the GPU's own when
// nothing fits (the build will say nvcc is too old, which is the truth).
ComputeCapability target_for(ComputeCapability gpu, const std::vector<Arch>& archs) {
  if (archs.empty() || accepts_exactly(archs, gpu)) return gpu;
  std::optional<ComputeCapability> best;
  for (const Arch& a : archs) {
    if (a.kind == ImageKind::sass && a.variant == ArchVariant::generic && sass_runs_on(a, gpu) &&
        (!best || a.cc > *best)) {
      best = a.cc;
    }
  }
  return best.value_or(gpu);
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

std::optional<int> torch_cuda_major(const Snapshot& snapshot) {
  for (const PythonEnv& env : snapshot.pythons) {
    if (env.torch && env.torch->cuda) {
      if (auto v = Version::parse(*env.torch->cuda)) return v->major();
    }
  }
  return std::nullopt;
}

// The first nvcc that knows this exact capability (any variant): what a tool
// that compiles for the GPU's own arch (Triton: sm_121a) needs.
std::optional<Version> first_nvcc_exact(const Knowledge& knowledge, ComputeCapability cc) {
  std::optional<Version> best;
  for (const NvccArchRange& range : knowledge.nvcc_archs) {
    for (const Arch& arch : range.archs) {
      if (arch.cc != cc) continue;
      const Version first = range.first.value_or(Version({1, 0}));
      if (!best || first < *best) best = first;
    }
  }
  return best;
}

std::optional<int> bound_for(const HostCompilerBounds& bounds, CompilerFamily family) {
  if (family == CompilerFamily::gcc) return bounds.gcc_below;
  if (family == CompilerFamily::clang) return bounds.clang_below;
  return std::nullopt;
}

// Turns a compiler path into its C or C++ sibling by name: g++-13 <-> gcc-13,
// clang++ <-> clang, c++ -> cc (the probes list whichever name they found).
std::string sibling(const std::string& path, bool want_cxx) {
  fs::path p(path);
  std::string name = p.filename().string();
  const auto swap = [&](std::string_view from, std::string_view to) {
    if (auto at = name.find(from); at != std::string::npos) {
      name.replace(at, from.size(), to);
      return true;
    }
    return false;
  };
  if (want_cxx) {
    if (name.find("g++") == std::string::npos && name.find("clang++") == std::string::npos) {
      if (!swap("gcc", "g++")) swap("clang", "clang++");
    }
  } else if (!swap("g++", "gcc") && !swap("clang++", "clang")) {
    swap("c++", "cc");
  }
  return (p.parent_path() / name).string();
}

const HostCompiler* default_compiler(const Snapshot& snapshot) {
  for (const char* origin : {"CUDAHOSTCXX", "CXX", "PATH"}) {
    for (const HostCompiler& c : snapshot.compilers) {
      if (c.origin == origin) return &c;
    }
  }
  return snapshot.compilers.empty() ? nullptr : &snapshot.compilers.front();
}

void add_toolkit_vars(const Snapshot& snapshot, const Toolkit& toolkit, std::vector<EnvVar>& out) {
  auto root = toolkit_root(toolkit);
  if (!root) return;
  const std::string what = "nvcc " + version_text(toolkit.version) + " (found via " + toolkit.origin + ")";
  std::string why = what + " is the toolkit for builds";
  if (auto major = torch_cuda_major(snapshot)) {
    why += toolkit.version && toolkit.version->major() == *major
               ? ": same CUDA major as torch, as extension builds require"
               : ": no toolkit matches torch's CUDA " + std::to_string(*major) + ".x (extension builds will refuse)";
  }
  // cpp_extension and PyTorch's CMake look for the toolkit in CUDA_HOME
  // (shared/facts/pytorch-build.md, "Environment the build reads").
  out.push_back({"CUDA_HOME", root->string(), VarAction::set, Purpose::build, why});
  out.push_back({"PATH", (*root / "bin").string(), VarAction::prepend, Purpose::build,
                 "puts " + what + " first on PATH, so `nvcc` and CUDA_HOME agree"});
}

void add_arch_list(const Snapshot& snapshot, const Toolkit* toolkit, const Knowledge& knowledge,
                   std::vector<EnvVar>& out) {
  const auto ccs = gpu_ccs(snapshot);
  if (ccs.empty()) return;
  const std::vector<Arch> archs = toolkit ? accepted_archs(*toolkit, knowledge) : std::vector<Arch>{};
  std::vector<ComputeCapability> targets;
  std::string why = "compile extensions for this machine's GPUs: ";
  for (std::size_t i = 0; i < ccs.size(); ++i) {
    const ComputeCapability target = target_for(ccs[i], archs);
    targets.push_back(target);
    why += (i ? ", " : "") + gpu_label(snapshot, ccs[i]);
    if (target != ccs[i])
      why += " via " + target.str() + " SASS (nvcc " + version_text(toolkit->version) + " has no sm_" +
             std::to_string(ccs[i].number()) + ")";
  }
  why += "; PTX of the newest for newer GPUs";
  const ArchList list = arch_list_for_gpus(targets, PtxPolicy::newest);
  out.push_back({"TORCH_CUDA_ARCH_LIST", render(list, ArchFormat::torch), VarAction::set, Purpose::build, why});
}

void add_host_compiler(const Snapshot& snapshot, const Toolkit& toolkit, const Knowledge& knowledge,
                       std::vector<EnvVar>& out) {
  const HostCompiler* current = default_compiler(snapshot);
  if (!toolkit.version || !current || !current->version) return;
  const HostCompilerBounds* bounds = knowledge.host_bounds_for(*toolkit.version);
  if (!bounds) return;
  const auto below = bound_for(*bounds, current->family);
  if (!below || current->version->major() < *below) return;
  // Prefer the same family, then the newest version nvcc still accepts.
  const HostCompiler* best = nullptr;
  for (const HostCompiler& c : snapshot.compilers) {
    auto bound = bound_for(*bounds, c.family);
    if (!c.version || !bound || c.version->major() >= *bound) continue;
    const auto rank = [&](const HostCompiler& x) { return std::tuple(x.family == current->family, *x.version); };
    if (!best || rank(c) > rank(*best)) best = &c;
  }
  if (!best) return;
  // nvcc's host_config.h rejects newer compilers ("unsupported GNU version");
  // bounds from recipes/toolkits.toml (torch cpp_extension.py, spack).
  const std::string why = std::string(to_string(current->family)) + " " + current->version->str() + " (" +
                          current->path + ") is too new for nvcc " + toolkit.version->str() + " (" +
                          std::string(to_string(current->family)) + " < " + std::to_string(*below) + "); use " +
                          std::string(to_string(best->family)) + " " + best->version->str();
  const std::string cxx = sibling(best->path, true);
  out.push_back({"CUDAHOSTCXX", cxx, VarAction::set, Purpose::build, "nvcc's host compiler: " + why});
  out.push_back({"CC", sibling(best->path, false), VarAction::set, Purpose::build, "C compiler of the build: " + why});
  out.push_back({"CXX", cxx, VarAction::set, Purpose::build, "C++ compiler of the build: " + why});
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

std::optional<std::string> triton_version(const PythonEnv& env) {
  for (const auto& [name, version] : env.distributions) {
    std::string lower = name;
    std::ranges::transform(lower, lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::ranges::replace(lower, '_', '-');
    if (lower == "triton" || lower == "pytorch-triton") return version;
  }
  return std::nullopt;
}

void add_triton_ptxas(const Snapshot& snapshot, const SelectionInputs& inputs, std::vector<EnvVar>& out) {
  for (const PythonEnv& env : snapshot.pythons) {
    const auto version = triton_version(env);
    if (!version) continue;
    const auto row = triton_ptxas_for(inputs.triton, *version);
    if (!row) continue;
    for (ComputeCapability cc : gpu_ccs(snapshot)) {
      const auto needed = first_nvcc_exact(*inputs.knowledge, cc);
      const bool blackwell_tool = cc.number() >= 100 && row->ptxas_blackwell;
      const Version bundled = blackwell_tool ? *row->ptxas_blackwell : row->ptxas;
      if (!needed || mm(bundled) >= *needed) continue;
      // Any toolkit new enough will do; take the newest.
      const Toolkit* best = nullptr;
      for (const Toolkit& t : snapshot.toolkits) {
        if (t.version && mm(*t.version) >= *needed && toolkit_root(t) && (!best || *t.version > *best->version))
          best = &t;
      }
      if (!best) continue;
      const std::string name = blackwell_tool ? "TRITON_PTXAS_BLACKWELL_PATH" : "TRITON_PTXAS_PATH";
      if (std::ranges::any_of(out, [&](const EnvVar& v) { return v.name == name; })) continue;
      out.push_back({name, (*toolkit_root(*best) / "bin" / "ptxas").string(), VarAction::set, Purpose::runtime,
                     "Triton " + *version + " bundles ptxas " + bundled.str() + ", which does not know sm_" +
                         std::to_string(cc.number()) + "a of " + gpu_label(snapshot, cc) +
                         " (needs CUDA >= " + needed->str() + "); use nvcc " + best->version->str() + "'s ptxas"});
    }
  }
}

// The environment part of `torchfix tune`'s advice (core/tune.hpp): the
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

std::optional<std::size_t> choose_toolkit(const Snapshot& snapshot, const Knowledge& knowledge) {
  const auto major = torch_cuda_major(snapshot);
  const auto ccs = gpu_ccs(snapshot);
  std::optional<std::size_t> best;
  std::tuple<bool, bool, Version> best_rank;
  for (std::size_t i = 0; i < snapshot.toolkits.size(); ++i) {
    const Toolkit& t = snapshot.toolkits[i];
    if (!t.version) continue;
    const auto archs = accepted_archs(t, knowledge);
    const bool all = std::ranges::all_of(ccs, [&](ComputeCapability cc) { return target_for(cc, archs) == cc; });
    const auto rank = std::tuple(major && t.version->major() == *major, all, *t.version);
    if (!best || rank > best_rank) {
      best = i;
      best_rank = rank;
    }
  }
  return best;
}

std::vector<EnvVar> select_variables(const Snapshot& snapshot, const SelectionInputs& inputs, PurposeFilter filter) {
  std::vector<EnvVar> out;
  const Knowledge& knowledge = *inputs.knowledge;
  const auto chosen = choose_toolkit(snapshot, knowledge);
  const Toolkit* toolkit = chosen ? &snapshot.toolkits[*chosen] : nullptr;
  if (toolkit) add_toolkit_vars(snapshot, *toolkit, out);
  add_arch_list(snapshot, toolkit, knowledge, out);
  if (inputs.jobs) {
    out.push_back({"MAX_JOBS", std::to_string(inputs.jobs->max_jobs), VarAction::set, Purpose::build,
                   "parallel compile jobs that fit this machine: " + inputs.jobs->reason});
    out.push_back({"NVCC_THREADS", std::to_string(inputs.jobs->nvcc_threads), VarAction::set, Purpose::build,
                   "threads per nvcc (flash-attn, vLLM read it); MAX_JOBS already accounts for them"});
  }
  if (toolkit) add_host_compiler(snapshot, *toolkit, knowledge, out);
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
