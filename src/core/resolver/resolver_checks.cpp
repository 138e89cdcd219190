// The resolver's constraint checks and the pieces a candidate is made of:
// the driver a remedy needs, extensions that move with torch, rebuilds.

#include <algorithm>

#include "core/diagnosis/extension_checks.hpp"
#include "core/resolver/resolver_internal.hpp"
#include "core/resolver/wheel_index.hpp"

namespace torchfix::detail {
namespace {

// Points `m` at its project's page for torch `release` and `variant`, and
// at how that page is installed from.
void set_page(PackageMove& m, const Knowledge& k, const Version& release, const std::string& variant,
              const std::string& python) {
  m.page = k.project_page(m.package, release, variant, python);
  if (const ProjectIndexPage* row = k.project_page_row(m.package, release)) m.page_install = row->how;
}

// Points `m` at its release's build for torch's CUDA `variant` on its
// project's index ([[variant_index]]); false when no source names one.
bool move_to_variant(PackageMove& m, const Knowledge& k, const std::string& variant) {
  const VariantIndex* row = k.variant_index(m.package, m.from, variant);
  if (!row) return false;
  m.to = row->version;
  m.variant_index = row->index;
  m.variant = row->variant;
  m.source = row->source;
  return true;
}

// Every driver the remedy leaves in place (or the one it installs).
std::vector<DriverState> effective_drivers(const Remedy& r, const Constraints& c, const Knowledge& k) {
  if (!r.driver) return c.drivers;
  DriverState d;
  d.version = r.driver->minimum;
  d.cuda = cuda_of_driver(k, r.driver->minimum, DriverGiven::version, driver_numbering(c.platform), &d.cuda_source);
  return {d};
}

std::string driver_text(const DriverState& d) {
  if (d.version) return d.text() + (d.cuda ? " (CUDA " + d.cuda->major_minor() + ")" : "");
  return d.text();
}

}  // namespace

// Checks the torch a remedy leaves (images, CUDA, release) against every GPU
// and driver; fills reach/minor_compat; returns the violated constraints.
std::vector<std::string> check_torch(Remedy& r, const Constraints& c, const Knowledge& k,
                                     const std::vector<Arch>& images, const std::optional<Version>& cuda,
                                     const std::string& who) {
  std::vector<std::string> out;
  const auto drivers = effective_drivers(r, c, k);
  r.reach = Reach::native;
  for (ComputeCapability gpu : c.gpus) {
    const Reach reach = best_reach(images, gpu);
    if (reach == Reach::none) {
      out.push_back(who + " has no SASS for " + gpu.str() + (is_tegra(gpu) ? " (Tegra needs its exact arch)" : "") +
                    " and no PTX at or below it");
      continue;
    }
    if (reach == Reach::ptx_jit) {
      r.reach = Reach::ptx_jit;
      for (const DriverState& d : drivers) {
        // No minor-version compatibility for JIT of newer PTX.
        if (cuda && d.cuda && *d.cuda < major_minor_of(*cuda)) {
          out.push_back(who + " reaches " + gpu.str() + " only through PTX from CUDA " + cuda->major_minor() +
                        ", which " + driver_text(d) + " cannot JIT");
        }
      }
    }
  }
  if (cuda) {
    for (const DriverState& d : drivers) {
      bool compat = false;
      if (!driver_fits(k, *cuda, d, c.platform, &compat)) {
        std::string floor;
        if (const MinorCompat* m = k.minor_compat_for(cuda->major())) {
          const Version& v = windows_driver(c.platform) && m->windows ? *m->windows : m->linux;
          floor =
              ": CUDA " + std::to_string(cuda->major()) + ".x needs a driver >= " + v.str() + " (" + m->source + ")";
        }
        out.push_back(who + " needs CUDA " + cuda->major_minor() + "; " + driver_text(d) + " is too old" + floor);
      }
      r.minor_compat = r.minor_compat || compat;
    }
  }
  return out;
}

std::vector<GpuDriverProblem> check_gpu_drivers(const Remedy& r, const Constraints& c, const Knowledge& k) {
  std::vector<GpuDriverProblem> out;
  for (const DriverState& d : effective_drivers(r, c, k)) {
    for (ComputeCapability gpu : c.gpus) {
      if (auto problem = gpu_driver_problem(k, gpu, d, c.platform)) out.push_back(std::move(*problem));
    }
  }
  return out;
}

void add_gpu_driver_reasons(Scored& s, const Constraints& c, const Knowledge& k) {
  for (GpuDriverProblem& p : check_gpu_drivers(s.remedy, c, k)) {
    if (s.driver_gap.empty()) s.driver_gap = p.text;
    s.reasons.push_back(std::move(p.text));
  }
}

std::vector<std::string> check_python(const Version& release, const Constraints& c, const Knowledge& k) {
  if (!c.python) return {};
  const TorchPython* row = k.torch_python(release);
  if (!row) return {};
  const Version py = major_minor_of(*c.python);
  if (py >= row->python_min && py <= row->python_max) return {};
  return {"torch " + release.major_minor() + " publishes wheels for Python " + row->python_min.str() + " to " +
          row->python_max.str() + ", not " + py.str() + " (" + row->source + ")"};
}

// The wheel rows of the platform; on Jetson also NVIDIA's JetPack wheels
// built for its L4T release (an unknown release: none of them).
std::vector<const WheelVariant*> wheel_rows(const Constraints& c, const Knowledge& k) {
  std::vector<const WheelVariant*> rows;
  const std::string_view platform = wheel_platform(c.platform);
  for (const WheelVariant& w : k.wheels) {
    if (w.platform == platform) rows.push_back(&w);
  }
  if (c.platform != PlatformKind::tegra || !c.l4t) return rows;
  const std::string release = c.l4t->major_minor();
  for (const WheelVariant& w : k.jetpack_wheels) {
    if (std::ranges::find(w.l4t, release) != w.l4t.end()) rows.push_back(&w);
  }
  return rows;
}

// Why a release of `w` cannot go into the environment's Python: the
// release's Python range, a JetPack wheel's one Python, the probed index.
std::vector<std::string> python_reasons(const WheelVariant& w, const Version& release, bool same, const Constraints& c,
                                        const Knowledge& k) {
  if (w.url.empty()) {
    std::vector<std::string> reasons = check_python(release, c, k);
    if (reasons.empty()) reasons = check_index(w, release, same, c);
    return reasons;
  }
  if (!c.python || !w.python || Version::parse(c.python->major_minor()) == w.python) return {};
  return {"NVIDIA's JetPack " + w.jetpack + " wheel is built for Python " + w.python->str() + " only, this is " +
          c.python->major_minor() + " (recipes/torch-wheels.toml [[jetpack_wheel]])"};
}

std::vector<std::string> check_index(const WheelVariant& wheel, const Version& release, bool same,
                                     const Constraints& c) {
  const IndexPage* page = find_index_page(c.index_pages, wheel.index_url());
  if (!page) return {};
  auto hole = index_hole(*page, release, same, c.python, c.platform);
  if (!hole) return {};
  return {"the index has no such wheel: " + *hole};
}

}  // namespace torchfix::detail

namespace torchfix {

namespace {

constexpr const char* k_tegra_driver =
    "the driver of an integrated (Tegra) GPU comes with JetPack: flash a newer JetPack instead";

// The driver floors collected so far: the highest, why (in order; the one
// that set the minimum goes last), and the last branch some GPU allows.
struct DriverFloors {
  std::optional<Version> need;
  std::vector<std::string> why;
  std::optional<int> last;

  void raise(const Version& v, const std::string& reason) {
    if (!need || v > *need) {
      need = v;
      why.push_back(reason);
    } else {
      why.insert(why.begin(), reason);
    }
  }
};

// Raises `floors` to each GPU generation's first driver (recipes/drivers.toml)
// and lowers its last branch; false on an integrated (Tegra) GPU.
bool add_gpu_floors(const Constraints& c, const Knowledge& k, bool windows, DriverFloors& floors) {
  for (ComputeCapability gpu : c.gpus) {
    if (is_tegra(gpu)) return false;
    const GpuDriverSupport* row = k.gpu_driver(gpu);
    if (!row) continue;
    const Version& first = windows && row->windows ? *row->windows : row->linux;
    floors.raise(first, row->generation + " (" + gpu.str() + ") needs >= " + first.str());
    if (row->last_branch && (!floors.last || *row->last_branch < *floors.last)) floors.last = row->last_branch;
  }
  return true;
}

// Raises `floors` to full support of CUDA `cuda` when a branch the GPUs allow
// has it, else to the major's minor-version compatibility floor; false when
// no floor is tracked for it.
bool add_cuda_floor(const Knowledge& k, const Version& cuda, bool windows, DriverFloors& floors) {
  const DriverFloor* floor = k.driver_floor(cuda);
  const MinorCompat* m = k.minor_compat_for(cuda.major());
  // On Windows a floor without a Windows number (CUDA 13.x: Table 3 bundles
  // no Windows driver) is no floor: its Linux number is not a Windows one.
  const std::optional<Version> full = !floor    ? std::nullopt
                                      : windows ? floor->windows
                                                : std::optional<Version>(floor->linux);
  // The compatibility floor, but at least the major's first release's own
  // driver: "580" names the branch, 580.65.06 is the first 13.0 driver.
  std::optional<Version> compat =
      m ? std::optional<Version>(windows && m->windows ? *m->windows : m->linux) : std::nullopt;
  if (const DriverFloor* first = k.driver_floor(Version({cuda.major(), 0})); compat && first) {
    const std::optional<Version> v = windows ? first->windows : std::optional<Version>(first->linux);
    if (v && *v > *compat) compat = v;
  }
  if (full && (!floors.last || detail::driver_branch(*full) <= *floors.last)) {
    floors.raise(*full, "CUDA " + floor->cuda.str() + " needs >= " + full->str() + " (" + floor->source + ")");
  } else if (compat) {
    floors.raise(*compat, "CUDA " + std::to_string(cuda.major()) + ".x runs on >= " + compat->str() +
                              " through minor-version compatibility (" + m->source + ")");
  } else if (full) {
    floors.raise(*full, "CUDA " + floor->cuda.str() + " needs >= " + full->str() + " (" + floor->source + ")");
  } else {
    return false;
  }
  return true;
}

}  // namespace

// The lowest driver that runs `cuda` fully and drives every GPU; no change,
// with why, when no single driver branch drives them all.
DriverDecision decide_driver(const Constraints& c, const Knowledge& k, const std::optional<Version>& cuda) {
  DriverDecision out;
  auto none = [&](DriverNeed need, std::string why) {
    out.need = need;
    out.why = std::move(why);
    return out;
  };
  const bool windows = windows_driver(c.platform);
  // On Tegra the driver comes with L4T: no desktop driver floor or package applies.
  DriverFloors floors;
  if (c.platform == PlatformKind::tegra || !add_gpu_floors(c, k, windows, floors)) {
    return none(DriverNeed::impossible, k_tegra_driver);
  }
  if (cuda && !add_cuda_floor(k, *cuda, windows, floors)) {
    return none(DriverNeed::impossible, "no driver floor is tracked for CUDA " + cuda->major_minor());
  }
  const std::optional<int> last = floors.last;
  if (!floors.need) return none(DriverNeed::none_needed, "nothing to upgrade the driver for");
  const Version need = *floors.need;
  // A driver already new enough is no change.
  const bool all_new_enough = !c.drivers.empty() && std::ranges::all_of(c.drivers, [&](const DriverState& d) {
    return d.meets(need) && (!last || *d.branch() <= *last);
  });
  if (all_new_enough) return none(DriverNeed::already_met, "the installed driver already meets every floor");
  if (last && detail::driver_branch(need) > *last) {
    return none(DriverNeed::impossible, "no driver branch serves all of it: " + floors.why.back() +
                                            ", but the last branch for some GPU is R" + std::to_string(*last));
  }
  DriverChange change;
  change.windows = windows;
  change.host = c.container;
  change.why = std::move(floors.why);
  change.minimum = need;
  change.branch = "R" + std::to_string(detail::driver_branch(need));
  // A driver past a generation's last branch is replaced by that branch.
  change.downgrade =
      last && std::ranges::any_of(c.drivers, [&](const DriverState& d) { return d.branch() && *d.branch() > *last; });
  if (change.downgrade) change.branch = "R" + std::to_string(*last);
  out.need = DriverNeed::change;
  out.change = std::move(change);
  return out;
}

}  // namespace torchfix

namespace torchfix::detail {

std::string python_of(const Constraints& c) {
  return c.python ? c.python->major_minor() : "";
}

// Whether installing torch's `variant` changes the CUDA major torch brings
// (cu126 -> cu128: no; cu118 -> cu128 or cpu -> cu128: yes; unknown: yes).
bool cuda_major_changes(const Constraints& c, const std::string& variant) {
  const auto to = Version::from_cuda_variant(variant);
  return !c.torch || !c.torch->cuda || !to || to->major() != c.torch->cuda->major();
}

// Whether extension `p`, tied to torch, must move when torch keeps its
// release and changes only its variant (cu126 -> cu128, cpu -> cu130): one
// decision for every such change. The same release keeps torch's C++ ABI,
// so it moves only where its own build is per variant: a project index's
// wheel (PyG's +pt29cpu has no CUDA kernels), or a binary linking the
// libcudart.so.N of another major than the new torch's (`runtime_moves`).
// A pin the release satisfies (xformers 0.0.33: torch==2.9.0, beside
// 2.9.0+cpu -> 2.9.0+cu130) keeps it: every release pinned to that torch
// is the same pin, so "its release for the new torch" is no change. Else a
// torch_abi extension of the tables moves when the CUDA major changes.
bool moves_with_variant(const InstalledPackage& p, const Version& release, const std::string& variant,
                        bool runtime_moves, const Constraints& c, const Knowledge& k) {
  if (runtime_moves || !k.project_rows(p.name).empty()) return true;
  const auto wanted = required_torch(k, p.name, p.version, p.torch_pin);
  if (wanted && !wanted->series && !wanted->built_against() && wanted->admits(release)) return false;
  // An extension that already links the new torch's CUDA runtime does not move for it.
  const auto to_cuda = Version::from_cuda_variant(variant);
  const bool linked_to_new = p.cudart_major && to_cuda && *p.cudart_major == to_cuda->major();
  const ExtensionSupport* support = k.extension(p.name);
  return support && support->torch_abi && cuda_major_changes(c, variant) && !linked_to_new;
}

// Extensions that must move with a new torch release.
std::vector<PackageMove> moves_for(const Version& release, const std::string& variant, bool same_release,
                                   const Constraints& c, const Knowledge& k) {
  std::vector<PackageMove> out;
  for (const InstalledPackage& p : c.packages) {
    const ExtensionSupport* support = k.extension(p.name);
    const bool pinned = k.pins(p.name);
    // Tied to the old release: a pin (the tables' or its own METADATA's), the
    // tables' word, or its own DT_NEEDED libc10/libtorch (a C++ extension
    // built against one torch release).
    // The libcudart.so.N it links must be the new torch's major (a source
    // build's variant "" names none: judged once it is built).
    const auto to_cuda = Version::from_cuda_variant(variant);
    const bool runtime_moves = p.cudart_major && to_cuda && *p.cudart_major != to_cuda->major();
    if (!pinned && !p.torch_pin && !(support && support->torch_abi) && !p.torch_abi && !runtime_moves) continue;
    // Back on the torch it was built against (an exact release, or its series).
    const BuiltAgainst* b = p.built_against ? &*p.built_against : nullptr;
    if (b && (b->series ? major_minor_of(b->torch) == major_minor_of(release) : b->torch == release)) continue;
    // torchvision and torchaudio are reinstalled with the wheel, at its release.
    if (std::ranges::find(c.companions, p.name) != c.companions.end()) continue;
    if (same_release && !moves_with_variant(p, release, variant, runtime_moves, c, k)) continue;
    PackageMove m;
    m.package = p.name;
    m.from = p.version;
    m.detected = !pinned && !(support && support->torch_abi);
    // Its release's build for the new torch's CUDA from its project's index; at the
    // same torch release, another release pinned to it is built for the same CUDA.
    if (runtime_moves && move_to_variant(m, k, variant)) {
      out.push_back(std::move(m));
      continue;
    }
    for (const ExtensionPin& e : k.extension_pins) {
      const bool match = same_release ? e.torch == release : major_minor_of(e.torch) == major_minor_of(release);
      if (e.distribution == p.name && match && !(runtime_moves && same_release)) {
        m.to = e.version;
        m.source = e.source;
      }
    }
    // A project's index (PyG's, OpenMMLab's) serves it per torch and variant.
    if (m.to.empty()) set_page(m, k, release, variant, python_of(c));
    // A source build its own setup.py refuses for this torch, at every release.
    const auto from = Version::parse(p.version);
    m.capped = m.to.empty() && m.page.empty() && from && k.source_torch_cap(p.name, *from) &&
               !k.newest_release_admitting(p.name, release);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<PackageMove> pin_mismatches(const Constraints& c, const Knowledge& k) {
  std::vector<PackageMove> out;
  if (!c.torch) return out;
  for (const InstalledPackage& p : c.packages) {
    const auto wanted = required_torch(k, p.name, p.version, p.torch_pin);
    const bool pinned_elsewhere = wanted && !wanted->admits(c.torch->release) && !wanted->built_against();
    // Its binary needs torch symbols this torch lacks, whatever it declares,
    // or the CUDA runtime of another major than torch's.
    const bool runtime_broken = p.cudart_major && c.torch->cuda && *p.cudart_major != c.torch->cuda->major();
    if (!pinned_elsewhere && !p.abi_broken && !runtime_broken && !p.variant_broken) continue;
    // Known by its METADATA alone: its source is not known (no PyPI rebuild under its name).
    const bool known = k.pin_of(p.name, p.version) || k.extension(p.name) || !k.project_rows(p.name).empty();
    PackageMove m{p.name,
                  p.version,
                  "",
                  "",
                  pinned_elsewhere
                      ? (wanted->row ? wanted->row->source : (wanted->series ? "its local tag" : "its METADATA"))
                  : p.abi_broken     ? "its binary's torch symbols"
                  : p.variant_broken ? "its CUDA variant"
                                     : "the libcudart.so." + std::to_string(*p.cudart_major) + " it links",
                  !known};
    if (runtime_broken && !pinned_elsewhere && !p.abi_broken && move_to_variant(m, k, c.torch->variant)) {
      out.push_back(std::move(m));
      continue;
    }
    for (const ExtensionPin& e : k.extension_pins) {
      if (e.distribution == p.name && e.torch == c.torch->release && e.version != p.version) {
        m.to = e.version;
        m.source = e.source;
      }
    }
    // A project's index (PyG's) serves its wheel for the installed torch and variant.
    if (m.to.empty()) set_page(m, k, c.torch->release, c.torch->variant, "");
    out.push_back(std::move(m));
  }
  return out;
}

// Rebuilds of failing extensions for every GPU (not torch).
std::vector<PackageBuild> rebuilds(const Constraints& c, const Knowledge& k, std::vector<PackageMove>& moves) {
  std::vector<PackageBuild> out;
  const auto& gpus = c.gpus;
  for (const InstalledPackage& p : c.packages) {
    if (p.runs) continue;
    PackageBuild b;
    b.package = p.name;
    b.archs = gpus;
    b.recipe = std::ranges::any_of(k.build_recipes, [&](const Recipe& r) { return r.name == p.name; });
    NvccWindow window;
    for (ComputeCapability gpu : gpus) {
      if (auto own = k.nvcc_window_for(gpu)) window.narrow(*own);
      if (const ExtensionSupport* s = k.extension(p.name); s && gpu < s->min_cc) {
        b.note = p.name + " does not support " + gpu.str() +
                 " upstream (it needs compute capability >= " + s->min_cc.str() + ": " + s->source +
                 "); a source build for it is unsupported and may fail";
      }
    }
    b.nvcc_min = window.first;
    b.nvcc_max = window.last;
    // A package moved to a release for the new torch is rebuilt instead.
    std::erase_if(moves, [&](const PackageMove& m) { return m.package == p.name; });
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace torchfix::detail
