#pragma once
// Pure parsers for what the GPU and platform probes read: nvidia-smi output,
// /proc/driver/nvidia/version, /sys/module/nvidia/version, /etc/os-release,
// /proc/meminfo and /proc/1/cgroup. No I/O here, so every sample of every
// driver version is a unit test.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch.hpp"
#include "core/error.hpp"
#include "core/version.hpp"

namespace torchfix {

/// Holds one line of `nvidia-smi --query-gpu=index,name[,compute_cap],driver_version,memory.total
/// --format=csv,noheader,nounits`. Fields nvidia-smi prints as "[N/A]" or
/// "[Not Supported]" are nullopt.
struct SmiGpuRow {
  int index = 0;
  std::string name;                           // "NVIDIA H200"
  std::optional<ComputeCapability> cc;        // only when compute_cap was queried
  std::optional<Version> driver;              // "580.159.04"
  std::optional<std::uint64_t> memory_bytes;  // memory.total (MiB in the text), in bytes
};

/// Says whether the query included the compute_cap column.
enum class SmiColumns { with_compute_cap, without_compute_cap };

/// Parses the CSV lines of an nvidia-smi GPU query (one line per GPU; blank
/// lines skipped). Errors: a line with the wrong number of fields or a bad
/// index, quoting the line; an output with no GPU line at all.
Expected<std::vector<SmiGpuRow>> parse_smi_gpu_csv(std::string_view text, SmiColumns columns);

/// Returns true when nvidia-smi rejected a query field, as drivers before
/// 510 do for compute_cap: `Field "compute_cap" is not a valid field to query.`
bool smi_rejected_field(std::string_view output);

/// Returns the CUDA version in nvidia-smi's table header
/// ("| NVIDIA-SMI 570.86.15   Driver Version: 570.86.15   CUDA Version: 12.8 |");
/// nullopt when absent or "N/A".
std::optional<Version> parse_smi_header_cuda(std::string_view text);

/// Returns the driver version in nvidia-smi's table header ("Driver Version: 570.86.15").
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

/// Returns true when /proc/1/cgroup names a container runtime
/// (docker, containerd, kubepods, lxc, libpod).
bool cgroup_names_container(std::string_view text);

}  // namespace torchfix
