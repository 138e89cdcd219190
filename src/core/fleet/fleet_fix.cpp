// The fix that covers every group of a fleet at once: one official wheel
// (the resolver, core/resolver/resolver.hpp, asked for the union of the groups' GPUs
// with one driver per group), or one source build whose arch list is that
// union, or the largest set of groups one wheel covers and the groups it
// leaves out.

#include <algorithm>
#include <map>
#include <set>

#include "core/fleet/fleet_fix.hpp"

#include "core/arch/arch_list.hpp"
#include "core/fleet/fleet.hpp"
#include "core/resolver/resolver.hpp"

namespace torchfix::detail {
namespace {

// The wheel one resolver winner installs for the groups (none: the installed torch serves them).
struct WheelChoice {
  const WheelVariant* wheel = nullptr;
  Version release;
  bool same_release = false;
  bool needs_ptx_jit = false;  // some GPU is reached only through PTX
  bool minor_compat = false;   // runs on a driver only through minor-version compatibility
};

std::vector<std::string> install_commands(const WheelChoice& choice, const std::vector<std::string>& companions,
                                          const std::string& python, PlatformKind platform) {
  return wheel_commands(WheelChange{choice.wheel, choice.release, choice.same_release},
                        python.empty() ? "python3" : python, companions, command_shell(platform));
}

struct Needs {
  std::vector<ComputeCapability> ccs;
  std::optional<Version> driver_cuda;  // oldest over the groups
  std::optional<Version> driver;       // oldest over the groups
};

Needs needs_of(const FleetReport& report, const std::vector<std::size_t>& groups) {
  Needs n;
  std::set<ComputeCapability> ccs;
  for (std::size_t g : groups) {
    const FleetGroup& group = report.groups[g];
    ccs.insert(group.ccs.begin(), group.ccs.end());
    if (group.driver_cuda && (!n.driver_cuda || *group.driver_cuda < *n.driver_cuda)) n.driver_cuda = group.driver_cuda;
    if (group.driver && (!n.driver || *group.driver < *n.driver)) n.driver = group.driver;
  }
  n.ccs.assign(ccs.begin(), ccs.end());
  return n;
}

// Asks the resolver for the groups' GPUs (union), their drivers (one per
// group: each must fit) and the platform, with what the environment holds now
// (`base`, from a node of the fleet). Its best winner that changes only the
// torch wheel serves them; a winner that keeps torch means the installed one
// already does (returned without a wheel).
std::optional<WheelChoice> choose_for(const Knowledge& k, const FleetReport& report,
                                      const std::vector<std::size_t>& groups, PlatformKind platform, Constraints base) {
  std::set<ComputeCapability> ccs;
  base.drivers.clear();
  for (std::size_t g : groups) {
    const FleetGroup& group = report.groups[g];
    ccs.insert(group.ccs.begin(), group.ccs.end());
    if (group.driver || group.driver_cuda) base.drivers.push_back({group.driver, group.driver_cuda});
  }
  base.gpus.assign(ccs.begin(), ccs.end());
  base.platform = platform;
  const Resolution resolution = resolve(base, k);
  for (const Remedy& r : resolution.winners) {
    // A container is no wheel for the fleet's own environments.
    if (r.driver || r.container || !r.builds.empty() || !r.moves.empty()) continue;
    WheelChoice choice;
    if (r.wheel) {
      choice.wheel = r.wheel->wheel;
      choice.release = r.wheel->release;
      choice.same_release = r.wheel->same_release;
    }
    choice.needs_ptx_jit = r.reach == Reach::ptx_jit;
    choice.minor_compat = r.minor_compat;
    return choice;
  }
  return std::nullopt;
}

std::string ccs_text(const std::vector<ComputeCapability>& ccs) {
  std::string out;
  for (ComputeCapability cc : ccs) out += (out.empty() ? "" : ", ") + cc.str();
  return out;
}

// The newest CUDA release whose nvcc accepts SASS for every capability and
// whose programs run on the oldest driver (its own floor, or minor-version
// compatibility within the driver's CUDA major).
std::optional<Version> build_cuda(const Knowledge& k, const Needs& n, PlatformKind platform) {
  std::optional<Version> best;
  for (const DriverFloor& floor : k.driver_floors) {
    const std::vector<Arch> accepted = k.nvcc_archs_for(floor.cuda);
    const bool all = std::ranges::all_of(n.ccs, [&](ComputeCapability cc) {
      return std::ranges::any_of(accepted, [&](const Arch& a) {
        return a.kind == ImageKind::sass && a.cc == cc && a.variant == ArchVariant::generic;
      });
    });
    if (!all) continue;
    if (!driver_fits(k, floor.cuda, DriverState{n.driver, n.driver_cuda}, platform)) continue;
    if (!best || floor.cuda > *best) best = floor.cuda;
  }
  return best;
}

std::vector<std::string> companions_of(const Snapshot* s, const std::string& path) {
  std::vector<std::string> out;
  if (!s) return out;
  for (const PythonEnv& py : s->pythons) {
    if (py.interpreter != path) continue;
    for (const char* name : k_torch_companions) {
      if (py.distributions.contains(name)) out.emplace_back(name);
    }
  }
  return out;
}

// The driver upgrade a group needs before anything runs on it: a GPU its
// driver cannot drive (below its generation's first driver, or past its last
// branch). nullopt when every group's driver drives its GPUs.
std::optional<FleetFix> driver_fix(const Knowledge& k, const FleetReport& report, const std::vector<std::size_t>& order,
                                   const Constraints& base, const FleetFix& so_far) {
  std::vector<std::string> problems;
  std::string groups;
  for (std::size_t g : order) {
    const FleetGroup& group = report.groups[g];
    const DriverState driver{group.driver, group.driver_cuda};
    std::string first;
    for (ComputeCapability cc : group.ccs) {
      if (auto p = gpu_driver_problem(k, cc, driver, group.platform); p && first.empty()) first = p->text;
    }
    if (first.empty()) continue;
    groups += (groups.empty() ? "" : ", ") + std::to_string(g + 1);
    Constraints c = base;
    c.gpus = group.ccs;
    c.platform = group.platform;
    c.drivers = {driver};
    const DriverDecision decided = decide_driver(c, k, c.torch ? c.torch->cuda : std::nullopt);
    if (decided.change) {
      first +=
          "; upgrade its driver to >= " + decided.change->minimum.str() + " (" + decided.change->branch + " or newer)";
    } else if (!decided.why.empty()) {
      first += "; " + decided.why;
    }
    problems.push_back("group " + std::to_string(g + 1) + ": " + first);
  }
  if (problems.empty()) return std::nullopt;
  FleetFix fix = so_far;
  fix.kind = FleetFixKind::driver;
  fix.summary = "no software-only fix for group" + std::string(problems.size() > 1 ? "s " : " ") + groups +
                ": its driver cannot drive its GPUs; only a driver upgrade helps there";
  for (std::string& p : problems) fix.reasons.push_back(std::move(p));
  return fix;
}

std::string groups_text(const std::vector<std::size_t>& groups) {
  std::string out;
  for (std::size_t g : groups) out += (out.empty() ? "" : ", ") + std::to_string(g + 1);
  return out;
}

// Holds what every branch of the covering fix reads: the environment's
// torch, the groups that have it (biggest first) and the platform served.
struct Fleet {
  std::map<std::size_t, std::size_t> nodes;  // group -> nodes where the environment has torch
  std::string torch;
  bool all_native = true;
  std::optional<Version> release;
  PlatformKind platform = PlatformKind::linux_x86_64;
  std::size_t platforms = 0;
  std::vector<std::size_t> order;  // groups with torch, most nodes first
  Constraints base;                // what the environment holds now, from a node of the biggest group
  std::vector<std::string> companions;
  Needs all;
};

// Reads the environment's rows and a node of the biggest group into a Fleet.
Fleet fleet_of(const FleetReport& report, const std::vector<const Snapshot*>& group_snapshots, const FleetEnv& env,
               const Knowledge& knowledge) {
  Fleet f;
  for (const FleetEnvRow& row : env.rows) {
    if (row.verdict == FleetVerdict::absent || row.verdict == FleetVerdict::no_torch) continue;
    f.nodes[row.group] += row.nodes.size();
    if (f.torch.empty()) f.torch = row.torch;
    if (row.verdict != FleetVerdict::runs) f.all_native = false;
  }
  if (f.nodes.empty()) return f;
  if (!f.torch.empty()) f.release = Version::parse(f.torch.substr(0, f.torch.find('+')));
  // One wheel is for one platform: the platform with the most nodes is served.
  std::map<PlatformKind, std::size_t> by_platform;
  for (auto [g, n] : f.nodes) by_platform[report.groups[g].platform] += n;
  f.platform =
      std::ranges::max_element(by_platform, [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  f.platforms = by_platform.size();
  for (auto [g, n] : f.nodes) f.order.push_back(g);
  std::ranges::stable_sort(f.order, [&](std::size_t a, std::size_t b) { return f.nodes[a] > f.nodes[b]; });
  if (const Snapshot* s = group_snapshots[f.order.front()]) {
    std::optional<std::size_t> index;
    for (std::size_t i = 0; i < s->pythons.size(); ++i) {
      if (s->pythons[i].interpreter == env.path) index = i;
    }
    f.base = constraints_for(situate(*s, knowledge), index, knowledge, {});
  }
  f.companions = companions_of(group_snapshots[f.order.front()], env.path);
  f.all = needs_of(report, f.order);
  return f;
}

// Holds the greedy cover: the groups one wheel serves, the rest, and the wheel.
struct Cover {
  std::vector<std::size_t> covered;
  std::vector<std::size_t> left_out;
  std::optional<WheelChoice> choice;
};

// Covers the biggest groups first; a group joins when one wheel still fits
// all joined.
Cover greedy_cover(const Knowledge& k, const FleetReport& report, const Fleet& f) {
  Cover c;
  for (std::size_t g : f.order) {
    if (report.groups[g].platform != f.platform) {
      c.left_out.push_back(g);
      continue;
    }
    std::vector<std::size_t> trial = c.covered;
    trial.push_back(g);
    if (auto choice = choose_for(k, report, trial, f.platform, f.base)) {
      c.covered = std::move(trial);
      c.choice = choice;
    } else {
      c.left_out.push_back(g);
    }
  }
  return c;
}

// Fills `fix` with the one wheel that serves every group.
void wheel_fix(const Fleet& f, const WheelChoice& choice, const Needs& served, const FleetEnv& env, FleetFix& fix) {
  fix.kind = FleetFixKind::wheel;
  fix.summary = "one wheel for every group: torch " + choice.release.str() + " " + choice.wheel->variant + " (GPUs " +
                ccs_text(served.ccs) + ")";
  fix.commands = install_commands(choice, f.companions, env.path, f.platform);
  fix.reasons.push_back("its arch list " + choice.wheel->arch_list + " (" + choice.wheel->source +
                        ") has kernels for " + ccs_text(served.ccs));
  fix.reasons.push_back("the oldest driver is " + (served.driver ? served.driver->str() : std::string("unknown")) +
                        " (CUDA " + (served.driver_cuda ? served.driver_cuda->str() : std::string("unknown")) + ")" +
                        (choice.minor_compat ? ": the wheel's CUDA " + choice.wheel->cuda.major_minor() +
                                                   " runs there through minor-version compatibility"
                                             : ""));
  if (choice.needs_ptx_jit) fix.reasons.push_back("some GPU is reached only through PTX JIT (slow first start)");
}

// Returns the one source build whose arch list covers every group, when the
// fleet is on one platform and a CUDA release compiles for all of it and runs
// on the oldest driver.
std::optional<FleetFix> build_fix(const Knowledge& k, const Fleet& f, const Cover& c, const FleetEnv& env,
                                  FleetFix fix) {
  if (f.platforms != 1) return std::nullopt;
  const auto cuda = build_cuda(k, f.all, f.platform);
  if (!cuda) return std::nullopt;
  fix.kind = FleetFixKind::build;
  fix.summary = "no official wheel covers every group; one build for " + ccs_text(f.all.ccs) +
                " does (TORCH_CUDA_ARCH_LIST=" + fix.arch_list + ", nvcc " + cuda->major_minor() + ")";
  fix.commands.push_back("torchfix build pytorch --arch '" + fix.arch_list + "'" +
                         (f.release ? " --ref v" + f.release->str() : std::string()) + " --python " + env.path);
  fix.reasons.push_back("nvcc " + cuda->major_minor() + " accepts SASS for " + ccs_text(f.all.ccs) +
                        " and its programs run on the oldest driver " +
                        (f.all.driver ? f.all.driver->str() : std::string("(unknown)")));
  fix.reasons.push_back("PTX only for the newest, " + f.all.ccs.back().str() +
                        ", so GPUs newer than the fleet's can JIT; each group gets native SASS");
  if (c.choice && c.choice->wheel) {
    fix.reasons.push_back("the best official wheel, torch " + c.choice->release.str() + " " + c.choice->wheel->variant +
                          ", covers only groups " + groups_text(c.covered));
  }
  return fix;
}

// Fills `fix` with the largest set of groups one wheel (or the installed
// torch) covers, the groups left out, and why no one fix covers them all.
void partial_fix(const Fleet& f, const Cover& c, const Needs& served, const FleetEnv& env, FleetFix& fix) {
  fix.kind = FleetFixKind::none;
  fix.left_out = c.left_out;
  std::ranges::sort(fix.left_out);
  const std::string out = groups_text(fix.left_out);
  const std::string plural = fix.left_out.size() > 1 ? "s " : " ";
  if (c.choice && !c.choice->wheel) {
    fix.summary = "torch " + f.torch + " as installed runs on GPUs " + ccs_text(served.ccs) +
                  "; no one wheel also covers group" + plural + out;
  } else if (c.choice) {
    fix.summary = "no one fix covers every group; torch " + c.choice->release.str() + " " + c.choice->wheel->variant +
                  " covers GPUs " + ccs_text(served.ccs) + " and leaves out group" + plural + out;
    fix.commands = install_commands(*c.choice, f.companions, env.path, f.platform);
  } else {
    fix.summary = "no official wheel or single build covers any group set here; left out: group" + plural + out;
  }
  if (f.platforms != 1) {
    fix.reasons.push_back("the groups run on " + std::to_string(f.platforms) +
                          " platforms; a wheel or build is for one (" + std::string(to_string(f.platform)) +
                          " has the most nodes)");
  } else {
    fix.reasons.push_back("no CUDA release both compiles SASS for " + ccs_text(f.all.ccs) +
                          " and runs on the oldest driver " +
                          (f.all.driver ? f.all.driver->str() : std::string("(unknown)")));
  }
}

}  // namespace

FleetFix covering_fix(const FleetReport& report, const std::vector<const Snapshot*>& group_snapshots,
                      const FleetEnv& env, const Knowledge& knowledge) {
  FleetFix fix;
  const Fleet f = fleet_of(report, group_snapshots, env, knowledge);
  if (f.nodes.empty()) {
    fix.kind = FleetFixKind::none;
    fix.summary = "no node has torch in " + env.path;
    return fix;
  }
  if (f.all_native) {
    fix.summary = "torch " + f.torch + " runs natively on every group: nothing to fix";
    return fix;
  }
  const Cover c = greedy_cover(knowledge, report, f);
  fix.arch_list = render(arch_list_for_gpus(f.all.ccs, PtxPolicy::newest), ArchFormat::torch);
  const Needs served = needs_of(report, c.covered);
  if (c.choice && !c.choice->wheel && c.left_out.empty()) {
    // The resolver keeps the installed torch for every group it was asked
    // about: what fails there is not torch's kernels or driver.
    fix.kind = FleetFixKind::none;
    fix.summary = "torch " + f.torch +
                  " itself fits the groups' GPUs and drivers; run torchfix doctor on a node of a "
                  "failing group for the package that does not";
    return fix;
  }
  if (c.choice && c.left_out.empty()) {
    wheel_fix(f, *c.choice, served, env, fix);
    return fix;
  }
  // No wheel for every group. A group whose driver cannot drive its GPUs is
  // helped by nothing but a driver upgrade (the doctor's answer on the same
  // snapshot): no build. Else one source build may still cover them all.
  if (auto driver = driver_fix(knowledge, report, f.order, f.base, fix)) return *driver;
  if (auto build = build_fix(knowledge, f, c, env, fix)) return *build;
  partial_fix(f, c, served, env, fix);
  return fix;
}

}  // namespace torchfix::detail
