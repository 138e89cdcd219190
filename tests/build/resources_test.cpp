#include "probe/resources.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

constexpr std::uint64_t k_gib = 1024ull * 1024 * 1024;

TEST(Resources, Parsers) {
  EXPECT_EQ(parse_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_DOUBLE_EQ(*parse_cpu_max("400000 100000\n"), 4.0);
  EXPECT_DOUBLE_EQ(*parse_cpu_max("250000 100000"), 2.5);
  EXPECT_EQ(parse_cpu_max("garbage"), std::nullopt);
  EXPECT_EQ(parse_mem_available("MemTotal: 100 kB\nMemAvailable:   23000000 kB\n"), 23000000ull * 1024);
  EXPECT_EQ(parse_mem_available("MemTotal: 100 kB\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_bytes("max\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup_bytes("8589934592\n"), 8 * k_gib);
  EXPECT_EQ(parse_cgroup_bytes("9223372036854771712\n"), std::nullopt);  // cgroup v1 "unlimited"
  EXPECT_EQ(parse_cgroup_v2_path("0::/user.slice/session-1.scope\n"), "/user.slice/session-1.scope");
  EXPECT_EQ(parse_cgroup_v2_path("12:memory:/docker/abc\n"), std::nullopt);
  EXPECT_EQ(format_bytes(125 * k_gib), "125.0 GiB");
  EXPECT_EQ(format_bytes(512ull << 20), "512 MiB");
}

TEST(Resources, NoCgroupLimitsUseAffinityAndMemAvailable) {
  TempDir root;
  write_file(root / "proc/self/cgroup", "0::/\n");
  write_file(root / "sys/fs/cgroup/cpu.max", "max 100000\n");
  write_file(root / "sys/fs/cgroup/memory.max", "max\n");
  write_file(root / "proc/meminfo", "MemTotal: 131072000 kB\nMemAvailable: 131072000 kB\n");
  Resources r = read_resources(root.path(), 16, root.path());
  EXPECT_EQ(r.cpus, 16);
  EXPECT_EQ(r.cpus_source, "affinity 16");
  EXPECT_EQ(r.memory_bytes, 131072000ull * 1024);
  EXPECT_NE(r.memory_source.find("MemAvailable"), std::string::npos);
  ASSERT_TRUE(r.disk_free_bytes);
  EXPECT_GT(*r.disk_free_bytes, 0u);
}

TEST(Resources, ContainerQuotaAndLimitOfAParentCgroupWin) {
  TempDir root;
  write_file(root / "proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  write_file(root / "sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  write_file(root / "sys/fs/cgroup/kubepods/pod1/cpu.max", "250000 100000\n");  // 2.5 CPUs on the pod
  write_file(root / "sys/fs/cgroup/kubepods/pod1/ctr/memory.max", "max\n");
  write_file(root / "sys/fs/cgroup/kubepods/pod1/memory.max", std::to_string(8 * k_gib) + "\n");
  write_file(root / "sys/fs/cgroup/kubepods/pod1/memory.current", std::to_string(2 * k_gib) + "\n");
  write_file(root / "proc/meminfo", "MemAvailable: 131072000 kB\n");
  Resources r = read_resources(root.path(), 64, root / "not/yet/created");
  EXPECT_EQ(r.cpus, 2);
  EXPECT_NE(r.cpus_source.find("cpu.max"), std::string::npos) << r.cpus_source;
  EXPECT_EQ(r.memory_bytes, 6 * k_gib);
  EXPECT_NE(r.memory_source.find("memory.max"), std::string::npos) << r.memory_source;
  EXPECT_EQ(r.disk_path, root.path().string());  // nearest existing parent
}

TEST(Resources, CgroupV1Files) {
  TempDir root;
  write_file(root / "proc/self/cgroup", "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n");
  write_file(root / "sys/fs/cgroup/cpu/cpu.cfs_quota_us", "400000\n");
  write_file(root / "sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  write_file(root / "sys/fs/cgroup/memory/memory.limit_in_bytes", std::to_string(4 * k_gib) + "\n");
  write_file(root / "sys/fs/cgroup/memory/memory.usage_in_bytes", std::to_string(1 * k_gib) + "\n");
  write_file(root / "proc/meminfo", "MemAvailable: 131072000 kB\n");
  Resources r = read_resources(root.path(), 32, root.path());
  EXPECT_EQ(r.cpus, 4);
  EXPECT_EQ(r.memory_bytes, 3 * k_gib);
}

TEST(Resources, MissingFilesLeaveMemoryUnknown) {
  TempDir root;
  Resources r = read_resources(root.path(), 3, root.path());
  EXPECT_EQ(r.cpus, 3);
  EXPECT_FALSE(r.memory_bytes);
  EXPECT_GE(affinity_cpu_count(), 1);
}

}  // namespace
}  // namespace torchfix
