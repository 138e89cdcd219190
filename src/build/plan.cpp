#include "build/plan.hpp"

#include <algorithm>
#include <tuple>

namespace torchfix {
namespace {

constexpr std::uint64_t k_mib = 1024ull * 1024;
constexpr std::uint64_t k_gib = 1024ull * k_mib;

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

std::string version_text(const Toolkit& t) {
  return t.version ? t.version->str() : std::string("unknown version");
}

// 'a' targets exist from CUDA 12.0 (sm_90a), 'f' targets from 12.9
// (shared/facts/cuda-toolkits.md, "Archs nvcc accepts").
bool toolkit_accepts(const std::vector<Arch>& accepted, const std::optional<Version>& version, const ArchTarget& t) {
  auto has = [&](ComputeCapability cc) {
    return std::ranges::any_of(accepted, [&](const Arch& a) { return a.cc == cc; });
  };
  if (!has(t.cc) || !has(t.ptx_cc())) return false;
  if (t.variant == ArchVariant::specific && (!version || *version < Version({12, 0}))) return false;
  if (t.variant == ArchVariant::family && (!version || *version < Version({12, 9}))) return false;
  return true;
}

std::string compiler_name(const HostCompiler& c) {
  std::string family(to_string(c.family));
  return family + " " + (c.version ? c.version->str() : std::string("?")) + " (" + c.path + ")";
}

// g++-12 -> gcc-12, clang++-14 -> clang-14, c++ -> cc: CC must be the same
// compiler as CXX or CMake mixes ABIs.
std::string c_counterpart(const std::string& cxx) {
  const auto slash = cxx.rfind('/');
  std::string dir = slash == std::string::npos ? "" : cxx.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? cxx : cxx.substr(slash + 1);
  if (auto at = base.find("clang++"); at != std::string::npos) return dir + base.replace(at, 7, "clang");
  if (auto at = base.find("g++"); at != std::string::npos) return dir + base.replace(at, 3, "gcc");
  if (auto at = base.find("c++"); at != std::string::npos) return dir + base.replace(at, 3, "cc");
  return cxx;
}

// gcc-12 -> g++-12, clang -> clang++, cc -> c++: the probes list C and C++
// drivers; CXX and CUDAHOSTCXX need the C++ one.
std::string cxx_counterpart(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.find("++") != std::string::npos) return path;
  if (auto at = base.find("clang"); at != std::string::npos) return dir + base.replace(at, 5, "clang++");
  if (auto at = base.find("gcc"); at != std::string::npos) return dir + base.replace(at, 3, "g++");
  if (base == "cc") return dir + "c++";
  return path;
}

}  // namespace

// Snap each target down to the newest arch the project has kernels for, of
// the same major (flash-attn builds 80 and runs it on 8.6: SASS of 8.0 runs
// on 8.x, CUDA Programming Guide "Binary Compatibility").
Expected<ArchList> snap_arch_for_recipe(const ArchList& list, const Recipe& recipe, std::vector<std::string>& notes) {
  if (recipe.arch_supported.empty()) return list;
  ArchList out;
  for (const ArchTarget& t : list.targets) {
    std::optional<ComputeCapability> best;
    for (ComputeCapability s : recipe.arch_supported) {
      if (s.major == t.cc.major && s <= t.cc) best = s;
    }
    if (!best) {
      std::vector<std::string> known;
      for (ComputeCapability s : recipe.arch_supported) known.push_back(s.str());
      return fail("recipe '" + recipe.name + "' has no kernels for compute capability " + t.cc.str() +
                  " (it builds only " + join(known, ";") + ", per " + recipe.file + ")");
    }
    if (*best != t.cc) notes.push_back(recipe.name + " builds " + best->str() + " kernels for " + t.cc.str() + " GPUs");
    out.targets.push_back({*best, ArchVariant::generic, t.ptx, std::nullopt});
  }
  return normalise(std::move(out));
}

std::string_view to_string(FetchAction action) {
  switch (action) {
    case FetchAction::clone:
      return "clone";
    case FetchAction::resume:
      return "resume";
    case FetchAction::checkout:
      return "checkout";
    case FetchAction::use_as_is:
      return "use-as-is";
    case FetchAction::refuse_dirty:
      return "refuse-dirty";
  }
  return "clone";
}

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host_start = scheme + 3;
  const auto path_start = url.find('/', host_start);
  const auto at = url.rfind('@', path_start == std::string_view::npos ? url.size() : path_start);
  if (at == std::string_view::npos || at < host_start) return std::string(url);
  return std::string(url.substr(0, host_start)) + "***" + std::string(url.substr(at));
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

std::vector<Arch> toolkit_archs(const Toolkit& toolkit, const Knowledge* knowledge) {
  if (!toolkit.archs.empty()) return toolkit.archs;
  if (knowledge && toolkit.version) return knowledge->nvcc_archs_for(*toolkit.version);
  return {};
}

Expected<std::pair<Toolkit, std::string>> choose_toolkit(const std::vector<Toolkit>& toolkits, const ArchList& arch,
                                                         const Knowledge* knowledge,
                                                         std::optional<Version> torch_cuda) {
  std::vector<const Toolkit*> sorted;
  for (const Toolkit& t : toolkits) sorted.push_back(&t);
  std::ranges::stable_sort(sorted, [](const Toolkit* a, const Toolkit* b) {
    return a->version.value_or(Version()) > b->version.value_or(Version());
  });
  std::vector<std::string> rejected;
  for (const Toolkit* t : sorted) {
    if (torch_cuda && (!t->version || t->version->major() != torch_cuda->major())) {
      rejected.push_back("nvcc " + version_text(*t) + " (" + t->nvcc + "): major differs from torch's CUDA " +
                         torch_cuda->str() + " (cpp_extension refuses a mismatched major)");
      continue;
    }
    const std::vector<Arch> accepted = toolkit_archs(*t, knowledge);
    std::vector<std::string> missing;
    for (const ArchTarget& target : arch.targets) {
      if (!toolkit_accepts(accepted, t->version, target))
        missing.push_back(render(ArchList{{target}}, ArchFormat::torch));
    }
    if (missing.empty()) {
      std::string reason = "newest installed nvcc that accepts every target (" +
                           (t->archs.empty() ? std::string("table") : t->archs_source) + ")";
      if (torch_cuda) reason += " and matches torch's CUDA " + torch_cuda->str();
      return std::pair{*t, reason};
    }
    rejected.push_back("nvcc " + version_text(*t) + " (" + t->nvcc + ") cannot compile " + join(missing, ";"));
  }
  // Name the CUDA that would do: the highest first-nvcc of the targets.
  std::optional<Version> needed;
  if (knowledge) {
    for (const ArchTarget& target : arch.targets) {
      auto first = knowledge->first_nvcc_for(target.cc);
      if (target.variant == ArchVariant::family && (!first || *first < Version({12, 9}))) first = Version({12, 9});
      if (first && (!needed || *first > *needed)) needed = first;
    }
  }
  std::string message = "no installed CUDA toolkit can build for " + render(arch, ArchFormat::torch);
  if (toolkits.empty()) message += ": no nvcc found (looked at CUDA_HOME, PATH, /usr/local/cuda*)";
  if (!rejected.empty()) message += ": " + join(rejected, "; ");
  if (needed) message += ". Install CUDA >= " + needed->major_minor();
  if (torch_cuda)
    message += " with major " + std::to_string(torch_cuda->major()) + " (torch's CUDA is " + torch_cuda->str() + ")";
  message += ", or build only the archs your GPUs need (--arch auto)";
  return fail(message);
}

Expected<std::tuple<HostCompiler, std::string, std::string>> choose_host_compiler(
    const std::vector<HostCompiler>& compilers, const Toolkit& toolkit, const Knowledge* knowledge,
    std::optional<int> gcc_min) {
  const HostCompilerBounds* bounds =
      knowledge && toolkit.version ? knowledge->host_bounds_for(*toolkit.version) : nullptr;
  // One entry per C++ driver: gcc and g++ of one version are one choice.
  std::vector<HostCompiler> drivers;
  for (HostCompiler c : compilers) {
    c.path = cxx_counterpart(c.path);
    if (std::ranges::none_of(drivers, [&](const HostCompiler& d) { return d.path == c.path; })) drivers.push_back(c);
  }
  std::vector<const HostCompiler*> fits;
  std::vector<std::string> rejected;
  for (const HostCompiler& c : drivers) {
    if (c.family == CompilerFamily::other || !c.version) continue;
    std::optional<int> below = c.family == CompilerFamily::gcc ? (bounds ? bounds->gcc_below : std::nullopt)
                                                               : (bounds ? bounds->clang_below : std::nullopt);
    if (bounds && c.family == CompilerFamily::clang && !bounds->clang_below) {
      rejected.push_back(compiler_name(c) + ": no clang bound recorded for nvcc " + version_text(toolkit));
      continue;
    }
    if (below && c.version->major() >= *below) {
      rejected.push_back(compiler_name(c) + ": nvcc " + version_text(toolkit) + " needs " +
                         std::string(to_string(c.family)) + " < " + std::to_string(*below));
      continue;
    }
    if (gcc_min && c.family == CompilerFamily::gcc && c.version->major() < *gcc_min) {
      rejected.push_back(compiler_name(c) + ": the project needs gcc >= " + std::to_string(*gcc_min));
      continue;
    }
    fits.push_back(&c);
  }
  std::ranges::stable_sort(fits, [](const HostCompiler* a, const HostCompiler* b) {
    if (a->family != b->family) return a->family == CompilerFamily::gcc;  // gcc first: what CUDA and PyTorch CI use
    return *a->version > *b->version;
  });
  if (!fits.empty()) {
    const HostCompiler& c = *fits.front();
    std::string reason = bounds ? "newest compiler inside nvcc " + version_text(toolkit) + "'s bounds (" +
                                      (bounds->gcc_below ? "gcc < " + std::to_string(*bounds->gcc_below) : "") +
                                      (bounds->clang_below ? ", clang < " + std::to_string(*bounds->clang_below) : "") +
                                      "; " + bounds->source + ")"
                                : "no host compiler bounds recorded for nvcc " + version_text(toolkit) + ": newest gcc";
    return std::tuple{c, c_counterpart(c.path), reason};
  }
  std::string message = "no installed C++ compiler fits nvcc " + version_text(toolkit);
  if (compilers.empty()) message += ": none found on PATH";
  if (!rejected.empty()) message += ": " + join(rejected, "; ");
  if (bounds && bounds->gcc_below) {
    const int want = std::max(*bounds->gcc_below - 1, gcc_min.value_or(0));
    message += ". Install gcc " + std::to_string(want) + " (apt install g++-" + std::to_string(want) +
               ", dnf install gcc" + std::to_string(want) +
               "-c++) and rerun: torchfix sets CUDAHOSTCXX, CC and CXX to it";
    // A newer toolkit that accepts the installed gcc is the other way out:
    // the lowest CUDA whose bound admits the newest installed gcc.
    if (knowledge) {
      const HostCompiler* newest_gcc = nullptr;
      for (const HostCompiler& c : compilers) {
        if (c.family == CompilerFamily::gcc && c.version && (!newest_gcc || *c.version > *newest_gcc->version))
          newest_gcc = &c;
      }
      const HostCompilerBounds* lowest = nullptr;
      for (const HostCompilerBounds& b : knowledge->host_compilers) {
        if (!newest_gcc || !b.gcc_below || newest_gcc->version->major() >= *b.gcc_below) continue;
        if (b.cuda_min <= toolkit.version.value_or(Version())) continue;
        if (!lowest || b.cuda_min < lowest->cuda_min) lowest = &b;
      }
      if (lowest)
        message += "; or install CUDA >= " + lowest->cuda_min.str() + " (accepts " + compiler_name(*newest_gcc) + ")";
    }
  }
  return fail(message);
}

}  // namespace torchfix
