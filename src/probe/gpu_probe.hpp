#pragma once
// Probes the GPUs and the driver: NVML (dlopen; nvml.dll on Windows), then
// the CUDA driver API, then nvidia-smi; on Linux the driver version also
// from /sys and /proc.
// Every probe is bounded by a timeout; a probe that fails adds a ProbeNote
// ("unknown"), never an exception or a crash.

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Holds what the GPU probes found.
struct GpuProbeResult {
  std::vector<Gpu> gpus;
  Driver driver;
  std::vector<ProbeNote> notes;
};

/// Probes GPUs and the driver. `timeout` bounds each probe (library calls run
/// on a watchdog thread; nvidia-smi through `runner`). `knowledge` names the
/// compute capability from the product name when only an old nvidia-smi
/// (no compute_cap field) answered. `root` prefixes /sys and /proc paths (tests).
GpuProbeResult probe_gpus(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge,
                          std::chrono::milliseconds timeout, const std::filesystem::path& root = "/");

/// Names this platform's NVML and CUDA driver API libraries:
/// libnvidia-ml.so.1 and libcuda.so.1 on Linux, nvml.dll and nvcuda.dll on
/// Windows (library_posix.cpp, library_win.cpp).
extern const char* const k_nvml_library;
extern const char* const k_cuda_library;

/// Names the libraries probe_gpus loads: names searched by the dynamic
/// loader, or paths (tests point them at fakes or at nothing).
struct GpuLibraries {
  std::string nvml = k_nvml_library;
  std::string cuda = k_cuda_library;
};

/// Probes GPUs and the driver as above, loading NVML and libcuda from
/// `libraries`. Never throws; every probe that fails adds a note.
GpuProbeResult probe_gpus(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge,
                          std::chrono::milliseconds timeout, const std::filesystem::path& root,
                          const GpuLibraries& libraries);

/// Probes the host: machine, OS, WSL2, container, device nodes, whether
/// libcuda loads, CUDA_VISIBLE_DEVICES, usable CPUs and MemAvailable.
/// `root` prefixes every file path read (tests use a fake tree).
Platform probe_platform(const Environment& env, const std::filesystem::path& root = "/");

}  // namespace torchfix
