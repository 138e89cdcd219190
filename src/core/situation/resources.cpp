// What a build may use on this machine: CPUs and memory (Resources, from the
// Platform the probe recorded) and the parallel jobs a build plan gets from
// them (plan_jobs). Declared in toolchain.hpp, whose decision uses them.

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/situation/toolchain.hpp"

namespace torchfix {
namespace {

constexpr std::uint64_t k_mib = 1024ull * 1024;
constexpr std::uint64_t k_gib = 1024ull * k_mib;

}  // namespace

std::string format_bytes(std::uint64_t bytes) {
  char buf[64];
  const double gib = static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
  if (gib >= 1.0) {
    std::snprintf(buf, sizeof buf, "%.1f GiB", gib);
  } else {
    std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
  }
  return buf;
}

Resources resources_of(const Platform& p) {
  Resources r;
  r.cpus = std::max(1, p.cpus);
  r.cpus_source = p.cpus > 0 ? "affinity " + std::to_string(p.cpus) : "CPU count unknown";
  if (p.cpu_quota) {
    // A quota of 2.5 CPUs sustains 2 busy compilers without throttling: round down, at least 1.
    const int quota_cpus = std::max(1, static_cast<int>(std::floor(*p.cpu_quota)));
    if (quota_cpus < r.cpus || p.cpus <= 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.2f", *p.cpu_quota);
      r.cpus_source = p.cpu_quota_source + " (" + buf + " CPUs; " + r.cpus_source + ")";
      r.cpus = quota_cpus;
    }
  }
  if (p.memory_available_bytes) {
    r.memory_bytes = p.memory_available_bytes;
    r.memory_source = "MemAvailable " + format_bytes(*p.memory_available_bytes);
  }
  if (p.memory_limit_bytes && (!r.memory_bytes || *p.memory_limit_bytes < *r.memory_bytes)) {
    r.memory_bytes = p.memory_limit_bytes;
    r.memory_source = p.memory_limit_source;
  }
  return r;
}

JobsDecision plan_jobs(const Resources& resources, const Recipe& recipe, const ArchList& arch,
                       std::optional<int> requested) {
  JobsDecision d;
  // nvcc --threads parallelises over the images of one file: more threads
  // than images buy nothing (nvcc docs, --threads).
  const int images_per_compile = static_cast<int>(images(arch).size());
  d.nvcc_threads = std::clamp(images_per_compile, 1, recipe.nvcc_threads_max);
  const int nested = std::max(1, recipe.nested_parallelism);
  d.job_memory_bytes =
      recipe.job_memory_mib * k_mib * static_cast<std::uint64_t>(d.nvcc_threads) * static_cast<std::uint64_t>(nested);
  const int by_cpu = std::max(1, resources.cpus / nested);
  std::string cpu_text = std::to_string(resources.cpus) + " CPUs (" + resources.cpus_source + ")" +
                         (nested > 1 ? " / " + std::to_string(nested) + " nested" : "") + " = " +
                         std::to_string(by_cpu);
  std::optional<int> by_memory;
  std::string mem_text;
  if (resources.memory_bytes) {
    const std::uint64_t reserve = std::min<std::uint64_t>(*resources.memory_bytes / 10, 2 * k_gib);
    const std::uint64_t usable = *resources.memory_bytes - reserve;
    by_memory = static_cast<int>(usable / d.job_memory_bytes);
    mem_text = format_bytes(usable) + " usable (" + resources.memory_source + ", less " + format_bytes(reserve) +
               " reserve) / " + format_bytes(d.job_memory_bytes) + " per job (" +
               std::to_string(recipe.job_memory_mib) + " MiB x " + std::to_string(d.nvcc_threads) + " nvcc threads x " +
               std::to_string(nested) + " nested) = " + std::to_string(*by_memory);
    if (*by_memory < 1) {
      d.warning = "memory " + format_bytes(usable) + " is below one compile job's peak " +
                  format_bytes(d.job_memory_bytes) + ": the build may be OOM-killed; add swap or free memory";
    }
  } else {
    mem_text = "memory unknown (no MemAvailable): jobs bounded by CPUs only";
  }
  const int planned = std::max(1, std::min(by_cpu, by_memory.value_or(by_cpu)));
  if (requested) {
    d.jobs = std::max(1, *requested);
    d.reason = "--jobs " + std::to_string(d.jobs) + " (planner would pick " + std::to_string(planned) + ")";
    if (by_memory && d.jobs > std::max(1, *by_memory)) {
      d.warning = "--jobs " + std::to_string(d.jobs) + " exceeds what memory allows (" + std::to_string(*by_memory) +
                  "): expect the OOM killer; torchfix retries with fewer jobs";
    }
    return d;
  }
  d.jobs = planned;
  d.reason = "min(" + cpu_text + "; " + mem_text + ") = " + std::to_string(d.jobs);
  return d;
}

}  // namespace torchfix
