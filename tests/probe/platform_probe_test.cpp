// probe_platform on fake root trees: a bare host, WSL2, a container started
// without GPU passthrough, a Kubernetes pod known only by its cgroup.

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include "core/situation/situation.hpp"
#include "probe/gpu_libraries.hpp"
#include "probe/gpu_probe.hpp"
#include "probe_test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

TEST(ProbePlatform, BareRootKnowsOnlyTheKernelFacts) {
  TempDir root;
  const Platform platform = probe_platform({}, root.path());
  EXPECT_FALSE(platform.machine.empty());
  EXPECT_EQ(platform.os, "");
  EXPECT_FALSE(platform.wsl2);
  EXPECT_FALSE(platform.container);
  EXPECT_FALSE(platform.nvidia_device_nodes);
  EXPECT_FALSE(platform.libcuda_loadable);  // under a test root only the root's files count
  EXPECT_FALSE(platform.cuda_visible_devices);
  EXPECT_FALSE(platform.memory_available_bytes);
  EXPECT_GE(platform.cpus, 1);
  EXPECT_LE(platform.cpus, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

TEST(ProbePlatform, Wsl2WithItsLibcuda) {
  TempDir root;
  // WSL2: the Windows driver's libraries in /usr/lib/wsl/lib, /dev/dxg, no /dev/nvidia*.
  std::filesystem::create_directories(root.path() / "usr/lib/wsl/lib");
  std::filesystem::copy_file(TORCHFIX_FAKE_GPU_DRIVER, root.path() / "usr/lib/wsl/lib/libcuda.so.1");
  write_file(root.path() / "dev/dxg", "");
  write_file(root.path() / "etc/os-release", "NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 22.04.3 LTS\"\n");
  const Platform platform = probe_platform({{"CUDA_VISIBLE_DEVICES", "1,0"}}, root.path());
  EXPECT_TRUE(platform.wsl2);
  EXPECT_TRUE(platform.libcuda_loadable);
  EXPECT_FALSE(platform.nvidia_device_nodes);
  EXPECT_FALSE(platform.container);
  EXPECT_EQ(platform.os, "Ubuntu 22.04.3 LTS");
  EXPECT_EQ(platform.cuda_visible_devices, "1,0");
}

TEST(ProbePlatform, Wsl2KnownByDxgAloneHasNoLibcuda) {
  TempDir root;
  write_file(root.path() / "dev/dxg", "");
  const Platform platform = probe_platform({}, root.path());
  EXPECT_TRUE(platform.wsl2);
  EXPECT_FALSE(platform.libcuda_loadable);
}

TEST(ProbePlatform, DockerContainerWithoutGpuPassthrough) {
  TempDir root;
  write_file(root.path() / ".dockerenv", "");
  write_file(root.path() / "etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n");
  write_file(root.path() / "proc/meminfo", "MemTotal:       32858572 kB\nMemAvailable:   23225312 kB\n");
  const Platform platform = probe_platform({{"CUDA_VISIBLE_DEVICES", ""}}, root.path());
  EXPECT_TRUE(platform.container);
  EXPECT_FALSE(platform.nvidia_device_nodes);
  EXPECT_FALSE(platform.libcuda_loadable);
  EXPECT_EQ(platform.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(platform.memory_available_bytes, 23225312ull * 1024);
  // Set but empty hides every GPU from CUDA: it must not read as "unset".
  ASSERT_TRUE(platform.cuda_visible_devices);
  EXPECT_EQ(*platform.cuda_visible_devices, "");
}

// A container records its mounts (a real mountinfo, captured in a bubblewrap
// namespace with a bind mount); a host records none.
TEST(ProbePlatform, ContainerRecordsItsMountsFromMountinfo) {
  const auto mountinfo = read_text_file(std::filesystem::path(TORCHFIX_SOURCE_DIR) /
                                        "tests/fixtures/mountinfo/bwrap-bind-opt-my-venv.txt");
  ASSERT_TRUE(mountinfo);
  TempDir root;
  write_file(root.path() / "proc/self/mountinfo", *mountinfo);
  EXPECT_FALSE(probe_platform({}, root.path()).mounts);
  write_file(root.path() / ".dockerenv", "");
  const Platform platform = probe_platform({}, root.path());
  ASSERT_TRUE(platform.container);
  ASSERT_TRUE(platform.mounts);
  EXPECT_TRUE(std::ranges::any_of(*platform.mounts, [](const Mount& m) { return m.point == "/opt/my venv"; }));
  // The engine's mark was written now: files older than it are the image's, newer ones the container's own.
  ASSERT_TRUE(platform.container_created);
  const auto before = *platform.container_created - 3600;
  EXPECT_EQ(package_home(platform, "/opt/my venv/lib/python3.12/site-packages/torch", before), PackageHome::volume);
  EXPECT_EQ(package_home(platform, "/opt/my venvx/lib/torch", before), PackageHome::image);
  EXPECT_EQ(package_home(platform, "/usr/local/lib/python3.10/site-packages/torch", before), PackageHome::image);
  EXPECT_EQ(package_home(platform, "/usr/local/lib/python3.10/site-packages/torch", before + 7200), PackageHome::layer);
  EXPECT_EQ(package_home(platform, "/usr/local/lib/python3.10/site-packages/torch", std::nullopt),
            PackageHome::unknown);
}

TEST(ProbePlatform, ContainerWithPassthroughHasDeviceNodes) {
  TempDir root;
  write_file(root.path() / "run/.containerenv", "engine=\"podman-4.3.1\"\n");
  write_file(root.path() / "dev/nvidiactl", "");
  write_file(root.path() / "dev/nvidia0", "");
  const Platform platform = probe_platform({}, root.path());
  EXPECT_TRUE(platform.container);
  EXPECT_TRUE(platform.nvidia_device_nodes);
}

TEST(ProbePlatform, KubernetesPodKnownByCgroup) {
  TempDir root;
  // https://github.com/open-telemetry/opentelemetry-java/issues/4507
  write_file(root.path() / "proc/1/cgroup",
             "8:cpuset:/kubepods-besteffort-pod0125ec2f_b64a_4868_8f5b_94b56cbab864.slice:cri-containerd:"
             "ee4b20e90ac7f42a10bd004d05646b13d8ab5e2c5e7cbc01abf8006bac016459\n");
  EXPECT_TRUE(probe_platform({}, root.path()).container);

  TempDir host;
  write_file(host.path() / "proc/1/cgroup", "0::/init.scope\n");
  EXPECT_FALSE(probe_platform({}, host.path()).container);
}

// Jetson: /etc/nv_tegra_release names the L4T release (R36 on JetPack 6,
// R38 on Thor's JetPack 7); a missing or garbled file leaves it unknown.
TEST(ProbePlatform, TegraReleaseFromNvTegraRelease) {
  for (const auto& [text, l4t] : std::vector<std::pair<std::string, std::optional<std::string>>>{
           {"# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64\n", "36.4.3"},
           {"# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64\n", "38.2.0"},
           {"garbage\n", std::nullopt},
           {"", std::nullopt}}) {
    SCOPED_TRACE(text);
    TempDir root;
    write_file(root.path() / "etc/nv_tegra_release", text);
    EXPECT_EQ(probe_platform({}, root.path()).l4t, l4t);
    EXPECT_FALSE(probe_platform({}, root.path()).wsl2);
  }
  TempDir bare;
  EXPECT_FALSE(probe_platform({}, bare.path()).l4t);
}

// WSL2 is known by its kernel or its interop handler even when Windows maps
// no GPU into it; then /dev/dxg and the Windows libcuda are recorded missing.
TEST(ProbePlatform, Wsl2KnownByKernelOrInteropWithoutGpuPieces) {
  TempDir kernel;
  write_file(kernel.path() / "proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
  TempDir interop;
  write_file(interop.path() / "proc/sys/fs/binfmt_misc/WSLInterop", "enabled\n");
  for (const TempDir* root : {&kernel, &interop}) {
    const Platform p = probe_platform({}, root->path());
    EXPECT_TRUE(p.wsl2);
    EXPECT_EQ(p.wsl_dxg, false);
    EXPECT_EQ(p.wsl_libcuda, false);
    EXPECT_FALSE(p.libcuda_loadable);
  }
  TempDir full;
  write_file(full.path() / "proc/sys/kernel/osrelease", "5.15.153.1-microsoft-standard-WSL2\n");
  write_file(full.path() / "dev/dxg", "");
  std::filesystem::create_directories(full.path() / "usr/lib/wsl/lib");
  std::filesystem::copy_file(TORCHFIX_FAKE_GPU_DRIVER, full.path() / "usr/lib/wsl/lib/libcuda.so.1");
  const Platform p = probe_platform({}, full.path());
  EXPECT_EQ(p.wsl_dxg, true);
  EXPECT_EQ(p.wsl_libcuda, true);
  // Not WSL: the GPU pieces are not asked about.
  TempDir host;
  write_file(host.path() / "proc/sys/kernel/osrelease", "6.1.0-27-amd64\n");
  EXPECT_FALSE(probe_platform({}, host.path()).wsl2);
  EXPECT_FALSE(probe_platform({}, host.path()).wsl_dxg);
}

// A Linux NVIDIA driver installed inside WSL (apt's libnvidia-compute-NNN,
// or the .run installer) leaves libcuda.so.VER and libnvidia-ml.so.VER in the
// distribution's library folders, where they shadow the Windows driver's
// /usr/lib/wsl/lib/libcuda.so. The probe records them with their dpkg owners
// and the .run installer's nvidia-uninstall; libcuda.so.1 links, the WSL
// stubs and other CUDA libraries are not a driver; outside WSL nothing is asked.
TEST(ProbePlatform, Wsl2RecordsALinuxDriverInstalledInsideIt) {
  auto wsl = [](const TempDir& root) {
    write_file(root.path() / "proc/sys/kernel/osrelease", "6.6.87.2-microsoft-standard-WSL2\n");
    write_file(root.path() / "dev/dxg", "");
    write_file(root.path() / "usr/lib/wsl/lib/libcuda.so.1.1", "");
  };
  TempDir apt;
  wsl(apt);
  const std::filesystem::path lib = apt.path() / "usr/lib/x86_64-linux-gnu";
  for (const char* name : {"libcuda.so.535.309.01", "libnvidia-ml.so.535.309.01", "libcudart.so.12.4.127"})
    write_file(lib / name, "");
  std::filesystem::create_symlink("libcuda.so.535.309.01", lib / "libcuda.so.1");
  write_file(apt.path() / "var/lib/dpkg/info/libnvidia-compute-535:amd64.list",
             "/.\n/usr/lib/x86_64-linux-gnu/libcuda.so.535.309.01\n"
             "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.309.01\n");
  write_file(apt.path() / "var/lib/dpkg/info/libcudart12:amd64.list",
             "/usr/lib/x86_64-linux-gnu/libcudart.so.12.4.127\n");
  const Platform p = probe_platform({}, apt.path());
  EXPECT_EQ(p.wsl_linux_driver, (std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libcuda.so.535.309.01",
                                                          "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.535.309.01"}));
  EXPECT_EQ(p.wsl_linux_driver_packages, std::vector<std::string>{"libnvidia-compute-535"});
  EXPECT_FALSE(p.wsl_linux_driver_uninstaller);
  TempDir run;
  wsl(run);
  write_file(run.path() / "usr/lib64/libcuda.so.570.172.08", "");
  write_file(run.path() / "usr/bin/nvidia-uninstall", "");
  const Platform r = probe_platform({}, run.path());
  EXPECT_EQ(r.wsl_linux_driver, std::vector<std::string>{"/usr/lib64/libcuda.so.570.172.08"});
  EXPECT_TRUE(r.wsl_linux_driver_packages.empty());
  EXPECT_TRUE(r.wsl_linux_driver_uninstaller);
  TempDir clean;
  wsl(clean);
  EXPECT_TRUE(probe_platform({}, clean.path()).wsl_linux_driver.empty());
  TempDir host;
  write_file(host.path() / "proc/sys/kernel/osrelease", "6.1.0-27-amd64\n");
  write_file(host.path() / "usr/lib/x86_64-linux-gnu/libcuda.so.535.309.01", "");
  EXPECT_TRUE(probe_platform({}, host.path()).wsl_linux_driver.empty());
}

}  // namespace
}  // namespace torchfix
