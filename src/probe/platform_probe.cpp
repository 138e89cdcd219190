// probe_platform: the host facts the diagnosis needs around the GPU (WSL2,
// Jetson's L4T release, a container without GPU passthrough, CPUs and memory
// for build sizing).

#include <sched.h>

#include <sys/utsname.h>
#include <unistd.h>
#include <algorithm>

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

void probe_wsl_linux_driver(Platform& platform, const std::filesystem::path& root);

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
  probe_wsl_linux_driver(platform, root);
}

// A Linux driver's user-space libraries carry the driver version in their
// name (libcuda.so.535.183.01, libnvidia-ml.so.535.183.01: the files
// nvidia-container-toolkit's ldconfig listings show); the Windows driver's in
// /usr/lib/wsl/lib are libcuda.so.1 and libcuda.so.1.1. Inside WSL such a file
// in the loader's directories shadows the Windows driver: NVIDIA's CUDA on WSL
// User Guide says "users must not install any NVIDIA GPU Linux driver within WSL 2".
bool linux_driver_library(const std::string& name) {
  for (std::string_view stem : {"libcuda.so.", "libnvidia-ml.so."}) {
    if (!name.starts_with(stem)) continue;
    const std::string rest = name.substr(stem.size());
    if (rest.find_first_not_of("0123456789.") != std::string::npos) return false;
    const auto v = Version::parse(rest);
    return v && v->parts().size() >= 2 && v->major() >= 100;
  }
  return false;
}

// The dpkg packages whose file lists (/var/lib/dpkg/info/PKG[:ARCH].list)
// name one of `files`, without the architecture.
std::vector<std::string> dpkg_owners(const std::filesystem::path& root, const std::vector<std::string>& files) {
  std::vector<std::string> owners;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(root / "var/lib/dpkg/info", ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() != ".list") continue;
    const auto text = read_text_file(it->path());
    if (!text) continue;
    const bool owns = std::ranges::any_of(files, [&](const std::string& f) {
      const std::size_t at = text->find(f + "\n");
      return at != std::string::npos && (at == 0 || (*text)[at - 1] == '\n');
    });
    if (!owns) continue;
    const std::string stem = it->path().stem().string();
    owners.push_back(stem.substr(0, stem.find(':')));
  }
  std::ranges::sort(owners);
  owners.erase(std::ranges::unique(owners).begin(), owners.end());
  return owners;
}

// Records a Linux NVIDIA driver installed inside WSL: its libraries in the
// distribution's library folders (apt's libnvidia-compute-NNN puts them in
// /usr/lib/x86_64-linux-gnu, the .run installer in the distribution's libdir),
// their dpkg owners, and the .run installer's uninstaller.
void probe_wsl_linux_driver(Platform& platform, const std::filesystem::path& root) {
  for (const char* dir : {"usr/lib/x86_64-linux-gnu", "usr/lib/aarch64-linux-gnu", "usr/lib64", "usr/lib"}) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(root / dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (linux_driver_library(name)) platform.wsl_linux_driver.push_back("/" + std::string(dir) + "/" + name);
    }
  }
  if (platform.wsl_linux_driver.empty()) return;
  std::ranges::sort(platform.wsl_linux_driver);
  platform.wsl_linux_driver_packages = dpkg_owners(root, platform.wsl_linux_driver);
  platform.wsl_linux_driver_uninstaller = path_exists(root / "usr/bin/nvidia-uninstall");
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
  for (const char* mark : {".dockerenv", "run/.containerenv"}) {
    if (!platform.container_created) platform.container_created = mtime_seconds(root / mark);
  }
  if (!platform.container) {
    if (auto cgroup = read_text_file(root / "proc/1/cgroup")) platform.container = cgroup_names_container(*cgroup);
  }
  // Which paths are the image and which are volumes: a pip install into
  // the image is lost when the container is recreated (core/situation).
  if (platform.container) {
    if (auto mountinfo = read_text_file(root / "proc/self/mountinfo")) platform.mounts = parse_mountinfo(*mountinfo);
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
