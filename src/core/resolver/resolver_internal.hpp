#pragma once
// Helpers shared by the resolver's files; not part of the public API.

#include <optional>
#include <string>
#include <vector>

#include "core/facts/recipe.hpp"
#include "core/resolver/resolver.hpp"

namespace torchfix::detail {

/// Holds one candidate while the resolver checks it: the remedy and every
/// constraint it breaks (empty: a winner).
struct Scored {
  Remedy remedy;
  std::vector<std::string> reasons;
  std::string label;       // for a candidate that could not even be formed (no driver or image serves it)
  std::string driver_gap;  // the first reason that is a GPU the driver cannot drive (GpuDriverProblem)
};

/// Adds the NGC container candidate (resolver_container.cpp): the newest
/// image of Knowledge::ngc that runs on every GPU with every driver in place,
/// or one rejected candidate saying why none does (the driver it needs).
void container_candidates(const Constraints& c, const Knowledge& k, std::vector<Scored>& out);

/// Returns the wheel rows of c's platform; on Jetson also NVIDIA's JetPack
/// wheels built for its L4T release (resolver.cpp).
std::vector<const WheelVariant*> wheel_rows(const Constraints& c, const Knowledge& k);
/// Returns why release `release` of `w` (exact when `same`) cannot go into
/// c's Python: the release's Python range, a JetPack wheel's one Python, the
/// probed index (resolver.cpp).
std::vector<std::string> python_reasons(const WheelVariant& w, const Version& release, bool same, const Constraints& c,
                                        const Knowledge& k);
/// Returns why the installed torch release from another index or in an NGC
/// image fixes nothing for c's extensions that miss torch symbols (an ABI
/// mismatch): one reason per such extension; empty when none does (built_against.cpp).
std::vector<std::string> same_abi_reasons(const Constraints& c);
/// Adds, per extension that misses torch symbols and whose own torch is
/// known (InstalledPackage::built_against), the wheel remedy that moves torch
/// to that release: the extension's CUDA variant (its local tag, else its
/// libcudart.so.N major, the installed variant first) from torch's index,
/// only where the wheel table has that torch for it (built_against.cpp).
void built_against_candidates(const Constraints& c, const Knowledge& k, std::vector<Scored>& out);

/// Returns the commands that install the driver `d` asks for: the
/// distribution's row of recipes/drivers.toml [[driver_package]], the
/// Windows or host side where the driver lives there, else the download page
/// as a comment (resolver_container.cpp).
std::vector<std::string> driver_commands(const DriverChange& d, const Constraints& c, const Knowledge& k);

/// Returns major.minor of `v` (2.14.1 -> 2.14).
Version major_minor_of(const Version& v);
/// Returns capabilities joined by ';' ("8.6;12.0").
std::string cc_list(const std::vector<ComputeCapability>& ccs);
/// Returns the branch of a driver version (570.124.04 -> 570).
int driver_branch(const Version& driver);

/// Checks the torch a remedy leaves (its `images` and `cuda`; `who` names it
/// in reasons) on every GPU and every driver the remedy leaves in place; sets
/// r.reach and r.minor_compat; returns the violated constraints.
std::vector<std::string> check_torch(Remedy& r, const Constraints& c, const Knowledge& k,
                                     const std::vector<Arch>& images, const std::optional<Version>& cuda,
                                     const std::string& who);
/// Returns, for each GPU, why the driver the remedy leaves cannot drive it.
std::vector<GpuDriverProblem> check_gpu_drivers(const Remedy& r, const Constraints& c, const Knowledge& k);
/// Adds check_gpu_drivers' problems to `s.reasons` (the first also as `s.driver_gap`).
void add_gpu_driver_reasons(Scored& s, const Constraints& c, const Knowledge& k);
/// Returns why torch `release` has no wheel for the constraint's Python, if so.
std::vector<std::string> check_python(const Version& release, const Constraints& c, const Knowledge& k);
/// Returns why the probed torch page of `wheel`'s index (Constraints::index_pages)
/// lists no file of torch `release` (exact when `same`) for c's Python and
/// platform; empty when it lists one or was not probed.
std::vector<std::string> check_index(const WheelVariant& wheel, const Version& release, bool same,
                                     const Constraints& c);
/// Returns the major.minor of the Python `c` holds ("3.10"), "" when unknown.
std::string python_of(const Constraints& c);

/// Returns the extensions that must move with torch `release` of CUDA
/// variant `variant` ("cu128"; "" for a source build): its pinned release
/// (`to`), its project index page (`page`), or neither: rebuild against it.
std::vector<PackageMove> moves_for(const Version& release, const std::string& variant, bool same_release,
                                   const Constraints& c, const Knowledge& k);
/// Returns the pinned extensions whose installed release requires another
/// torch than c's installed one, each moved to the release pinned to that
/// torch (`to`; empty when the tables have none: rebuild against it).
std::vector<PackageMove> pin_mismatches(const Constraints& c, const Knowledge& k);
/// Returns rebuilds of the packages that miss a GPU, removing them from `moves`.
std::vector<PackageBuild> rebuilds(const Constraints& c, const Knowledge& k, std::vector<PackageMove>& moves);

/// Returns the torch releases of `package`'s [[project_index]] rows as
/// "1.13 to 2.4" (exact releases in full: "1.8.0 to 2.0.1"), and, where rows
/// are for `release`'s major.minor, their variants (or exact releases).
/// The package must have rows (Knowledge::project_rows non-empty).
std::string index_pages_text(const Knowledge& k, const std::string& package, const Version& release);

/// Returns the release of `m`'s project to build from its tag against the
/// torch remedy `r` leaves (the installed one under `c` when `r` keeps it):
/// the installed release, or where its setup.py caps torch below it
/// ([[source_torch_cap]]) the newest release whose cap admits that torch;
/// nullopt, with why appended to `text`, when none does. Overrides such as
/// IGNORE_TORCH_VER are never set: the projects warn against them.
std::optional<std::string> release_to_build(const Knowledge& k, const Remedy& r, const Constraints& c,
                                            const PackageMove& m, std::string& text);

/// Returns the torch series (major.minor, ascending) that the first fixed
/// release of each installed package failing on a GPU here pins
/// (InstalledPackage::fixed_release, [[extension_pin]]) (project_moves.cpp).
std::vector<Version> fixed_torches(const Constraints& c, const Knowledge& k);

/// Moves each installed package failing on a GPU here to its first fixed
/// release in `r` where that release runs on the installed torch; where it
/// pins another torch, appends why to `reasons` (the fix must move torch).
void move_to_fixed(const Constraints& c, const Knowledge& k, Remedy& r, std::vector<std::string>& reasons);

/// Returns the release tag (in `rec`'s tag_format) of an installed or target
/// `version` ("2.6.3+cu124" -> "v2.6.3"); "" for a version that names no
/// release (a dev or git build) (build_env.cpp).
std::string release_tag(const Recipe& rec, const std::string& version);

/// Returns the variables that make pip build from source for `archs` with
/// recipe `r` (its arch switch, `snapped` as `torchfix build` snaps it, the
/// Tegra targets through extra_gencode_variable, its fixed environment);
/// TORCH_CUDA_ARCH_LIST alone without a recipe; `snapped` null: the GPUs'
/// own list (build_env.cpp).
std::vector<std::pair<std::string, std::string>> build_env(const Recipe* r, const std::vector<ComputeCapability>& archs,
                                                           const RecipeArch* snapped);

}  // namespace torchfix::detail
