// The resolver: candidates of every kind, each checked against every
// constraint, ranked. Rendering and applying remedies: resolver_apply.cpp.

#include "core/resolver/resolver.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <tuple>

#include "core/resolver/resolver_internal.hpp"

namespace torchfix {
namespace detail {

Version major_minor_of(const Version& v) {
  return Version({v.major(), v.minor()});
}

std::string cc_list(const std::vector<ComputeCapability>& ccs) {
  std::string out;
  for (ComputeCapability cc : ccs) out += (out.empty() ? "" : ";") + cc.str();
  return out;
}

int driver_branch(const Version& driver) {
  return driver.major();
}

}  // namespace detail

using detail::major_minor_of;

std::string_view to_string(CandidateKind kind) {
  switch (kind) {
    case CandidateKind::keep:
      return "keep";
    case CandidateKind::wheel:
      return "wheel";
    case CandidateKind::driver:
      return "driver";
    case CandidateKind::wheel_driver:
      return "wheel+driver";
    case CandidateKind::source_build:
      return "source-build";
    case CandidateKind::container:
      return "container";
  }
  return "keep";
}

int Remedy::changes() const {
  return (wheel ? 1 : 0) + (driver ? 1 : 0) + (container ? 1 : 0) + static_cast<int>(builds.size() + moves.size());
}

int Remedy::unmoved() const {
  return static_cast<int>(
      std::ranges::count_if(moves, [](const PackageMove& m) { return m.to.empty() && m.page.empty(); }));
}

std::string Remedy::label() const {
  std::string out;
  if (wheel)
    out = (wheel->nightly ? "nightly " : "") + ("torch " + wheel->release.str()) + " from " + wheel->wheel->variant;
  if (container) out = "NGC container " + container->image;
  if (driver) out += (out.empty() ? "" : " + ") + std::string("driver >= ") + driver->minimum.str();
  for (const PackageBuild& b : builds) {
    out += (out.empty() ? "" : " + ") + b.package + " built for " + detail::cc_list(b.archs);
  }
  return out.empty() ? "keep torch and the driver" : out;
}

bool driver_fits(const Knowledge& k, const Version& wheel_cuda, const DriverState& driver, PlatformKind platform,
                 bool* minor_compat) {
  const CudaOnDriver on = cuda_on_driver(k, driver, driver_numbering(platform), wheel_cuda);
  if (minor_compat) *minor_compat = on == CudaOnDriver::minor_compat;
  return on != CudaOnDriver::too_old;
}

std::optional<GpuDriverProblem> gpu_driver_problem(const Knowledge& k, ComputeCapability gpu, const DriverState& driver,
                                                   PlatformKind platform) {
  if (!driver.version || is_tegra(gpu) || platform == PlatformKind::tegra) return std::nullopt;
  const GpuDriverSupport* row = k.gpu_driver(gpu);
  if (!row) return std::nullopt;
  const bool windows = windows_driver(platform);
  const Version& first = windows && row->windows ? *row->windows : row->linux;
  if (!driver.meets(first)) {
    return GpuDriverProblem{GpuDriverGap::too_old,
                            driver.text() + " cannot drive a " + row->generation + " GPU (" + gpu.str() +
                                "): it needs " + (windows ? "a Windows driver" : "a driver") + " >= " + first.str()};
  }
  // Windows numbers a branch over a few hundreds (R580: 580.xx to 582.xx).
  if (row->last_branch && *driver.branch() > *row->last_branch + (windows ? 4 : 0)) {
    return GpuDriverProblem{GpuDriverGap::dropped, driver.text() + " no longer drives " + row->generation + " GPUs (" +
                                                       gpu.str() + "): the last branch for them is R" +
                                                       std::to_string(*row->last_branch)};
  }
  return std::nullopt;
}

namespace {

using namespace detail;

// Says whether an installed extension has a release pinned to torch
// `release` (major.minor) in recipes/torch-wheels.toml [[extension_pin]], or
// a page of its project's index for it and `variant` ([[project_index]]).
bool pinned_release(const Version& release, const std::string& variant, const Constraints& c, const Knowledge& k) {
  // torchvision and torchaudio come with every torch wheel: they hold no release back.
  const auto installed = [&](std::string_view name) {
    return std::ranges::find(c.companions, name) == c.companions.end() &&
           std::ranges::any_of(c.packages, [&](const InstalledPackage& p) { return p.name == name; });
  };
  return std::ranges::any_of(k.extension_pins,
                             [&](const ExtensionPin& e) {
                               return major_minor_of(e.torch) == major_minor_of(release) && installed(e.distribution);
                             }) ||
         std::ranges::any_of(c.packages, [&](const InstalledPackage& p) {
           return !k.project_page(p.name, release, variant, python_of(c)).empty();
         });
}

// Names the pinned extensions of `r` with no release for its torch.
std::string unmoved_names(const Remedy& r) {
  std::string names;
  for (const PackageMove& m : r.moves) {
    if (m.to.empty() && m.page.empty()) names += (names.empty() ? "" : ", ") + m.package + " " + m.from;
  }
  return names;
}

void wheel_candidates(const Constraints& c, const Knowledge& k, bool with_driver, std::vector<Scored>& out) {
  for (const WheelVariant* row_of : wheel_rows(c, k)) {
    const WheelVariant& w = *row_of;
    // A row's releases share images, CUDA and driver needs: check those once,
    // then pick the releases (the installed one, else the newest) by Python.
    Scored row;
    row.remedy.kind = with_driver ? CandidateKind::wheel_driver : CandidateKind::wheel;
    if (with_driver) {
      row.remedy.driver = decide_driver(c, k, w.cuda).change;
      if (!row.remedy.driver) continue;
    }
    row.reasons = check_torch(row.remedy, c, k, w.images, w.cuda, "torch " + w.variant + " " + w.arch_list);
    add_gpu_driver_reasons(row, c, k);
    std::vector<Version> releases;
    if (c.torch && w.covers_release(c.torch->release)) releases.push_back(c.torch->release);
    // The torch a broken release's first fixed release pins: tried beside the newest.
    const std::vector<Version> fixed_series = fixed_torches(c, k);
    for (const Version& series : fixed_series) {
      if (w.covers_release(series)) releases.push_back(series);
    }
    for (int minor = w.max.minor(); minor >= w.min.minor() && w.min.major() == w.max.major(); --minor) {
      releases.push_back(Version({w.max.major(), minor}));
    }
    std::optional<Scored> first_failure;
    bool held = false;  // a newer release left a pinned extension without a release
    std::vector<Version> tried;
    for (const Version& release : releases) {
      const bool same = c.torch && c.torch->release == release && w.covers_release(c.torch->release);
      if (same && c.torch->variant == w.variant) continue;  // that is what is installed
      if (std::ranges::find(tried, release) != tried.end()) continue;
      tried.push_back(release);
      const bool fixes = std::ranges::find(fixed_series, release) != fixed_series.end();
      // Past the newest, only releases an installed extension is pinned to.
      if (held && !same && !pinned_release(release, w.variant, c, k)) continue;
      Scored s = row;
      s.remedy.wheel = WheelChange{&w, release, same};
      // The table says it exists; the probed index (its mirror) may still lack it.
      for (auto& r : python_reasons(w, release, same, c, k)) s.reasons.push_back(std::move(r));
      if (same) {
        for (auto& r : same_abi_reasons(c)) s.reasons.push_back(std::move(r));
      }
      if (!s.reasons.empty()) {
        if (!first_failure && !held) first_failure = std::move(s);
        if (!row.reasons.empty()) break;  // every release fails the same way
        continue;
      }
      s.remedy.moves = moves_for(release, w.variant, same, c, k);
      s.remedy.builds = rebuilds(c, k, s.remedy.moves);
      const bool stack_moves = s.remedy.unmoved() == 0;
      if (fixes) {
        out.push_back(std::move(s));
        continue;
      }
      if (!same && !stack_moves) {
        held = true;
        first_failure.reset();
      }
      out.push_back(std::move(s));
      // The installed release and the newest release of each row are enough,
      // and, where a pinned extension has no release for the newest, the
      // newest release every pinned extension can move to (ranked above).
      if (!same && stack_moves) {
        first_failure.reset();
        break;
      }
    }
    if (first_failure) out.push_back(std::move(*first_failure));
  }
}

void driver_candidates(const Constraints& c, const Knowledge& k, std::vector<Scored>& out) {
  if (c.torch && !c.torch->cuda) return;  // a CPU-only torch stays CPU-only on any driver
  Scored s;
  s.remedy.kind = CandidateKind::driver;
  DriverDecision decided = decide_driver(c, k, c.torch ? c.torch->cuda : std::nullopt);
  if (!decided.change) {
    if (decided.need != DriverNeed::impossible) return;
    s.label = "a driver upgrade alone";
    s.reasons.push_back(decided.why);
    out.push_back(std::move(s));
    return;
  }
  s.remedy.driver = std::move(decided.change);
  if (c.torch) {
    s.reasons = check_torch(s.remedy, c, k, c.torch->images, c.torch->cuda,
                            "the installed torch " + c.torch->release.str() + "+" + c.torch->variant);
  }
  add_gpu_driver_reasons(s, c, k);
  s.remedy.builds = rebuilds(c, k, s.remedy.moves);
  out.push_back(std::move(s));
}

// Moves torch's companions that were built for another torch (by their pin,
// their torch symbols or their CUDA runtime) off `r.moves` into a reinstall
// of the installed torch with them from its own index, where the wheel table
// has that torch for this platform and Python: pip then picks the companion
// releases built for it (a nightly: its variant's nightly channel). Else rebuilds.
void reinstall_companions(const Constraints& c, const Knowledge& k, Remedy& r) {
  const auto companion = [&](const PackageMove& m) {
    return std::ranges::find(c.companions, m.package) != c.companions.end();
  };
  if (!c.torch || std::ranges::none_of(r.moves, companion)) return;
  for (const WheelVariant* w : wheel_rows(c, k)) {
    const bool release =
        w->covers_release(c.torch->release) && python_reasons(*w, c.torch->release, true, c, k).empty();
    if (w->variant != c.torch->variant || !w->url.empty() || !(release || c.torch->nightly)) continue;
    r.wheel = WheelChange{.wheel = w, .release = c.torch->release, .same_release = true, .nightly = c.torch->nightly};
    for (const PackageMove& m : r.moves) {
      if (companion(m)) r.companions_rebuilt_elsewhere.push_back(m.package + " " + m.from);
    }
    std::erase_if(r.moves, companion);
    return;
  }
}

void keep_candidate(const Constraints& c, const Knowledge& k, std::vector<Scored>& out) {
  Scored s;
  s.remedy.kind = CandidateKind::keep;
  if (c.torch && c.torch->cuda) {
    s.reasons = check_torch(s.remedy, c, k, c.torch->images, c.torch->cuda,
                            "the installed torch " + c.torch->release.str() + "+" + c.torch->variant);
  } else if (c.torch) {
    s.reasons.push_back("the installed torch " + c.torch->release.str() + "+" + c.torch->variant +
                        " has no CUDA: it cannot use an NVIDIA GPU");
  }
  add_gpu_driver_reasons(s, c, k);
  if (c.torch) s.remedy.moves = pin_mismatches(c, k);
  reinstall_companions(c, k, s.remedy);
  move_to_fixed(c, k, s.remedy, s.reasons);
  s.remedy.builds = rebuilds(c, k, s.remedy.moves);
  // nothing to do is not a remedy
  if (s.remedy.builds.empty() && s.remedy.moves.empty() && !s.remedy.wheel && s.reasons.empty()) return;
  out.push_back(std::move(s));
}

// torch from source, with a toolkit that can still target every GPU and that
// the driver (or an upgraded one) runs.
void source_candidates(const Constraints& c, const Knowledge& k, std::vector<Scored>& out) {
  const auto& gpus = c.gpus;
  if (gpus.empty()) return;
  Scored s;
  s.remedy.kind = CandidateKind::source_build;
  PackageBuild b;
  b.package = "pytorch";
  b.archs = gpus;
  b.recipe = std::ranges::any_of(k.build_recipes, [](const Recipe& r) { return r.name == "pytorch"; });
  NvccWindow window;
  for (ComputeCapability gpu : gpus) {
    if (auto own = k.nvcc_window_for(gpu)) {
      window.narrow(*own);
    } else {
      s.reasons.push_back("no nvcc in recipes/toolkits.toml compiles for " + gpu.str());
    }
  }
  b.nvcc_min = window.first;
  b.nvcc_max = window.last;
  if (window.empty()) {
    s.reasons.push_back("no nvcc compiles for all of " + detail::cc_list(gpus) +
                        " (needs CUDA >= " + b.nvcc_min->str() + " and <= " + b.nvcc_max->str() + ")");
  }
  if (!b.recipe) s.reasons.push_back("no build recipe named pytorch (recipes/build)");
  if (c.platform == PlatformKind::windows) {
    s.reasons.push_back(
        "torchfix build does not build PyTorch on native Windows (no MSVC plan: docs/windows.md); "
        "WSL2 can");
  }
  // The toolkit: the installed one when it fits, else the newest tracked
  // CUDA inside the window that the drivers run.
  std::optional<Version> cuda;
  if (c.toolkit && window.contains(*c.toolkit)) cuda = major_minor_of(*c.toolkit);
  auto runs_everywhere = [&](const Version& v) {
    return std::ranges::all_of(c.drivers, [&](const DriverState& d) { return driver_fits(k, v, d, c.platform); });
  };
  if (!cuda || !runs_everywhere(*cuda)) {
    // The newest CUDA every driver supports fully, else the newest it runs
    // through minor-version compatibility.
    cuda.reset();
    for (const bool full : {true, false}) {
      for (const DriverFloor& f : k.driver_floors) {
        const bool fits = full ? std::ranges::all_of(c.drivers,
                                                     [&](const DriverState& d) {
                                                       bool compat = false;
                                                       return driver_fits(k, f.cuda, d, c.platform, &compat) && !compat;
                                                     })
                               : runs_everywhere(f.cuda);
        if (window.contains(f.cuda) && fits && (!cuda || f.cuda > *cuda)) cuda = f.cuda;
      }
      if (cuda) break;
    }
  }
  if (!cuda) {
    for (const DriverFloor& f : k.driver_floors) {
      if (window.contains(f.cuda) && (!cuda || f.cuda > *cuda)) cuda = f.cuda;
    }
    if (cuda) {
      DriverDecision decided = decide_driver(c, k, cuda);
      s.remedy.driver = std::move(decided.change);
      if (!s.remedy.driver)
        s.reasons.push_back("a CUDA " + cuda->str() + " build needs a newer driver: " + decided.why);
    } else {
      s.reasons.push_back("no tracked CUDA release lies in " + window.str());
    }
  }
  if (cuda) {
    b.nvcc_min = cuda;
    b.nvcc_max = cuda;
    std::vector<Arch> built;
    for (ComputeCapability gpu : gpus) built.push_back({ImageKind::sass, gpu, ArchVariant::generic});
    for (auto& r : check_torch(s.remedy, c, k, built, cuda, "a CUDA " + cuda->str() + " source build")) {
      s.reasons.push_back(std::move(r));
    }
  }
  if (cuda && !s.remedy.driver && !check_gpu_drivers(s.remedy, c, k).empty()) {
    // The installed driver cannot drive a GPU (too old, or past its last branch).
    DriverDecision decided = decide_driver(c, k, cuda);
    s.remedy.driver = std::move(decided.change);
    if (!s.remedy.driver) s.reasons.push_back(decided.why);
  }
  add_gpu_driver_reasons(s, c, k);
  s.remedy.builds.push_back(std::move(b));
  if (c.torch) s.remedy.moves = moves_for(Version({99, 0}), "", false, c, k);
  for (PackageBuild& e : rebuilds(c, k, s.remedy.moves)) s.remedy.builds.push_back(std::move(e));
  out.push_back(std::move(s));
}

// Says on each wheel remedy that moves every pinned extension which of
// them a newer torch among `winners` leaves without a release (the same
// release from another index moves none: its pins hold it, moves_with_variant).
// A torch that a broken release's fixed one pins (`fixed`) is chosen for that, not held.
void mark_held_back(std::vector<Remedy>& winners, const std::vector<Version>& fixed) {
  for (Remedy& r : winners) {
    if (!r.wheel || (r.moves.empty() && !r.wheel->same_release) || r.unmoved() != 0) continue;
    if (std::ranges::find(fixed, major_minor_of(r.wheel->release)) != fixed.end()) continue;
    const auto newer = std::ranges::find_if(
        winners, [&](const Remedy& n) { return n.wheel && n.unmoved() > 0 && r.wheel->release < n.wheel->release; });
    if (newer != winners.end()) {
      r.held_by = unmoved_names(*newer) + " has no release for torch " + newer->wheel->release.major_minor();
    }
  }
}

// Lower sorts first. `fixed` holds fixed_torches(): past the newest of
// them, a torch moves further than a broken release needs.
auto rank_key(const Remedy& r, const Constraints& c, const std::vector<Version>& fixed) {
  const bool driver_known = std::ranges::any_of(c.drivers, [](const DriverState& d) { return d.cuda || d.version; });
  const int software = r.driver ? 1 : 0;
  // The container is placed by resolve() itself, after the wheels.
  const int heavy = r.kind == CandidateKind::source_build ? 1 : 0;
  const int release = r.wheel ? r.wheel->release.major() * 100 + r.wheel->release.minor() : 0;
  const int cuda = r.wheel ? r.wheel->wheel->cuda.major() * 10 + r.wheel->wheel->cuda.minor() : 0;
  const bool same = r.wheel && r.wheel->same_release;
  // The installed release before full CUDA support: minor-version
  // compatibility runs SASS on any driver of the major (F2: the same release
  // from cu126, not an older torch that torchvision and the user's code were
  // not written for). With the driver unknown, the lower CUDA runs on more
  // drivers.
  // A pinned extension with no release for the new torch is a source
  // rebuild at a version its own pin refuses: a torch it can move with wins.
  // Keeping torch, a rebuild against it is no refused pin: it is not counted.
  const int unmoved = r.kind == CandidateKind::keep ? 0 : r.unmoved();
  // An extension that no release can build against the new torch (its
  // setup.py's cap) weighs more than one that is rebuilt.
  const int capped =
      r.kind == CandidateKind::keep
          ? 0
          : static_cast<int>(std::ranges::count_if(r.moves, [](const PackageMove& m) { return m.capped; }));
  // A rebuild of a binary-only extension whose own torch is known weighs
  // more than moving torch to that release (built_against_candidates).
  const int rebuilt_binaries = static_cast<int>(std::ranges::count_if(r.moves, [&](const PackageMove& m) {
    return m.to.empty() && m.page.empty() && std::ranges::any_of(c.packages, [&](const InstalledPackage& p) {
             return p.name == m.package && p.built_against;
           });
  }));
  // Among as many changes, keeping torch comes first.
  const int moves_torch = r.kind == CandidateKind::keep ? 0 : 1;
  const int past_fixed = r.wheel && !fixed.empty() && fixed.back() < major_minor_of(r.wheel->release) ? 1 : 0;
  return std::tuple(heavy, capped, rebuilt_binaries, unmoved, r.changes(), moves_torch, software, past_fixed,
                    r.reach == Reach::ptx_jit ? 1 : 0, same ? 0 : 1, r.minor_compat ? 1 : 0, -release,
                    driver_known ? -cuda : cuda);
}

}  // namespace

Resolution resolve(const Constraints& given, const Knowledge& k, Goal goal) {
  // Every check below walks the GPUs: deduplicate them once.
  Constraints c = given;
  c.gpus = distinct_capabilities(given.gpus);
  std::vector<Scored> all;
  // One generator per CandidateKind (see resolver.hpp for adding a kind).
  keep_candidate(c, k, all);
  driver_candidates(c, k, all);
  if (c.torch) {
    // Before the other wheels: where one of them installs the same, this one says why.
    built_against_candidates(c, k, all);
    wheel_candidates(c, k, false, all);
    wheel_candidates(c, k, true, all);
    source_candidates(c, k, all);
    container_candidates(c, k, all);
  }
  Resolution out;
  // The constraint no software change can meet, when it comes to that: the
  // first GPU the driver cannot drive.
  std::string driver_gap;
  for (const Scored& s : all) {
    if (driver_gap.empty() && !s.driver_gap.empty()) driver_gap = s.driver_gap;
  }
  for (Scored& s : all) {
    if (goal == Goal::improve && s.reasons.empty() && s.remedy.reach == Reach::ptx_jit) {
      s.reasons.push_back("still only PTX JIT");
    }
    if (s.reasons.empty()) {
      out.winners.push_back(std::move(s.remedy));
    } else {
      out.rejected.push_back({s.label.empty() ? s.remedy.label() : s.label, std::move(s.reasons)});
    }
  }
  const std::vector<Version> fixed = fixed_torches(c, k);
  std::vector<std::pair<decltype(rank_key(Remedy{}, c, fixed)), std::size_t>> keys;
  for (std::size_t i = 0; i < out.winners.size(); ++i) keys.emplace_back(rank_key(out.winners[i], c, fixed), i);
  std::ranges::stable_sort(keys);
  std::vector<Remedy> ranked;
  std::vector<Remedy> containers;
  for (const auto& [key, i] : keys) {
    Remedy& r = out.winners[i];
    (r.kind == CandidateKind::container ? containers : ranked).push_back(std::move(r));
  }
  // The container changes more than a wheel (a new environment, Docker and
  // the NVIDIA container toolkit) but less than a driver upgrade or a
  // source build: it goes right after the last wheel that needs no driver.
  const auto last_wheel = std::ranges::find_if(ranked.rbegin(), ranked.rend(), [](const Remedy& r) {
    return !r.driver && (r.kind == CandidateKind::wheel || r.kind == CandidateKind::keep);
  });
  ranked.insert(last_wheel.base(), std::make_move_iterator(containers.begin()),
                std::make_move_iterator(containers.end()));
  out.winners = std::move(ranked);
  mark_held_back(out.winners, fixed);
  const bool software = std::ranges::any_of(out.winners, [](const Remedy& r) { return !r.driver; });
  if (!software) {
    // Name the constraint no software change can meet: the driver itself.
    std::string why = driver_gap;
    if (why.empty()) {
      for (const Rejected& r : out.rejected) {
        if (why.empty() && !r.reasons.empty()) why = r.candidate + ": " + r.reasons.front();
      }
    }
    out.no_software_fix = why.empty() ? std::string("no official wheel or source build runs here") : why;
  }
  if (out.winners.empty()) out.no_fix = out.no_software_fix;
  return out;
}

}  // namespace torchfix
