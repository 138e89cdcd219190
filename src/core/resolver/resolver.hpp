#pragma once
// The resolver: the one place that decides every remedy the doctor prints.
//
// Input is a set of constraints (GPUs, drivers, platform, Python, what is
// installed) given as a value, so the doctor can ask for one machine and a
// fleet for several at once ("which one wheel covers 7.0, 8.0, 9.0 and 10.0
// on drivers 535 and 570?"). The resolver enumerates candidate remedies, one
// generator per CandidateKind, checks each against every constraint on every
// GPU, ranks the survivors and returns them with the reasons the others lost.
//
// Pure: no I/O. Checking a remedy by applying it to a snapshot and diagnosing
// again is done by diagnose() (core/diagnosis/diagnosis.hpp) through apply_remedy().
//
// Extension point: add a CandidateKind value, a generator
// `void NAME_candidates(const Constraints&, const Knowledge&,
// std::vector<detail::Scored>&)` in its own file (resolver_container.cpp is
// one), call it from resolve() (resolver.cpp), and teach apply_remedy() what
// the remedy changes in a snapshot and remedy_fix() how to spell it.

#include <optional>
#include <string>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/version.hpp"
#include "core/facts/knowledge.hpp"
#include "core/facts/ngc_table.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

struct Fix;  // core/diagnosis/diagnosis.hpp

/// Describes the torch that is installed now.
struct InstalledTorch {
  Version release;              // "2.15.0"
  std::string variant;          // "cu132", "cpu", "rocm6.2", "" (a local build)
  std::optional<Version> cuda;  // nullopt for CPU and ROCm builds
  std::vector<Arch> images;     // what it carries (binaries, flags or the wheel table)
  std::string version{};        // as installed, "2.12.0.dev20260417+cu130"
  bool nightly = false;         // a nightly build: its companions come from the nightly channel of `variant`
};

/// Names the torch release a binary-only extension was built against, and
/// where that was read: an [[extension_pin]] row with built_against (its own
/// release's, or the public release's for a `+cuNNN` build), or the
/// `torchX.Y` of a release wheel's file name (flash-attn's GitHub assets,
/// "flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-...whl").
struct BuiltAgainst {
  Version torch;                  // "2.9.1"; a major.minor ("2.5") when `series`
  bool series = false;            // only the major.minor is known: any X.Y.Z of it
  std::optional<int> cuda_major;  // the CUDA major the build names (its cuNNN tag or libcudart.so.N)
  std::string variant;            // "cu130" where its local tag names torch's variant exactly; ""
  std::string source;             // where the torch was read
};

/// Describes one installed package with CUDA kernels or a torch pin.
struct InstalledPackage {
  std::string name;             // distribution name, "flash-attn"
  std::string version;          // "2.6.3"
  bool runs = true;             // false when its kernels miss some GPU (diagnosis decides)
  std::string editable_root{};  // source tree of an editable install: rebuilt there, in place
  bool sets_arch = false;       // its checkout's setup.py passes nvcc an arch flag: TORCH_CUDA_ARCH_LIST is ignored
  bool torch_abi = false;       // a binary of it links libc10/libtorch (DT_NEEDED): it breaks on another torch release
  std::optional<Version> torch_pin{};  // the torch its own METADATA requires exactly (torch==X); nullopt: none read
  bool abi_broken = false;             // needs torch symbols the installed torch does not export (TorchSymbols)
  std::optional<int> cudart_major{};   // N of the libcudart.so.N its torch-linked binaries link; nullopt: none
  bool variant_broken = false;  // a companion not of torch's CUDA build that torch's index serves (companion_mismatch)
  std::optional<Version> fixed_release{};  // it fails on a GPU here ([[broken_release]]): the first release that runs
  std::optional<BuiltAgainst> built_against{};  // the torch its binary was built against, where known
};

/// Holds what every remedy must satisfy. Build one with constraints_for() or by hand.
struct Constraints {
  std::vector<ComputeCapability> gpus;  // every GPU the remedy must serve (duplicates allowed)
  std::vector<DriverState> drivers;     // one per machine; every one must fit; empty: unknown
  PlatformKind platform = PlatformKind::linux_x86_64;
  std::optional<Version> l4t;           // Tegra: the L4T release, which picks the NGC images (core/situation/ngc.hpp)
  bool container = false;               // the driver belongs to the host
  bool forward_compat = false;          // every GPU may use forward compatibility (data centre, Jetson)
  std::string os;                       // PRETTY_NAME, picks the driver command ("Ubuntu 24.04")
  std::optional<Version> python;        // interpreter version; wheels must exist for it
  std::string interpreter = "python3";  // runs pip in the printed commands
  std::optional<InstalledTorch> torch;  // nullopt: no torch installed
  std::vector<std::string> companions;  // torchvision, torchaudio installed next to torch
  std::vector<InstalledPackage> packages;  // extensions with kernels or torch pins
  std::optional<Version> toolkit;          // nvcc a source build would use now, if any
  std::vector<Toolkit> toolkits;           // every installed nvcc (the toolchain a source build needs)
  std::vector<HostCompiler> compilers;     // every installed host compiler
  std::vector<IndexPage> index_pages;      // probed torch pages of the wheel indexes; empty: not checked
};

/// Names a kind of candidate remedy; each has one generator in the resolver.
enum class CandidateKind {
  keep,          // keep torch and the driver (only packages rebuilt or pinned)
  wheel,         // another official torch wheel
  driver,        // a driver upgrade (host's in a container, Windows host's on WSL2)
  wheel_driver,  // a driver upgrade and another wheel
  source_build,  // torch built from source (torchfix build pytorch)
  container,     // torch in an NVIDIA NGC PyTorch container (recipes/ngc-pytorch.toml)
};

/// Returns "keep", "wheel", "driver", "wheel+driver", "source-build", "container".
std::string_view to_string(CandidateKind kind);

/// Describes a torch wheel a remedy installs.
struct WheelChange {
  const WheelVariant* wheel = nullptr;
  Version release;            // exact ("2.8.0") when same_release or exact, else major.minor ("2.14")
  bool same_release = false;  // the installed release from another index
  bool exact = false;         // another exact release: the one an extension was built against
  // The nightly channel of the wheel's variant (download.pytorch.org/whl/nightly/cuNNN):
  // torch unpinned with --pre, since the index keeps recent builds only.
  bool nightly = false;
};

/// Describes a driver a remedy needs.
struct DriverChange {
  Version minimum;               // lowest driver version that satisfies every constraint
  std::string branch;            // "R570"
  std::vector<std::string> why;  // each floor that set it, with its source
  bool windows = false;          // a Windows (host) driver
  bool host = false;             // belongs to the container's host
  bool downgrade = false;        // the installed driver is past the last branch of a GPU's generation
};

/// Describes the NVIDIA NGC PyTorch container a remedy runs torch in.
struct ContainerChange {
  const NgcRelease* release = nullptr;         // its row of Knowledge::ngc
  const NgcArchList* arch_list = nullptr;      // what torch in it is built for
  std::string image;                           // nvcr.io/nvidia/pytorch:25.06-py3
  std::string run_line;                        // docker run ... as NVIDIA recommends (ngc_run_line)
  std::optional<Version> driver_needed;        // lowest host driver that runs its CUDA natively, when tracked
  const L4tRelease* jetpack_needed = nullptr;  // Tegra: the oldest L4T release that runs it (no driver number)
  bool compat = false;                         // runs only through forward or minor-version compatibility
  std::vector<std::string> notes;              // doubtful table rows, PTX JIT
};

/// Describes a package rebuilt from source for the GPUs (torch or an extension).
struct PackageBuild {
  std::string package;                   // "pytorch", "flash-attn"
  std::vector<ComputeCapability> archs;  // what it is built for
  std::optional<Version> nvcc_min;       // toolkit bounds that can target every arch
  std::optional<Version> nvcc_max;
  bool recipe = false;  // `torchfix build PACKAGE` exists
  std::string note;     // e.g. "unsupported upstream below 7.0"
};

/// Describes a package that must move with a new torch (pin or rebuild).
struct PackageMove {
  std::string package;    // "xformers"
  std::string from;       // installed version
  std::string to;         // matching version for the new torch; empty: rebuild against it (or `page`)
  std::string page;       // its project's index page for the new torch and variant ([[project_index]]); "": none
  std::string source;     // where the pin comes from
  bool detected = false;  // tied to torch by its own DT_NEEDED only (no table row): its source is not known
  bool capped = false;    // no page, and no release's setup.py accepts the new torch ([[source_torch_cap]])
  PageInstall page_install = PageInstall::find_links;  // how `page` is installed from (its row's `install`)
  bool fixed = false;           // `to` is the first release that runs on a GPU `from` fails on ([[broken_release]])
  std::string variant_index{};  // `to`'s build for torch's CUDA on its project's index ([[variant_index]]); ""
  std::string variant{};        // that build's CUDA variant ("cu129"), with variant_index
};

/// Describes one candidate remedy and what it changes.
struct Remedy {
  CandidateKind kind = CandidateKind::keep;
  std::optional<WheelChange> wheel;
  std::optional<DriverChange> driver;
  std::optional<ContainerChange> container;  // kind container: the image torch runs in
  std::vector<PackageBuild> builds;          // torch (source_build) and extensions rebuilt for the GPUs
  std::vector<PackageMove> moves;            // extensions pinned to torch
  Reach reach = Reach::native;               // worst reach of torch over the GPUs after the remedy
  bool minor_compat = false;                 // torch runs only through minor-version compatibility
  std::string held_by;    // why not a newer torch: "xformers 0.0.28.post3 has no release for torch 2.15"
  std::string built_for;  // a wheel back to the torch an extension was built against: why that release
  // kind keep with `wheel`: the installed torch reinstalled from its own
  // index with these companions, built for another torch ("torchvision 0.22.0")
  std::vector<std::string> companions_rebuilt_elsewhere;

  /// Returns how many things the user changes (wheel, driver, container, each build, each move).
  int changes() const;
  /// Returns how many pinned extensions have no release for the new torch
  /// (moves with no `to`): each is a source rebuild against it.
  int unmoved() const;
  /// Returns a one-line description ("torch 2.14 from cu126").
  std::string label() const;
};

/// Records a candidate that lost, and why.
struct Rejected {
  std::string candidate;             // Remedy::label()
  std::vector<std::string> reasons;  // each violated constraint, with its source
};

/// Holds the resolver's answer: ranked winners and the reasons the others lost.
struct Resolution {
  std::vector<Remedy> winners;  // best first
  std::vector<Rejected> rejected;
  /// Set when no winner leaves the driver alone: why nothing software-only
  /// helps ("R535 cannot drive a B200 (10.0): Blackwell needs R570 or newer").
  std::optional<std::string> no_software_fix;
  /// Set when there is no winner at all: why.
  std::optional<std::string> no_fix;
};

/// Says how the resolver treats the installed torch: fix only what fails
/// (`repair`), or also look for native SASS where torch needs PTX JIT (`improve`).
enum class Goal { repair, improve };

/// Resolves `constraints` against `knowledge`: enumerates candidates of every
/// kind, rejects those that break a constraint on any GPU or driver (arch rule,
/// driver floors, per-generation driver range, platform, Python), and ranks
/// the rest (fewest changes; software before driver; native SASS before PTX
/// JIT; the installed release; full CUDA support before minor-version
/// compatibility; newest release). A container (the newest NGC
/// image that runs with the host driver) ranks right after the last wheel
/// that needs no driver change: an alternative, first only when no wheel
/// works without one. Never fails.
Resolution resolve(const Constraints& constraints, const Knowledge& knowledge, Goal goal = Goal::repair);

/// Builds the constraints of one Python environment of `situation`'s
/// snapshot (`python` indexes snapshot.pythons; nullopt: the machine without
/// torch), from the Situation's platform, driver, GPUs, current toolkit and
/// torch facts. `failing` names packages whose kernels miss a GPU.
Constraints constraints_for(const Situation& situation, std::optional<std::size_t> python, const Knowledge& knowledge,
                            const std::vector<std::string>& failing);

/// Applies `remedy` to a copy of `snapshot` as if its commands had run: the
/// new torch with that wheel's arch list (or the container image's torch and
/// CUDA, and the CUDA its compatibility package gives the driver), the new
/// driver, packages rebuilt for the GPUs. `python` indexes snapshot.pythons (nullopt: none).
Snapshot apply_remedy(Snapshot snapshot, std::optional<std::size_t> python, const Remedy& remedy,
                      const Knowledge& knowledge);

/// Returns the remedy as a fix: a summary and shell commands (pip and uv
/// forms for wheels, the platform's driver command, torchfix build lines,
/// the docker run line of a container with the host driver it needs).
Fix remedy_fix(const Remedy& remedy, const Constraints& constraints, const Knowledge& knowledge);

/// Says what decide_driver found: a driver change, none needed (no floor
/// applies), the installed driver already meets every floor, or no driver
/// branch can serve it (Tegra, a floor past a generation's last branch, no
/// floor tracked for the CUDA).
enum class DriverNeed { change, none_needed, already_met, impossible };

/// Holds the driver decision: the change, or why there is none.
struct DriverDecision {
  DriverNeed need = DriverNeed::none_needed;
  std::optional<DriverChange> change;  // set when need is change
  std::string why;                     // why there is no change (shown for impossible)
};

/// Decides the lowest driver that runs `cuda` (fully when a branch the GPUs
/// allow has it, else through minor-version compatibility) and drives every
/// GPU, in the platform's numbering; the floors that set it are in change->why.
DriverDecision decide_driver(const Constraints& constraints, const Knowledge& knowledge,
                             const std::optional<Version>& cuda);

/// Returns the requirement that installs `wheel`: "torch==2.8.0" (the
/// installed release), "torch==2.9.*", "torch @ URL" for NVIDIA's JetPack
/// file, or "torch" from the nightly channel.
std::string wheel_requirement(const WheelChange& wheel);

/// Returns the index `wheel` installs from: the variant's
/// (https://download.pytorch.org/whl/cu128), or its nightly channel
/// (https://download.pytorch.org/whl/nightly/cu130, pytorch.org's "Preview
/// (Nightly)" command); "" for a JetPack file.
std::string wheel_index_url(const WheelChange& wheel);

/// Returns the install commands of `wheel` for `shell` (pip, then the uv
/// form): the release pinned exactly when it is the installed one (its local
/// label differs, so pip needs --force-reinstall), else as X.Y.*, with the
/// installed `companions` (torchvision, torchaudio) and the variant's index;
/// a JetPack wheel by its URL alone; a nightly with --pre (uv: --prerelease
/// allow) from the nightly channel. `interpreter` runs pip.
std::vector<std::string> wheel_commands(const WheelChange& wheel, const std::string& interpreter,
                                        const std::vector<std::string>& companions, CommandShell shell);

/// Returns the driver check of a wheel's CUDA against one driver: true when
/// it runs (sets `minor_compat` when only through minor-version
/// compatibility); unknown driver values count as fitting.
bool driver_fits(const Knowledge& knowledge, const Version& wheel_cuda, const DriverState& driver,
                 PlatformKind platform, bool* minor_compat = nullptr);

/// Names why a driver cannot drive a GPU: below its generation's first
/// driver, or past its generation's last branch.
enum class GpuDriverGap { too_old, dropped };

/// Holds why a driver cannot drive one GPU: the reason as a value and as text.
struct GpuDriverProblem {
  GpuDriverGap gap = GpuDriverGap::too_old;
  std::string
      text;  // "driver 535.104.05 (R535) cannot drive a Blackwell ... GPU (10.0): it needs a driver >= 570.133.20"
};

/// Returns why `driver` cannot drive a GPU of capability `gpu`, or nullopt
/// when it can, when the driver version is unknown, or on Tegra (whose driver
/// comes with JetPack). Windows numbering on Windows and WSL2 (a branch spans
/// a few hundreds there: R580 = 580.xx-582.xx). The source is the row's
/// (Knowledge::gpu_driver(gpu)->source).
std::optional<GpuDriverProblem> gpu_driver_problem(const Knowledge& knowledge, ComputeCapability gpu,
                                                   const DriverState& driver, PlatformKind platform);

}  // namespace torchfix
