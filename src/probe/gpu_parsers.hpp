#pragma once
// Pure parsers for what the GPU and platform probes read: nvidia-smi output,
// /proc/driver/nvidia/version, /sys/module/nvidia/version, /etc/os-release,
// /proc/meminfo, /proc/1/cgroup and /proc/self/mountinfo. No I/O here, so every sample of every
// driver version is a unit test.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Holds one GPU line of an nvidia-smi `--query-gpu=...` CSV. Fields that were
/// not queried, or that nvidia-smi printed as "[N/A]", "N/A" or
/// "[Not Supported]", are nullopt/empty.
struct SmiGpuRow {
  int index = 0;                              // "index", else the line's position
  std::string name;                           // "NVIDIA H200"
  std::optional<ComputeCapability> cc;        // "compute_cap" (drivers >= 510)
  std::optional<Version> driver;              // "driver_version", "580.159.04"
  std::optional<std::uint64_t> memory_bytes;  // "memory.total" (MiB in the text), in bytes
};

/// Parses the CSV printed for `--query-gpu=<fields joined by ','> --format=csv[,noheader][,nounits]`:
/// one line per GPU, columns in the order of `fields`. Understands index,
/// name (gpu_name), compute_cap, driver_version and memory.total ("81559" or
/// "81559 MiB"); other columns are skipped. A header line is recognised and
/// skipped. Errors: a line with the wrong number of columns, a bad index or
/// compute capability (quoting the line), or no GPU line at all.
Expected<std::vector<SmiGpuRow>> parse_smi_gpu_csv(std::string_view text, const std::vector<std::string>& fields);

/// Returns true when nvidia-smi rejected a query field, as drivers before
/// 510 do for compute_cap: `Field "compute_cap" is not a valid field to query.`
bool smi_rejected_field(std::string_view output);

/// Returns the CUDA version in nvidia-smi's table header
/// ("| NVIDIA-SMI 570.86.15   Driver Version: 570.86.15   CUDA Version: 12.8 |",
/// from R610 "KMD Version: 610.43.02   CUDA UMD Version: 13.3"); nullopt when
/// absent (drivers before 410) or "N/A".
std::optional<Version> parse_smi_header_cuda(std::string_view text);

/// Returns the driver version in nvidia-smi's table header ("Driver Version: 570.86.15",
/// from R610 "KMD Version: 610.43.02"); on WSL2 this is the Windows driver.
std::optional<Version> parse_smi_header_driver(std::string_view text);

/// Returns the driver version in /proc/driver/nvidia/version, from the
/// "NVRM version:" line of the open ("...Open Kernel Module for x86_64  580.159.04
/// Release Build...") and proprietary ("...x86_64 Kernel Module  470.256.02  ...")
/// modules; nullopt when there is no such line.
std::optional<Version> parse_proc_driver_version(std::string_view text);

/// Returns the version in /sys/module/nvidia/version ("580.159.04\n").
std::optional<Version> parse_module_version(std::string_view text);

/// Returns PRETTY_NAME of an os-release file, unquoted; "" when absent.
std::string parse_os_release_pretty_name(std::string_view text);

/// Returns MemAvailable of /proc/meminfo in bytes (the file says kB); nullopt when absent.
std::optional<std::uint64_t> parse_meminfo_available(std::string_view text);

/// Returns the Jetson Linux (L4T) release in /etc/nv_tegra_release as
/// "release.revision" ("# R36 (release), REVISION: 4.3, GCID: ..." -> "36.4.3";
/// R38 on Thor, R32 on TX2 read the same way; the format as NVIDIA's
/// jetson-containers and jetson_stats parse it: the number after "# R", then
/// "REVISION: "). nullopt for an empty or garbled file.
std::optional<std::string> parse_nv_tegra_release(std::string_view text);

/// Returns true when /proc/sys/kernel/osrelease names a WSL kernel: it
/// contains "microsoft" or "wsl" in any case ("5.15.153.1-microsoft-standard-WSL2";
/// WSL 1: "4.4.0-19041-Microsoft"), as systemd's detect_vm (src/basic/virt.c)
/// and uutils' is_wsl (microsoft/WSL#4555) read it.
bool osrelease_names_wsl(std::string_view text);

/// Returns true when /proc/1/cgroup names a container runtime
/// (docker, containerd, kubepods, lxc, libpod).
bool cgroup_names_container(std::string_view text);

/// Returns the mounts of a /proc/self/mountinfo text (proc(5): ID PARENT
/// MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER), their
/// paths unescaped (\040 is a space), except those at or under /proc, /sys
/// and /dev, which hold no Python environment. Lines without the " - "
/// separator are skipped.
std::vector<Mount> parse_mountinfo(std::string_view text);

}  // namespace torchfix
