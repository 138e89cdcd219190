#pragma once
// Probes the whole machine into one Snapshot.

#include <chrono>

#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"
#include "probe/python_probe.hpp"

namespace torchfix {

/// Says whether to read the CUDA kernels of installed packages from disk.
enum class BinaryScan { skip, run };

/// Configures probe_machine.
struct ProbeOptions {
  PythonProbeOptions python;
  BinaryScan binaries = BinaryScan::run;
  std::chrono::milliseconds timeout{10'000};  // each GPU, nvcc and compiler probe
};

/// Probes platform, GPUs and driver, Python environments (and the kernels of
/// their packages), toolkits and host compilers. Never fails: what a probe
/// could not learn is left unknown and explained in Snapshot::notes.
Snapshot probe_machine(const ProbeOptions& options, const Environment& env, ProcessRunner& runner,
                       const Knowledge& knowledge);

}  // namespace torchfix
