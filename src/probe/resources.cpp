#include "probe/resources.hpp"

#ifdef _WIN32
#include <thread>
#else
#include <sched.h>
#endif

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

namespace torchfix {
namespace {

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  s = trim(s);
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The cgroup folders from the process's own up to the hierarchy root: limits
// of a parent apply to its children (a container's limit sits above a
// systemd scope's).
std::vector<std::filesystem::path> cgroup_chain(const std::filesystem::path& root, const std::string& path) {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path base = root / "sys/fs/cgroup";
  std::filesystem::path rel = std::filesystem::path(path).relative_path();
  while (true) {
    out.push_back(rel.empty() ? base : base / rel);
    if (rel.empty()) break;
    rel = rel.parent_path();
  }
  return out;
}

}  // namespace

std::optional<double> parse_cpu_max(std::string_view text) {
  std::istringstream in{std::string(trim(text))};
  std::string quota;
  std::string period;
  if (!(in >> quota)) return std::nullopt;
  if (quota == "max") return std::nullopt;
  if (!(in >> period)) period = "100000";  // cpu.max may omit the period; the kernel default is 100000 us
  auto q = parse_u64(quota);
  auto p = parse_u64(period);
  if (!q || !p || *p == 0 || *q == 0) return std::nullopt;
  return static_cast<double>(*q) / static_cast<double>(*p);
}

std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo) {
  std::istringstream in{std::string(meminfo)};
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("MemAvailable:")) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    std::string unit;
    if (!(fields >> kib)) return std::nullopt;
    fields >> unit;
    return unit == "kB" || unit.empty() ? kib * 1024 : kib;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> parse_cgroup_bytes(std::string_view text) {
  text = trim(text);
  if (text == "max") return std::nullopt;
  auto v = parse_u64(text);
  // cgroup v1 reports "no limit" as PAGE_COUNTER_MAX * page size (about 2^63).
  if (!v || *v >= (std::uint64_t{1} << 62)) return std::nullopt;
  return v;
}

std::optional<std::string> parse_cgroup_v2_path(std::string_view proc_self_cgroup) {
  std::istringstream in{std::string(proc_self_cgroup)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with("0::")) return line.substr(3);
  }
  return std::nullopt;
}

int affinity_cpu_count() {
#ifdef _WIN32
  return std::max(1u, std::thread::hardware_concurrency());  // no cgroups; the process's group's CPUs
#else
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
#endif
}

CgroupLimits read_cgroup_limits(const std::filesystem::path& root) {
  CgroupLimits out;
  std::optional<double> quota;
  std::string quota_file;
  std::optional<std::uint64_t> mem_limit;
  std::string mem_source;
  auto consider_memory = [&](std::optional<std::uint64_t> max, std::optional<std::uint64_t> used,
                             const std::string& file) {
    if (!max) return;
    const std::uint64_t room = used && *used < *max ? *max - *used : (used ? 0 : *max);
    if (!mem_limit || room < *mem_limit) {
      mem_limit = room;
      mem_source = "cgroup " + file + " " + format_bytes(*max) + (used ? " - " + format_bytes(*used) + " used" : "");
    }
  };

  const auto self = read_text(root / "proc/self/cgroup");
  if (auto path = self ? parse_cgroup_v2_path(*self) : std::nullopt) {
    for (const auto& dir : cgroup_chain(root, *path)) {
      if (auto text = read_text(dir / "cpu.max")) {
        if (auto q = parse_cpu_max(*text); q && (!quota || *q < *quota)) {
          quota = q;
          quota_file = (dir / "cpu.max").string();
        }
      }
      if (auto text = read_text(dir / "memory.max")) {
        auto current = read_text(dir / "memory.current");
        consider_memory(parse_cgroup_bytes(*text), current ? parse_cgroup_bytes(*current) : std::nullopt,
                        (dir / "memory.max").string());
      }
    }
  } else {
    const auto v1_cpu = root / "sys/fs/cgroup/cpu";
    auto q = read_text(v1_cpu / "cpu.cfs_quota_us");
    auto p = read_text(v1_cpu / "cpu.cfs_period_us");
    if (q && p && trim(*q) != "-1") {
      if (auto cpus = parse_cpu_max(std::string(trim(*q)) + " " + std::string(trim(*p)))) {
        quota = cpus;
        quota_file = (v1_cpu / "cpu.cfs_quota_us").string();
      }
    }
    const auto v1_mem = root / "sys/fs/cgroup/memory";
    if (auto limit = read_text(v1_mem / "memory.limit_in_bytes")) {
      auto usage = read_text(v1_mem / "memory.usage_in_bytes");
      consider_memory(parse_cgroup_bytes(*limit), usage ? parse_cgroup_bytes(*usage) : std::nullopt,
                      (v1_mem / "memory.limit_in_bytes").string());
    }
  }
  out.cpu_quota = quota;
  if (quota) out.cpu_source = "cgroup " + quota_file;
  out.memory_room = mem_limit;
  out.memory_source = mem_source;
  return out;
}

// The snapshot's arithmetic (core/situation/toolchain.hpp resources_of) decides; this
// only gathers the same facts from files for callers without a Snapshot.
Resources read_resources(const std::filesystem::path& root, int affinity_cpus, const std::filesystem::path& build_dir) {
  Platform platform;
  platform.cpus = std::max(1, affinity_cpus);
  const CgroupLimits limits = read_cgroup_limits(root);
  platform.cpu_quota = limits.cpu_quota;
  platform.cpu_quota_source = limits.cpu_source;
  platform.memory_limit_bytes = limits.memory_room;
  platform.memory_limit_source = limits.memory_source;
  if (auto meminfo = read_text(root / "proc/meminfo")) platform.memory_available_bytes = parse_mem_available(*meminfo);
  Resources r = resources_of(platform);
  if (platform.memory_available_bytes && r.memory_source.starts_with("MemAvailable"))
    r.memory_source += " (" + (root / "proc/meminfo").string() + ")";
  r.disk_free_bytes = std::nullopt;
  measure_disk(build_dir, r);
  return r;
}

void measure_disk(const std::filesystem::path& build_dir, Resources& r) {
  std::error_code ec;
  std::filesystem::path probe = std::filesystem::absolute(build_dir, ec);
  while (!probe.empty() && !std::filesystem::exists(probe, ec) && probe != probe.parent_path())
    probe = probe.parent_path();
  // std::filesystem::space: statvfs's f_bavail * f_frsize on POSIX,
  // GetDiskFreeSpaceExW on Windows (free to this user).
  const auto space = probe.empty() ? std::filesystem::space_info{} : std::filesystem::space(probe, ec);
  if (!probe.empty() && !ec) {
    r.disk_free_bytes = static_cast<std::uint64_t>(space.available);
    r.disk_path = probe.string();
  }
}

}  // namespace torchfix
