// The findings about the host around the GPUs: WSL2 without GPU support, and
// why no GPU was found (a container without passthrough, WSL2 without the
// Windows driver, unreadable device nodes).

#include <algorithm>

#include "core/diagnosis/diagnosis_internal.hpp"

namespace torchfix::detail {

// NVIDIA's CUDA on WSL User Guide (docs.nvidia.com/cuda/wsl-user-guide): GPU
// support is WSL 2's, on Windows 11 and later builds, through the Windows
// NVIDIA driver; nothing installed inside WSL adds it.
bool diagnose_wsl_gpu_support(const Situation& x, std::vector<Finding>& out) {
  const Platform& p = x.snapshot->platform;
  if (x.platform != PlatformKind::wsl2) return false;
  // A container under Docker Desktop shares the WSL2 kernel: without
  // /dev/dxg it was started without GPUs (diagnose_no_gpu says so).
  if (p.container && p.wsl_dxg != true) return false;
  // GPUs read and libcuda loaded: CUDA reaches WSL, wherever it is mounted.
  if (!x.snapshot->gpus.empty() && p.libcuda_loadable) return false;
  const bool no_dxg = p.wsl_dxg == false;
  const bool no_libcuda = p.wsl_libcuda == false;
  if (!no_dxg && !no_libcuda) return false;
  Finding f = finding("gpu.wsl-no-gpu-support", Severity::problem, Section::gpus,
                      "WSL2 without GPU support: " +
                          std::string(no_dxg && no_libcuda ? "no /dev/dxg and no /usr/lib/wsl/lib/libcuda.so"
                                      : no_dxg             ? "no /dev/dxg"
                                                           : "no /usr/lib/wsl/lib/libcuda.so") +
                          " from Windows");
  f.details.push_back(
      "CUDA reaches WSL2 through the Windows NVIDIA driver: Windows maps /dev/dxg and the driver's libcuda into "
      "WSL (NVIDIA CUDA on WSL User Guide); a Windows build, WSL kernel or Windows driver too old for it maps neither");
  f.details.push_back("a distribution under WSL 1 has no GPU support at all: wsl --set-version <distro> 2");
  f.details.push_back("do not install a Linux NVIDIA driver inside WSL: it cannot drive the GPU there");
  f.fixes.push_back(
      {"On Windows (not inside WSL): update Windows, install the NVIDIA Windows driver (it carries WSL "
       "support), update WSL, then restart it",
       {"wsl --update   # in Windows PowerShell", "wsl --shutdown   # in Windows; then reopen the distribution"}});
  out.push_back(std::move(f));
  return true;
}

// NVIDIA's CUDA on WSL User Guide (docs.nvidia.com/cuda/wsl-user-guide,
// "CUDA Support for WSL 2", quoted in rapidsai/node#451): "The CUDA driver
// installed on Windows host will be stubbed inside the WSL 2 as libcuda.so,
// therefore users must not install any NVIDIA GPU Linux driver within WSL 2."
// A Linux driver's libcuda.so.VER in the distribution's library folders is
// found before /usr/lib/wsl/lib and cannot reach the GPU (microsoft/WSL#5265:
// nvidia-driver-440 inside WSL; microsoft/WSL#40680: nvidia-smi 535.309.01
// on a Windows 610.47 driver).
bool diagnose_wsl_linux_driver(const Situation& x, std::vector<Finding>& out) {
  const Platform& p = x.snapshot->platform;
  if (x.platform != PlatformKind::wsl2 || p.wsl_linux_driver.empty()) return false;
  auto listed = [](const std::vector<std::string>& parts, const char* separator) {
    std::string text;
    for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
    return text;
  };
  const std::string& first = p.wsl_linux_driver.front();
  Finding f = finding("gpu.wsl-linux-driver", Severity::problem, Section::gpus,
                      "A Linux NVIDIA driver is installed inside WSL2 (" + first.substr(first.rfind('/') + 1) +
                          "): it shadows the Windows driver's /usr/lib/wsl/lib/libcuda.so");
  f.details.push_back("Linux driver files: " + listed(p.wsl_linux_driver, ", "));
  f.details.push_back(
      "WSL2 uses only the Windows NVIDIA driver, mapped in as /usr/lib/wsl/lib/libcuda.so: \"users must not "
      "install any NVIDIA GPU Linux driver within WSL 2\" (NVIDIA CUDA on WSL User Guide)");
  std::vector<std::string> commands;
  if (!p.wsl_linux_driver_packages.empty()) {
    f.details.push_back("installed by the dpkg packages " + listed(p.wsl_linux_driver_packages, ", "));
    commands.push_back("sudo apt-get remove --purge " + listed(p.wsl_linux_driver_packages, " "));
  }
  if (p.wsl_linux_driver_uninstaller) commands.emplace_back("sudo nvidia-uninstall   # the .run installer's own");
  if (commands.empty()) {
    f.details.push_back("no dpkg package owns them and no nvidia-uninstall was found: remove what installed them");
  }
  commands.emplace_back("wsl --shutdown   # in Windows; then reopen the distribution");
  f.fixes.push_back(
      {"Remove the Linux driver inside WSL; keep only the Windows driver (update it on Windows if needed)",
       std::move(commands)});
  out.push_back(std::move(f));
  return true;
}

void diagnose_no_gpu(const Situation& x, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  const Platform& p = s.platform;
  // In a container a missing GPU is a problem when a CUDA build of torch
  // shows GPUs were expected; otherwise it may be a CPU-only container.
  const bool cuda_torch = std::ranges::any_of(s.pythons, [](const PythonEnv& e) { return e.torch && e.torch->cuda; });
  if (p.container && !p.nvidia_device_nodes && (!p.wsl2 || p.wsl_dxg != true)) {
    Finding f = finding("gpu.container-without-gpus", cuda_torch ? Severity::problem : Severity::warning, Section::gpus,
                        "No NVIDIA GPU: this container was started without GPU passthrough");
    f.details.push_back("no /dev/nvidia* device nodes and no working driver library inside the container");
    f.fixes.push_back({"Start the container with the GPUs passed through (needs nvidia-container-toolkit on the host)",
                       {"docker run --gpus all ...", "podman run --device nvidia.com/gpu=all ..."}});
    out.push_back(std::move(f));
  } else if (p.wsl2 && !p.libcuda_loadable) {
    Finding f = finding("gpu.wsl-no-driver", Severity::problem, Section::gpus,
                        "No NVIDIA GPU: WSL2 without the Windows NVIDIA driver's libcuda (/usr/lib/wsl/lib)");
    f.fixes.push_back(
        {"Install or update the NVIDIA driver on Windows (not inside WSL), then restart WSL", {"wsl --shutdown"}});
    out.push_back(std::move(f));
  } else if (p.nvidia_device_nodes) {
    Finding f = finding("gpu.unreadable", Severity::warning, Section::gpus,
                        "NVIDIA device nodes exist, but no probe could read a GPU");
    for (const ProbeNote& n : s.notes) f.details.push_back(n.probe + ": " + n.message);
    out.push_back(std::move(f));
  } else {
    Finding f = finding("gpu.none", Severity::warning, Section::gpus,
                        "No NVIDIA GPU found: PyTorch can only use the CPU on this machine");
    for (const ProbeNote& n : s.notes) f.details.push_back(n.probe + ": " + n.message);
    f.details.push_back("to ask about a GPU this machine does not have: torchfix doctor --gpu NAME");
    out.push_back(std::move(f));
  }
}

}  // namespace torchfix::detail
