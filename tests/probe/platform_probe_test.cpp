// probe_platform on fake root trees: a bare host, WSL2, a container started
// without GPU passthrough, a Kubernetes pod known only by its cgroup.

#include <gtest/gtest.h>

#include <thread>

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

}  // namespace
}  // namespace torchfix
