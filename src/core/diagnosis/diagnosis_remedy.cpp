// Remedies in the diagnosis: the resolver decides, and each winner is checked
// by applying it to the snapshot and diagnosing again before it is printed.

#include <algorithm>
#include <set>

#include "core/diagnosis/diagnosis_internal.hpp"

namespace torchfix::detail {
namespace {

// Findings whose fix is a remedy: torch, the driver, packages with kernels.
const std::set<std::string, std::less<>> k_remedy_ids = {
    "driver.too-old",       "driver.gpu-unsupported", "torch.arch",
    "torch.mixed-gpus",     "torch.cpu-only",         "torch.rocm",
    "package.arch",         "package.torch-pin",      "package.torch-abi",
    "package.cuda-runtime", "package.broken-release", "package.companion-variant",
};

// The verified remedies try at most this many winners, and print at most
// this many: each check is a whole diagnosis.
constexpr std::size_t k_max_tries = 4;
constexpr std::size_t k_max_printed = 3;

bool remedy_problem(const Finding& f) {
  if (!k_remedy_ids.contains(f.id)) return false;
  if (f.severity == Severity::problem) return true;
  // A package that lacks kernels in some modules (partial) is fixed by a rebuild too.
  return f.id == "package.arch" && f.severity == Severity::warning && f.reach != Reach::ptx_jit;
}

// Problems that a remedy for `python` (or the machine) must clear.
// A run-time build's toolkit (package.runtime-build) has fixes of its own, and
// a companion without a wheel (package.companion-build) a build: neither is
// the remedy's to clear.
bool belongs(const Finding& f, const std::string& interpreter) {
  if (f.id == "package.runtime-build" || f.id == "package.companion-build") return false;
  return (f.python.empty() || f.python == interpreter) && f.severity == Severity::problem &&
         (f.section == Section::python || k_remedy_ids.contains(f.id));
}

std::string first_problem(const Diagnosis& d, const std::string& interpreter) {
  for (const Finding& f : d.findings) {
    if (belongs(f, interpreter)) return f.title;
  }
  return {};
}

// Warnings of the same kind that a winner leaves (the doctor's re-diagnosis),
// by finding: the id, then the title.
std::vector<std::pair<std::string, std::string>> warnings_left(const Diagnosis& d, const std::string& interpreter) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Finding& f : d.findings) {
    if ((f.python.empty() || f.python == interpreter) && f.severity == Severity::warning &&
        (f.section == Section::python || k_remedy_ids.contains(f.id))) {
      out.emplace_back(f.id, f.title);
    }
  }
  return out;
}

}  // namespace

void diagnose_gpu_drivers(const Situation& x, const Knowledge& k, std::vector<Finding>& out) {
  for (const GpuGroup& group : x.gpu_groups) {
    auto problem = gpu_driver_problem(k, group.cc, x.driver, x.platform);
    if (!problem) continue;
    Finding f;
    f.id = "driver.gpu-unsupported";
    f.severity = Severity::problem;
    f.section = Section::gpus;
    f.title = "The driver cannot drive " + group.label();
    about_gpus(f, group);
    f.details.push_back(problem->text);
    if (const GpuDriverSupport* row = k.gpu_driver(group.cc)) f.details.push_back("source: " + row->source);
    f.details.push_back("no wheel and no minor-version compatibility helps: the GPU is not usable at all");
    if (windows_driver(x.platform)) {
      f.details.push_back("the driver is the Windows host's: nothing installed inside WSL or Linux can change it");
    } else if (x.snapshot->platform.container) {
      f.details.push_back("in a container: the driver is the host's");
    }
    out.push_back(std::move(f));
  }
}

namespace {

// Collects the findings a remedy for `scope` must clear (the machine's own
// problems go with the first scope that takes them) and the packages among
// them that lack kernels.
std::vector<Finding*> scope_targets(Diagnosis& d, const std::optional<std::size_t>& scope,
                                    const std::string& interpreter, bool machine_done,
                                    std::vector<std::string>& failing) {
  std::vector<Finding*> targets;
  for (Finding& f : d.findings) {
    const bool mine = scope ? f.python == interpreter : false;
    const bool machine = f.python.empty() && !machine_done;
    if (!(mine || machine) || !remedy_problem(f)) continue;
    targets.push_back(&f);
    if (f.id == "package.arch") failing.push_back(f.package);
  }
  return targets;
}

// Says what a verified winner leaves: the warnings of its kind, less the
// minor-version note its own text already carries.
std::string left_warnings(const Diagnosis& again, const std::string& interpreter, const Remedy& winner,
                          std::vector<std::string>& titles) {
  std::string tail;
  for (const auto& [id, title] : warnings_left(again, interpreter)) {
    titles.push_back(title);
    if (id == "driver.minor-compat" && winner.minor_compat) continue;
    tail += (tail.empty() ? "" : "; ") + title;
  }
  return tail;
}

// Diagnoses the snapshot as `r` leaves it. A remedy for one environment
// that keeps the driver changes only that environment (and, for an image,
// the toolkits that environment sees), so only it is diagnosed again beside
// the machine: with 64 environments, re-diagnosing all of them for every
// candidate of every environment was quadratic (bench/remedy-bench.sh).
Diagnosis diagnose_applied(const Snapshot& s, const std::optional<std::size_t>& scope, const Remedy& r,
                           const Knowledge& k) {
  if (!scope || r.driver || *scope >= s.pythons.size() || s.pythons.size() == 1) {
    return diagnose_verdicts(apply_remedy(s, scope, r, k), k);
  }
  Snapshot one = s;
  one.pythons = {s.pythons[*scope]};
  return diagnose_verdicts(apply_remedy(std::move(one), 0, r, k), k);
}

// Checks the resolver's winners by applying each to the snapshot and
// diagnosing again; keeps the clean ones (at most k_max_printed of
// k_max_tries, plus the container alternative) and rejects the rest with
// what is left. Returns, per kept winner, what it leaves.
std::vector<std::string> verify_winners(const Snapshot& s, const std::optional<std::size_t>& scope,
                                        const std::string& interpreter, std::vector<Remedy>& winners,
                                        const Knowledge& k, RemedyReport& report) {
  std::size_t tries = 0;
  std::size_t printed = 0;
  std::optional<int> first_changes;  // of the first fix that is not a container
  std::vector<std::string> tails;
  for (Remedy& r : winners) {
    // The container is an alternative of its own: checked and printed
    // beside the wheel fixes, outside their limits.
    const bool container = r.kind == CandidateKind::container;
    if (!container && (printed >= k_max_printed || tries >= k_max_tries)) continue;
    // Alternatives, not the first fix plus more work, nor an older
    // release from an index already named.
    if (!container && first_changes && r.changes() > *first_changes) continue;
    if (r.wheel && std::ranges::any_of(report.resolution.winners, [&](const Remedy& w) {
          return w.wheel && w.wheel->wheel->variant == r.wheel->wheel->variant && w.kind == r.kind;
        })) {
      continue;
    }
    if (!container) ++tries;  // only candidates diagnosed again count
    const Diagnosis again = diagnose_applied(s, scope, r, k);
    const std::string left = first_problem(again, interpreter);
    if (!left.empty()) {
      report.resolution.rejected.push_back({r.label(), {"applied to this machine, the doctor still finds: " + left}});
      continue;
    }
    if (!container) {
      ++printed;
      if (!first_changes) first_changes = r.changes();
    }
    std::vector<std::string> titles;
    tails.push_back(left_warnings(again, interpreter, r, titles));
    report.warnings_after.push_back(std::move(titles));
    report.resolution.winners.push_back(std::move(r));
  }
  return tails;
}

// Turns the kept winners into fixes, each saying what it leaves behind, or
// says why there is none.
void report_fixes(const Resolution& resolved, const Constraints& c, const Knowledge& k,
                  const std::vector<std::string>& tails, RemedyReport& report) {
  for (std::size_t i = 0; i < report.resolution.winners.size(); ++i) {
    Fix fix = remedy_fix(report.resolution.winners[i], c, k);
    // Nothing the fix leaves behind is hidden: the user sees it before applying it.
    if (!tails[i].empty()) fix.summary += " (afterwards the doctor still warns: " + tails[i] + ")";
    report.fixes.push_back(std::move(fix));
  }
  if (report.resolution.winners.empty()) {
    report.resolution.no_fix = resolved.no_fix.value_or(
        resolved.no_software_fix.value_or("no candidate came out clean when applied and diagnosed again"));
    report.fixes.push_back({"No fix torchfix can check: " + *report.resolution.no_fix, {}});
  } else if (report.resolution.winners.front().driver && report.resolution.no_software_fix) {
    report.fixes.front().summary =
        "No software-only fix (" + *report.resolution.no_software_fix + "). " + report.fixes.front().summary;
  }
}

// Offers a wheel with native SASS where torch is reached only through PTX
// JIT (it runs, slowly at first start), checked like any remedy.
void offer_native_sass(const Situation& x, const Knowledge& k, Diagnosis& d) {
  const Snapshot& s = *x.snapshot;
  for (std::size_t i = 0; i < s.pythons.size(); ++i) {
    std::vector<Finding*> jit;
    for (Finding& f : d.findings) {
      if (f.id == "torch.arch" && f.reach == Reach::ptx_jit && f.python == s.pythons[i].interpreter) jit.push_back(&f);
    }
    if (jit.empty()) continue;
    const Constraints c = constraints_for(x, i, k, {});
    for (const Remedy& r : resolve(c, k, Goal::improve).winners) {
      if (!r.wheel || r.driver) continue;
      if (!first_problem(diagnose_applied(s, i, r, k), s.pythons[i].interpreter).empty()) continue;
      Fix fix = remedy_fix(r, c, k);
      fix.summary = "Or, for native SASS: " + fix.summary;
      for (Finding* f : jit) f->fixes.push_back(fix);
      break;
    }
  }
}

}  // namespace

void attach_remedies(const Situation& x, const Knowledge& k, Diagnosis& d) {
  const Snapshot& s = *x.snapshot;
  std::vector<std::optional<std::size_t>> scopes;
  for (std::size_t i = 0; i < s.pythons.size(); ++i) scopes.emplace_back(i);
  scopes.emplace_back(std::nullopt);  // the machine's own problems, when no environment took them
  bool machine_done = false;
  for (const auto& scope : scopes) {
    const std::string interpreter = scope ? s.pythons[*scope].interpreter : std::string();
    std::vector<std::string> failing;
    const std::vector<Finding*> targets = scope_targets(d, scope, interpreter, machine_done, failing);
    // The machine's driver problems are solved with the first environment
    // that has torch, so that the driver chosen also runs that torch.
    const bool env_problem = std::ranges::any_of(targets, [](const Finding* f) { return !f->python.empty(); });
    if (scope && !env_problem && !s.pythons[*scope].torch) continue;
    if (targets.empty()) continue;
    const Constraints c = constraints_for(x, scope, k, failing);
    RemedyReport report;
    report.python = scope;
    Resolution resolved = resolve(c, k);
    report.resolution.rejected = std::move(resolved.rejected);
    report.resolution.no_software_fix = resolved.no_software_fix;
    const std::vector<std::string> tails = verify_winners(s, scope, interpreter, resolved.winners, k, report);
    report_fixes(resolved, c, k, tails, report);
    for (Finding* f : targets) {
      f->fixes.insert(f->fixes.begin(), report.fixes.begin(), report.fixes.end());
      if (f->python.empty()) machine_done = true;
    }
    d.remedies.push_back(std::move(report));
  }
  offer_native_sass(x, k, d);
}

}  // namespace torchfix::detail
