#pragma once
// Helpers shared by the diagnosis files; not part of the public API.

#include <string>
#include <vector>

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix::detail {

/// Returns a finding with no details or fixes yet.
Finding finding(std::string id, Severity severity, Section section, std::string title);

/// Returns `v` as text, or "(version unknown)".
std::string version_or(const std::optional<Version>& v);

/// Returns the warning for `tc.current`, an MSVC outside `bounds` (the range
/// of nvcc `tc.toolkit`), with the toolset to build with, a CUDA that accepts
/// it and nvcc's own escape hatch as fixes (msvc_findings.cpp).
Finding msvc_outside_bounds(const Toolchain& tc, const HostCompilerBounds& bounds, const Knowledge& k);
/// Returns "GPU 0 (NVIDIA H200, 9.0)" or "GPU 0 (9.0)".
std::string gpu_label(const Gpu& gpu);
/// Makes `f` about the GPUs of `group` (gpu: its first index; gpus: all).
void about_gpus(Finding& f, const GpuGroup& group);
/// Returns image names joined by ", " ("sm_80, sm_90, compute_90"), or "none".
std::string join_archs(const std::vector<Arch>& archs);
/// Returns true when `toolkit` can emit SASS that runs on `cc`.
bool toolkit_targets(const Toolkit& toolkit, ComputeCapability cc);

/// Appends "WSL2 without GPU support" when the platform is WSL2 and the
/// snapshot recorded no /dev/dxg or no /usr/lib/wsl/lib/libcuda.so (source:
/// NVIDIA's CUDA on WSL User Guide); returns true when it did.
bool diagnose_wsl_gpu_support(const Situation& situation, std::vector<Finding>& out);
/// Appends "a Linux NVIDIA driver inside WSL2" when the snapshot recorded a
/// Linux driver's libcuda/libnvidia-ml outside /usr/lib/wsl/lib, with the fix
/// that removes it (its dpkg packages, or the .run installer's
/// nvidia-uninstall); returns true when it did.
bool diagnose_wsl_linux_driver(const Situation& situation, std::vector<Finding>& out);
/// Appends why no GPU was found, when the platform tells (diagnosis_platform.cpp).
void diagnose_no_gpu(const Situation& situation, std::vector<Finding>& out);

/// Appends the checks of each Python environment (torch and packages with kernels).
void diagnose_pythons(const Situation& situation, const Knowledge& knowledge, std::vector<Finding>& out);

/// Appends the verdict on a CUDA torch whose arch list is unknown (no table
/// row, binaries not read), from what torch's CUDA `cuda` can hold
/// (recipes/toolkits.toml [[nvcc_arch]]): a "torch.arch" problem for each GPU
/// group outside that nvcc's window, and one "torch.archs-unknown" warning
/// naming the GPUs it cannot decide.
void check_torch_by_cuda(const Situation& situation, const Knowledge& knowledge, const PythonEnv& env,
                         const Version& cuda, std::vector<Finding>& out);

/// Returns the verdicts of a snapshot: every check, with the fixes that are
/// not remedies (the resolver's remedies are attached by attach_remedies).
Diagnosis diagnose_verdicts(const Snapshot& snapshot, const Knowledge& knowledge);
/// Returns the verdicts of a Situation (situate() of the snapshot).
Diagnosis diagnose_verdicts(const Situation& situation, const Knowledge& knowledge);

/// Appends one problem for each group of identical GPUs the driver cannot
/// drive (per-generation driver range, recipes/drivers.toml).
void diagnose_gpu_drivers(const Situation& situation, const Knowledge& knowledge, std::vector<Finding>& out);

/// Resolves the problems of each Python environment (and the machine's driver
/// problems) with the resolver, checks each winner by applying it and
/// diagnosing again, and puts the checked remedies first among the fixes of
/// the findings they fix; records them in `diagnosis.remedies`.
void attach_remedies(const Situation& situation, const Knowledge& knowledge, Diagnosis& diagnosis);

/// Adds the fixes of `f` ("torch.import": `import torch` fails in `env`). On
/// Windows, where the probe read the DLL torch could not load
/// (PythonEnv::failed_dll), its imports that the loader found nowhere go
/// into the details, and the installer of the first one recipes/drivers.toml
/// [[runtime_dll]] knows is the first fix (a one-line download and
/// unattended install for the shell); imports no row knows get a fix
/// without a command. Last, `-X faulthandler` as a diagnostic fix
/// (FixRole::diagnose), never put forward as the first (failed_dll.cpp).
void add_import_fixes(const Situation& situation, const Knowledge& knowledge, const PythonEnv& env, Finding& f);

}  // namespace torchfix::detail
