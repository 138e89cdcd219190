// probe_platform: the host facts the diagnosis needs around the GPU (WSL2,
// Jetson's L4T release, a container without GPU passthrough, CPUs and memory
// for build sizing).

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "probe/gpu_libraries.hpp"
#include "probe/gpu_parsers.hpp"
#include "probe/gpu_probe.hpp"
#include "probe/resources.hpp"

namespace torchfix {
namespace {

bool path_exists(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// Under the real root, libcuda is found by the loader's own search; under a
// test root only the root's files count. The handle is kept open: the GPU
// probe loads the same library and a dlclose of libcuda buys nothing.
bool libcuda_loads(const std::filesystem::path& root, bool wsl2) {
  const bool real_root = std::filesystem::path(root).lexically_normal() == "/";
  std::vector<std::string> candidates;
  if (real_root) candidates.emplace_back("libcuda.so.1");
  if (wsl2 || !real_root) candidates.push_back((root / "usr/lib/wsl/lib/libcuda.so.1").string());
  for (const std::string& candidate : candidates) {
    if (candidate.find('/') != std::string::npos && !path_exists(candidate)) continue;
    std::string error;
    if (open_library(candidate, error)) return true;
  }
  return false;
}

// WSL is known by its kernel (/proc/sys/kernel/osrelease) or its Windows
// interop handler (binfmt_misc/WSLInterop, WSLInterop-late: microsoft/WSL
// binfmt.h), and by the GPU pieces it maps in (/dev/dxg, /usr/lib/wsl/lib:
// shared/facts/probes.md). The GPU pieces are recorded apart: a WSL without
// them has no GPU support (NVIDIA's CUDA on WSL User Guide).
void probe_wsl(Platform& platform, const std::filesystem::path& root) {
  const auto osrelease = read_text_file(root / "proc/sys/kernel/osrelease");
  const bool kernel = osrelease && osrelease_names_wsl(*osrelease);
  const bool interop = path_exists(root / "proc/sys/fs/binfmt_misc/WSLInterop") ||
                       path_exists(root / "proc/sys/fs/binfmt_misc/WSLInterop-late");
  const bool dxg = path_exists(root / "dev/dxg");
  const bool libs = path_exists(root / "usr/lib/wsl/lib");
  platform.wsl2 = kernel || interop || dxg || libs;
  if (!platform.wsl2) return;
  platform.wsl_dxg = dxg;
  platform.wsl_libcuda =
      path_exists(root / "usr/lib/wsl/lib/libcuda.so.1") || path_exists(root / "usr/lib/wsl/lib/libcuda.so");
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 0;
}

}  // namespace

Platform probe_platform(const Environment& env, const std::filesystem::path& root) {
  Platform platform;
  struct utsname names {};
  if (::uname(&names) == 0) platform.machine = names.machine;

  auto os_release = read_text_file(root / "etc/os-release");
  if (!os_release) os_release = read_text_file(root / "usr/lib/os-release");
  if (os_release) platform.os = parse_os_release_pretty_name(*os_release);

  probe_wsl(platform, root);
  // Jetson Linux names its release here; a garbled file leaves it unknown
  // (a Tegra GPU still makes the platform Tegra, core/situation/situation.hpp).
  if (auto tegra = read_text_file(root / "etc/nv_tegra_release")) platform.l4t = parse_nv_tegra_release(*tegra);
  platform.container = path_exists(root / ".dockerenv") || path_exists(root / "run/.containerenv");
  if (!platform.container) {
    if (auto cgroup = read_text_file(root / "proc/1/cgroup")) platform.container = cgroup_names_container(*cgroup);
  }
  platform.nvidia_device_nodes = path_exists(root / "dev/nvidiactl") || path_exists(root / "dev/nvidia0");
  platform.libcuda_loadable = libcuda_loads(root, platform.wsl2);

  if (auto visible = env.find("CUDA_VISIBLE_DEVICES"); visible != env.end()) {
    platform.cuda_visible_devices = visible->second;
  }
  platform.cpus = usable_cpus();
  if (auto meminfo = read_text_file(root / "proc/meminfo")) {
    platform.memory_available_bytes = parse_meminfo_available(*meminfo);
  }
  // Builds plan their jobs from these (core/situation/toolchain.hpp), so a saved
  // snapshot replays the same MAX_JOBS on another machine.
  const CgroupLimits limits = read_cgroup_limits(root);
  platform.cpu_quota = limits.cpu_quota;
  platform.cpu_quota_source = limits.cpu_source;
  platform.memory_limit_bytes = limits.memory_room;
  platform.memory_limit_source = limits.memory_source;
  return platform;
}

}  // namespace torchfix
