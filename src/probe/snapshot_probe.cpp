#include "probe/snapshot_probe.hpp"

#include <algorithm>
#include <filesystem>

#include "binary/scan.hpp"
#include "core/version_info.hpp"
#include "probe/gpu_probe.hpp"
#include "probe/toolchain_probe.hpp"

namespace torchfix {
namespace {

// Variables that change how CUDA, builds or torch behave; recorded so a saved
// snapshot (and a bug report) carries them.
constexpr const char* k_relevant_variables[] = {"CUDA_HOME",
                                                "CUDA_PATH",
                                                "CUDA_ROOT",
                                                "PATH",
                                                "LD_LIBRARY_PATH",
                                                "CUDA_VISIBLE_DEVICES",
                                                "CUDA_DEVICE_ORDER",
                                                "TORCH_CUDA_ARCH_LIST",
                                                "CC",
                                                "CXX",
                                                "CUDAHOSTCXX",
                                                "VIRTUAL_ENV",
                                                "CONDA_PREFIX",
                                                "MAX_JOBS",
                                                "NVCC_THREADS",
                                                "CUDA_CACHE_MAXSIZE",
                                                "CUDA_CACHE_DISABLE",
                                                "CUDA_CACHE_PATH",
                                                "TRITON_PTXAS_PATH",
                                                "PYTORCH_CUDA_ALLOC_CONF",
                                                "CUDA_MODULE_LOADING",
                                                "NVIDIA_VISIBLE_DEVICES",
                                                "NVIDIA_DRIVER_CAPABILITIES"};

}  // namespace

Snapshot probe_machine(const ProbeOptions& options, const Environment& env, ProcessRunner& runner,
                       const Knowledge& knowledge) {
  Snapshot s;
  s.torchfix_version = std::string(k_torchfix_version);
  s.platform = probe_platform(env);
  GpuProbeResult gpus = probe_gpus(env, runner, knowledge, options.timeout);
  s.gpus = std::move(gpus.gpus);
  s.driver = std::move(gpus.driver);
  s.notes = std::move(gpus.notes);
  s.pythons = probe_pythons(options.python, env, runner, s.notes);
  if (options.binaries == BinaryScan::run) {
    for (PythonEnv& python : s.pythons) {
      // Debian's python3-torch lives in /usr/lib/python3/dist-packages, not in
      // the interpreter's purelib: scan torch's own folder too.
      std::vector<std::string> dirs;
      if (python.site_packages) dirs.push_back(*python.site_packages);
      if (python.torch && !python.torch->location.empty()) {
        const std::string parent = std::filesystem::path(python.torch->location).parent_path().string();
        if (std::ranges::find(dirs, parent) == dirs.end()) dirs.push_back(parent);
      }
      for (const std::string& dir : dirs) {
        auto found = binary::scan_site_packages(dir);
        python.kernels.insert(python.kernels.end(), found.begin(), found.end());
      }
    }
  }
  s.toolkits = probe_toolkits(env, runner, knowledge, s.pythons, options.timeout, s.notes);
  s.compilers = probe_compilers(env, runner, options.timeout, s.notes);
  for (const char* name : k_relevant_variables) {
    if (auto it = env.find(name); it != env.end()) s.environment[name] = it->second;
  }
  return s;
}

}  // namespace torchfix
