#pragma once
// What a build may use on this machine: CPUs (affinity and the cgroup CPU
// quota), memory (MemAvailable and the cgroup memory limit) and free disk.
// The parsers are pure; read_resources reads files under a root (tests pass a
// fake tree).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/situation/toolchain.hpp"

namespace torchfix {

/// Parses cgroup v2 cpu.max ("max 100000" or "400000 100000") into a CPU
/// count (quota / period, e.g. 4.0); nullopt when unlimited or malformed.
std::optional<double> parse_cpu_max(std::string_view text);

/// Parses the MemAvailable line of /proc/meminfo into bytes; nullopt when absent.
std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo);

/// Parses a cgroup memory.max / memory.current / v1 limit_in_bytes value into
/// bytes; nullopt for "max", v1's "unlimited" sentinel (>= 2^62) or garbage.
std::optional<std::uint64_t> parse_cgroup_bytes(std::string_view text);

/// Parses /proc/self/cgroup into the cgroup v2 path ("0::/user.slice/x" ->
/// "/user.slice/x"); nullopt when the process is not in a v2 hierarchy.
std::optional<std::string> parse_cgroup_v2_path(std::string_view proc_self_cgroup);

/// Holds the cgroup limits of this process: the smallest along its cgroup
/// chain, with the file each came from.
struct CgroupLimits {
  std::optional<double> cpu_quota;           // CPUs (quota / period)
  std::string cpu_source;                    // "cgroup /sys/fs/cgroup/x/cpu.max"
  std::optional<std::uint64_t> memory_room;  // limit minus current usage, bytes
  std::string memory_source;                 // "cgroup /sys/fs/cgroup/x/memory.max 8.0 GiB - 1.0 GiB used"
};

/// Reads the CPU quota and memory limit of the process's cgroup v2 folder
/// and every parent up to root/sys/fs/cgroup (the smallest wins), falling
/// back to cgroup v1 cpu/memory files. Missing files leave a limit unknown.
CgroupLimits read_cgroup_limits(const std::filesystem::path& root);

/// Reads the resources under `root` ("/" in production): `affinity_cpus` is
/// the count from sched_getaffinity (the caller measures it: it is not a
/// file); CPU quota and memory limits are read from the process's cgroup v2
/// folder and every parent up to root/sys/fs/cgroup (the smallest wins),
/// falling back to cgroup v1 cpu/memory files; MemAvailable from
/// root/proc/meminfo; free disk from statvfs of `build_dir` or its nearest
/// existing parent. Missing files leave a field unknown; never fails.
Resources read_resources(const std::filesystem::path& root, int affinity_cpus, const std::filesystem::path& build_dir);

/// Measures the free disk at `build_dir` or its nearest existing parent
/// (statvfs) into r.disk_free_bytes and r.disk_path; leaves them unchanged
/// when nothing can be measured.
void measure_disk(const std::filesystem::path& build_dir, Resources& r);

/// Returns the CPUs this process may run on (sched_getaffinity), at least 1.
int affinity_cpu_count();

}  // namespace torchfix
