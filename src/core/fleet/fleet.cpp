// Fleet aggregation: group nodes, keep one snapshot per (group, software
// variant), diagnose each once, and read verdicts off the findings. The
// covering fix is in fleet_fix.cpp.

#include "core/fleet/fleet.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/base/enum_names.hpp"
#include "core/base/parallel.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/fleet/fleet_fix.hpp"

namespace torchfix {

namespace {

std::string gpu_text(const Gpu& gpu) {
  return (gpu.name.empty() ? std::string("unnamed GPU") : gpu.name) + " (" + (gpu.cc ? gpu.cc->str() : "?") + ")";
}

std::string version_text(const std::optional<Version>& v) {
  return v ? v->str() : "unknown";
}

// Identical GPU entries shown once with a count: "NVIDIA A100 (8.0) x4".
std::string gpus_label(const std::vector<std::string>& gpus) {
  if (gpus.empty()) return "no GPU";
  std::string out;
  for (std::size_t i = 0; i < gpus.size();) {
    std::size_t j = i;
    while (j < gpus.size() && gpus[j] == gpus[i]) ++j;
    out += (out.empty() ? "" : " + ") + gpus[i] + (j - i > 1 ? " x" + std::to_string(j - i) : "");
    i = j;
  }
  return out;
}

FleetGroup group_of(const Snapshot& s) {
  FleetGroup g;
  std::set<ComputeCapability> ccs;
  for (const Gpu& gpu : s.gpus) {
    g.gpus.push_back(gpu_text(gpu));
    if (gpu.cc) ccs.insert(*gpu.cc);
  }
  std::ranges::sort(g.gpus);
  g.ccs.assign(ccs.begin(), ccs.end());
  g.driver = s.driver.version;
  g.driver_cuda = s.driver.cuda_version;
  for (const Toolkit& t : s.toolkits) g.toolkits.push_back(t.version ? t.version->str() : t.nvcc);
  std::ranges::sort(g.toolkits);
  g.toolkits.erase(std::unique(g.toolkits.begin(), g.toolkits.end()), g.toolkits.end());
  g.machine = s.platform.machine.empty() ? "x86_64" : s.platform.machine;
  g.platform = platform_kind(s.platform, s.gpus);
  g.os = s.platform.os;
  return g;
}

// The group's platform and driver CUDA as the Situation has them (the
// tables' answer in the platform's numbering when the snapshot has none),
// and its label.
void situate_group(FleetGroup& g, const Snapshot& s, const Knowledge& k) {
  const Situation x = situate(s, k);
  g.platform = x.platform;
  g.driver_cuda = x.driver.cuda;
  std::string toolkits;
  for (const auto& t : g.toolkits) toolkits += (toolkits.empty() ? "" : ", ") + t;
  g.label = gpus_label(g.gpus) + "; driver " + version_text(g.driver) + " (CUDA " + version_text(g.driver_cuda) +
            "); nvcc " + (toolkits.empty() ? "none" : toolkits) + "; " + g.machine + (g.os.empty() ? "" : " " + g.os);
}

// What the diagnosis of an environment depends on besides the hardware: two
// nodes with equal fingerprints give equal verdicts.
std::string software_fingerprint(const Snapshot& s) {
  std::string out;
  for (const PythonEnv& py : s.pythons) {
    out += py.interpreter + '\x1f' + std::string(to_string(py.status)) + '\x1f' + py.error + '\x1f';
    if (py.torch) {
      out += py.torch->version + '\x1f' + py.torch->cuda.value_or("") + '\x1f';
      for (const Arch& a : py.torch->arch_flags) out += a.name() + ' ';
    }
    for (const auto& [name, version] : py.distributions) out += name + '=' + version + ' ';
    for (const PackageKernels& p : py.kernels) {
      out += p.distribution + '=' + p.version + ':';
      for (const BinaryKernels& b : p.binaries) {
        for (const ModuleGroup& m : b.groups) {
          out += std::to_string(m.modules) + '[';
          for (const Arch& a : m.images) out += a.name() + ' ';
          out += ']';
        }
      }
    }
    out += '\x1e';
  }
  for (const auto& [name, value] : s.environment) {
    if (name.starts_with("CUDA") || name.starts_with("TORCH") || name == "LD_LIBRARY_PATH")
      out += name + '=' + value + '\x1f';
  }
  out += s.platform.container ? "c" : "-";
  out += s.platform.wsl2 ? "w" : "-";
  out += s.platform.nvidia_device_nodes ? "n" : "-";
  out += s.platform.libcuda_loadable ? "l" : "-";
  out += s.platform.cuda_visible_devices.value_or("*");
  return out;
}

std::string group_key(const FleetGroup& g) {
  std::string key;
  for (const auto& gpu : g.gpus) key += gpu + '\x1f';
  key += '\x1e' + version_text(g.driver) + '\x1f' + version_text(g.driver_cuda) + '\x1e';
  for (const auto& t : g.toolkits) key += t + '\x1f';
  key += '\x1e' + g.machine + '\x1f' + std::string(to_string(g.platform)) + '\x1f' + g.os;
  return key;
}

struct EnvVerdict {
  FleetVerdict verdict = FleetVerdict::absent;
  std::string torch;
  std::string reason;
};

EnvVerdict verdict_of(const Snapshot& s, const Diagnosis& d, const std::string& path) {
  EnvVerdict v;
  const auto env = std::ranges::find_if(s.pythons, [&](const PythonEnv& p) { return p.interpreter == path; });
  if (env == s.pythons.end()) return v;
  if (env->torch) v.torch = env->torch->version;
  if (env->status != PythonStatus::ok && env->status != PythonStatus::no_torch) {
    v.verdict = FleetVerdict::cannot_run;
    v.reason = "the interpreter " + std::string(to_string(env->status)) + (env->error.empty() ? "" : ": " + env->error);
    return v;
  }
  if (!env->torch) {
    v.verdict = FleetVerdict::no_torch;
    v.reason = "torch is not installed there";
    return v;
  }
  v.verdict = FleetVerdict::runs;
  for (const Finding& f : d.findings) {
    const bool about_env = f.python == path;
    const bool machine_wide = f.python.empty() && f.section == Section::gpus;
    if (!about_env && !machine_wide) continue;
    if (f.severity == Severity::problem) {
      if (v.verdict != FleetVerdict::cannot_run) v.reason = f.title;
      v.verdict = FleetVerdict::cannot_run;
    } else if (f.reach == Reach::ptx_jit && f.severity >= Severity::warning && v.verdict == FleetVerdict::runs) {
      v.verdict = FleetVerdict::runs_ptx_jit;
      v.reason = f.title;
    }
  }
  return v;
}

}  // namespace

int FleetReport::exit_code() const {
  if (!failures.empty()) return 1;
  for (const FleetEnv& env : envs) {
    for (const FleetEnvRow& row : env.rows) {
      if (row.verdict == FleetVerdict::cannot_run) return 1;
    }
  }
  return 0;
}

std::size_t FleetBuilder::add(const std::string& node, Snapshot snapshot) {
  FleetGroup group = group_of(snapshot);
  const std::string key = group_key(group);
  auto [it, fresh] = m_group_index.try_emplace(key, m_groups.size());
  if (fresh) m_groups.push_back(std::move(group));
  m_groups[it->second].nodes.push_back(node);

  std::string variant_key = std::to_string(it->second) + '\x1d' + software_fingerprint(snapshot);
  auto [vit, vfresh] = m_variant_index.try_emplace(std::move(variant_key), m_variants.size());
  if (vfresh) m_variants.push_back({it->second, std::move(snapshot), {}});
  m_variants[vit->second].nodes.push_back(node);
  return vit->second;
}

void FleetBuilder::add_same(const std::string& node, std::size_t variant) {
  m_variants.at(variant).nodes.push_back(node);
  m_groups[m_variants[variant].group].nodes.push_back(node);
}

void FleetBuilder::add_failure(std::string node, std::string reason) {
  m_failures.push_back({std::move(node), std::move(reason)});
}

FleetReport FleetBuilder::finish(const Knowledge& knowledge, const std::string& python) const {
  FleetReport report;
  report.groups = m_groups;
  report.failures = m_failures;
  for (const FleetGroup& g : m_groups) report.nodes += g.nodes.size();

  // Paths to judge: the one asked for, else every path with torch somewhere.
  std::set<std::string> paths;
  if (!python.empty()) {
    paths.insert(python);
  } else {
    for (const Variant& v : m_variants) {
      for (const PythonEnv& py : v.snapshot.pythons) {
        if (py.torch) paths.insert(py.interpreter);
      }
    }
  }
  // Verdicts only: a node's own remedies (each a re-diagnosis) are not the
  // fleet's; covering_fix below decides for all groups at once. Variants are
  // independent, so they are judged on every CPU (bench/fleet-bench.sh).
  std::vector<Diagnosis> diagnoses(m_variants.size());
  for_each_index(m_variants.size(),
                 [&](std::size_t i) { diagnoses[i] = detail::diagnose_verdicts(m_variants[i].snapshot, knowledge); });

  std::vector<const Snapshot*> group_snapshots(m_groups.size(), nullptr);
  for (const Variant& v : m_variants) {
    if (group_snapshots[v.group]) continue;
    group_snapshots[v.group] = &v.snapshot;
    situate_group(report.groups[v.group], v.snapshot, knowledge);
  }

  for (const std::string& path : paths) {
    FleetEnv env;
    env.path = path;
    // Rows per group; variants of one group that agree are merged.
    std::map<std::size_t, std::vector<FleetEnvRow>> by_group;
    for (std::size_t i = 0; i < m_variants.size(); ++i) {
      const EnvVerdict v = verdict_of(m_variants[i].snapshot, diagnoses[i], path);
      auto& rows = by_group[m_variants[i].group];
      auto same = std::ranges::find_if(rows, [&](const FleetEnvRow& r) {
        return r.verdict == v.verdict && r.torch == v.torch && r.reason == v.reason;
      });
      if (same == rows.end()) {
        rows.push_back({m_variants[i].group, v.verdict, v.torch, v.reason, {}});
        same = rows.end() - 1;
      }
      same->nodes.insert(same->nodes.end(), m_variants[i].nodes.begin(), m_variants[i].nodes.end());
    }
    for (auto& [group, rows] : by_group) {
      for (FleetEnvRow& r : rows) env.rows.push_back(std::move(r));
    }
    env.fix = detail::covering_fix(report, group_snapshots, env, knowledge);
    report.envs.push_back(std::move(env));
  }
  return report;
}

std::vector<ComputeCapability> fleet_capabilities(const FleetReport& report) {
  std::set<ComputeCapability> all;
  for (const FleetGroup& g : report.groups) all.insert(g.ccs.begin(), g.ccs.end());
  return {all.begin(), all.end()};
}

namespace {

constexpr EnumName<FleetVerdict> k_verdicts[] = {{FleetVerdict::runs, "runs"},
                                                 {FleetVerdict::runs_ptx_jit, "runs through PTX JIT"},
                                                 {FleetVerdict::cannot_run, "cannot run"},
                                                 {FleetVerdict::no_torch, "no torch"},
                                                 {FleetVerdict::absent, "absent"}};
static_assert(in_order(k_verdicts));
constexpr EnumName<FleetFixKind> k_fix_kinds[] = {{FleetFixKind::none_needed, "none-needed"},
                                                  {FleetFixKind::wheel, "wheel"},
                                                  {FleetFixKind::build, "build"},
                                                  {FleetFixKind::driver, "driver"},
                                                  {FleetFixKind::none, "none"}};
static_assert(in_order(k_fix_kinds));

}  // namespace

std::string_view to_string(FleetVerdict verdict) {
  return name_in(k_verdicts, verdict);
}

std::string_view to_string(FleetFixKind kind) {
  return name_in(k_fix_kinds, kind);
}

}  // namespace torchfix
