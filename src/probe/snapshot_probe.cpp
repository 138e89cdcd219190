#include "probe/snapshot_probe.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>

#include "binary/scan.hpp"
#include "binary/torch_symbols.hpp"
#include "core/base/version_info.hpp"
#include "probe/gpu_probe.hpp"
#ifndef _WIN32
#include <sys/utsname.h>

#include "probe/libcuda_probe.hpp"
#endif
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
                                                "PYTORCH_ALLOC_CONF",
                                                "NVIDIA_PYTORCH_VERSION",
                                                "PIP_CONSTRAINT",
                                                "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
                                                "CUDA_MODULE_LOADING",
                                                "NVIDIA_VISIBLE_DEVICES",
                                                "NVIDIA_DRIVER_CAPABILITIES"};

// Returns the site-packages folders the interpreters probe_pythons will run
// most likely report (likely_site_packages_of each), so that their scan can
// start before the answers come.
std::vector<std::string> likely_site_packages(const PythonProbeOptions& options, const Environment& env) {
  std::vector<std::string> out;
  for (const auto& [interpreter, origin] : discover_pythons(options, env)) {
    for (std::string& dir : likely_site_packages_of(interpreter)) {
      if (std::ranges::find(out, dir) == out.end()) out.push_back(std::move(dir));
    }
  }
  return out;
}

// Records, for each C++ extension of `python` that links torch, which torch
// symbols it needs that the installed torch does not export (read once per
// torch from its lib folder, `exports` keyed by that folder).
void check_torch_symbols(PythonEnv& python, std::map<std::string, std::optional<binary::TorchExports>>& exports) {
  if (!python.torch || python.torch->location.empty()) return;
  const std::string lib = (std::filesystem::path(python.torch->location) / "lib").string();
  auto known = exports.find(lib);
  if (known == exports.end()) {
    auto read = binary::TorchExports::read(lib);
    known = exports.emplace(lib, read ? std::optional(std::move(*read)) : std::nullopt).first;
  }
  if (!known->second) return;
  for (PackageKernels& package : python.kernels) {
    if (package.distribution == "torch") continue;
    for (BinaryKernels& b : package.binaries) {
      if (b.links_torch) b.torch_symbols = binary::check_torch_symbols(b.path, *known->second, python.torch->version);
    }
  }
}

// Runs `/sbin/ldconfig -p` (the listing Triton reads) and records where
// Triton's -lcuda finds libcuda.so; nullopt on Windows, where Triton links
// no libcuda.so.
std::optional<LibcudaLink> probe_libcuda_link_here(const Environment& env, ProcessRunner& runner) {
#ifdef _WIN32
  (void)env;
  (void)runner;
  return std::nullopt;
#else
  Command c;
  c.program = "/sbin/ldconfig";
  c.args = {"-p"};
  c.timeout = std::chrono::seconds(5);
  const auto listing = runner.run(c);
  struct utsname names {};
  const std::string machine = ::uname(&names) == 0 ? names.machine : "x86_64";
  return probe_libcuda_link(env, listing && listing->exit_code == 0 ? listing->out : "", machine);
#endif
}

}  // namespace

Snapshot probe_machine(const ProbeOptions& options, const Environment& env, ProcessRunner& runner,
                       const Knowledge& knowledge) {
  using Clock = std::chrono::steady_clock;
  // Independent probes run at once; the slowest (the Python interpreters,
  // about 0.1 s each, and the kernel scan of their packages) start first, and
  // the scan starts on the folders the interpreters most likely report before
  // they have answered. Notes are merged in a fixed order afterwards.
  Snapshot s;
  s.torchfix_version = std::string(k_torchfix_version);
  const auto scan_deadline = Clock::now() + options.timeout;
  auto gpus = std::async(std::launch::async, [&] { return probe_gpus(env, runner, knowledge, options.timeout); });
  std::vector<ProbeNote> compiler_notes;
  auto compilers =
      std::async(std::launch::async, [&] { return probe_compilers(env, runner, options.timeout, compiler_notes); });
  // One scanning thread at a time: libelf's error state is global.
  std::future<std::map<std::string, binary::SiteScan>> early_scans;
  if (options.binaries == BinaryScan::run) {
    early_scans = std::async(std::launch::async, [&, guessed = likely_site_packages(options.python, env)] {
      std::map<std::string, binary::SiteScan> scans;
      for (const std::string& dir : guessed) scans[dir] = binary::scan_site_packages(dir, scan_deadline);
      return scans;
    });
  }
  s.platform = probe_platform(env);
  s.platform.libcuda_link = probe_libcuda_link_here(env, runner);
  std::vector<ProbeNote> python_notes;
  s.pythons = probe_pythons(options.python, env, runner, python_notes);
  std::vector<ProbeNote> toolkit_notes;
  auto toolkits = std::async(std::launch::async, [&] {
    return probe_toolkits(env, runner, knowledge, s.pythons, options.timeout, toolkit_notes);
  });
  std::vector<ProbeNote> scan_notes;
  if (options.binaries == BinaryScan::run) {
    std::map<std::string, binary::SiteScan> scans = early_scans.get();
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
        auto scan = scans.find(dir);
        if (scan == scans.end()) scan = scans.emplace(dir, binary::scan_site_packages(dir, scan_deadline)).first;
        if (scan->second.cut_short) {
          char seconds[32];
          std::snprintf(seconds, sizeof seconds, "%g", std::chrono::duration<double>(options.timeout).count());
          scan_notes.push_back({"binaries", "stopped reading the CUDA kernels in " + dir + " after " + seconds +
                                                " s (--timeout): the packages after that point were not checked"});
        }
        python.kernels.insert(python.kernels.end(), scan->second.packages.begin(), scan->second.packages.end());
      }
    }
    std::map<std::string, std::optional<binary::TorchExports>> exports;
    for (PythonEnv& python : s.pythons) check_torch_symbols(python, exports);
  }
  GpuProbeResult gpu_result = gpus.get();
  s.gpus = std::move(gpu_result.gpus);
  s.driver = std::move(gpu_result.driver);
  s.toolkits = toolkits.get();
  s.compilers = compilers.get();
  s.notes = std::move(gpu_result.notes);
  for (auto* notes : {&python_notes, &scan_notes, &toolkit_notes, &compiler_notes}) {
    s.notes.insert(s.notes.end(), notes->begin(), notes->end());
  }
  for (const char* name : k_relevant_variables) {
    if (auto it = env.find(name); it != env.end()) s.environment[name] = it->second;
  }
  // The variables application images set to mark themselves are data
  // (recipes/app-images.toml [[project]] marker_variable), not this list.
  for (const AppProject& project : knowledge.app_images.projects) {
    if (project.marker_variable.empty()) continue;
    if (auto it = env.find(project.marker_variable); it != env.end()) s.environment[it->first] = it->second;
  }
  return s;
}

}  // namespace torchfix
