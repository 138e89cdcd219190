#pragma once
// The Situation: every fact a decision reads, derived once from a Snapshot
// and the knowledge tables. diagnosis, the resolver, the toolchain decision,
// env, build planning, the fleet and the NGC check read it instead of
// deriving the platform, the driver's CUDA, the GPU list or "the toolkit a
// build uses now" from the raw Snapshot each in its own way.
//
// The Snapshot holds what the probes measured (and what a what-if set); the
// table answers (the CUDA a driver version supports, the L4T release's CUDA)
// are looked up here, so a replayed snapshot uses today's tables. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/quote.hpp"
#include "core/base/version.hpp"
#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"
#include "core/situation/toolchain.hpp"

namespace torchfix {

/// Names where wheels come from and whose driver numbering applies: Linux
/// x86_64, Linux aarch64 servers (SBSA, GB10), Tegra (Jetson: the driver comes
/// with L4T/JetPack), WSL2 (Linux x86_64 wheels, the Windows host's driver) and
/// native Windows.
enum class PlatformKind { linux_x86_64, linux_aarch64, tegra, wsl2, windows };

/// Names the numbering a driver version is read in: Linux (R570 = 570.xx),
/// Windows (R580 = 580.xx to 582.xx; WSL2 too) or Tegra (L4T's own driver,
/// 540.4.0 on JetPack 6, 580.00 on JetPack 7, never the desktop floors).
enum class DriverNumbering { linux, windows, tegra };

/// Returns "linux-x86_64", "linux-aarch64", "tegra", "wsl2", "windows".
std::string_view to_string(PlatformKind platform);
/// Returns the platform of the wheels a platform installs: "x86_64",
/// "aarch64" (Tegra too) or "windows" (the `platform` field of recipes/torch-wheels.toml).
std::string_view wheel_platform(PlatformKind platform);
/// Returns the driver numbering of a platform (Windows and WSL2: windows).
DriverNumbering driver_numbering(PlatformKind platform);
/// Returns true when the GPUs use a Windows driver (Windows, WSL2): Windows
/// driver numbers and floors apply and no Linux driver command helps.
bool windows_driver(PlatformKind platform);
/// Returns which probe looks for nvcc on a platform: the native Windows one
/// on Windows, the Linux one elsewhere (WSL2 and Tegra run Linux).
NvccSearch nvcc_search(PlatformKind platform);
/// Returns the shell printed fix commands are written for: PowerShell on
/// native Windows, POSIX elsewhere (WSL2 runs bash).
CommandShell command_shell(PlatformKind platform);

/// Returns the platform of a snapshot, the one mapping every decision reads:
/// `windows` (what `--platform windows` sets) or machine "windows" or an os
/// starting with "Windows": windows; `wsl2`: wsl2; an L4T release or a Tegra
/// GPU (recipes/gpus.toml, arch.hpp is_tegra): tegra; machine aarch64/arm64:
/// linux_aarch64; else linux_x86_64.
PlatformKind platform_kind(const Platform& platform, const std::vector<Gpu>& gpus);

/// Says how a driver was given: an exact version (570.124.04), or only its
/// branch (`--driver R570` or `570`: some driver of that branch, judged as its
/// newest).
enum class DriverGiven { version, branch };

/// Holds one machine's driver as decisions see it (both fields unknown: driver unknown).
struct DriverState {
  std::optional<Version> version;  // "570.124.04" (Windows numbering on Windows and WSL2); "570" for a branch
  std::optional<Version> cuda;     // CUDA it supports, "12.8"
  DriverGiven given = DriverGiven::version;
  std::string cuda_source = {};  // where `cuda` came from ("nvml", "recipes/toolkits.toml (Linux numbering)")

  /// Returns the branch (570.124.04 -> 570), nullopt when the version is unknown.
  std::optional<int> branch() const;
  /// Returns true when the driver is at or above `floor`; a branch counts as
  /// its newest driver (R570 meets 570.26); an unknown version meets nothing.
  bool meets(const Version& floor) const;
  /// Returns "driver 570.124.04 (R570)", "driver R570", "a driver supporting CUDA 12.8" or "an unknown driver".
  std::string text() const;
};

/// Returns the Jetson Linux release (recipes/drivers.toml [[l4t]]) whose
/// driver has `driver`'s branch and minor (a branch: its major alone), or
/// nullptr when no tracked release records that driver.
const L4tRelease* l4t_of_driver(const Knowledge& knowledge, const Version& driver, DriverGiven given);

/// Returns the CUDA version a driver supports in `numbering`: on Tegra the
/// L4T row whose driver has the same branch and minor (580.00 -> 13.0),
/// elsewhere the newest CUDA whose floor it meets (recipes/toolkits.toml
/// [[driver_floor]]), raised to what the branch itself reports between
/// toolkits (recipes/drivers.toml [[driver_cuda]], R565 -> 12.7). Sets
/// `source` to the table it came from; nullopt when no row applies.
std::optional<Version> cuda_of_driver(const Knowledge& knowledge, const Version& driver, DriverGiven given,
                                      DriverNumbering numbering, std::string* source = nullptr);

/// Names how a driver runs code built with one CUDA release.
enum class CudaOnDriver {
  native,        // the driver supports that CUDA
  minor_compat,  // same CUDA major, older minor, at or above the major's minor-version floor
  too_old,       // another major, below the floor, or a version older than every tracked floor
  unknown,       // neither the driver's version nor its CUDA is known
};

/// Decides how `driver` (in `numbering`) runs code built with CUDA `cuda`:
/// the one answer the torch check, the resolver, the fleet and the image
/// judges (NGC, application images) read. Minor-version compatibility holds
/// on every GPU, GeForce and workstation cards included: NVIDIA's CUDA
/// Compatibility guide ("applications built on CUDA Toolkit 11 and newer are
/// supported on any driver from within the corresponding major release",
/// docs.nvidia.com/deploy/cuda-compatibility/conclusion.html) names no GPU
/// class for it, only forward compatibility (the cuda-compat package) is for
/// data-centre GPUs and Jetson; the NGC entrypoint runs an image in "CUDA
/// Minor Version Compatibility mode" when forward compatibility fails with
/// CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (NVIDIA's entrypoint.d driver
/// check, copied at gbxu/EnvDeployment system_check/52-gpu-driver-version-check.sh:
/// same major, older minor, any GPU). The floor is recipes/toolkits.toml
/// [[minor_compat]] in the driver's numbering; Tegra's L4T driver has none.
CudaOnDriver cuda_on_driver(const Knowledge& knowledge, const DriverState& driver, DriverNumbering numbering,
                            const Version& cuda);

/// Returns `ccs` sorted, without duplicates.
std::vector<ComputeCapability> distinct_capabilities(std::vector<ComputeCapability> ccs);

/// Groups identical GPUs (same name and capability): one finding and one fix for all of them.
struct GpuGroup {
  std::string name;  // "NVIDIA B200"; empty when the driver gave none
  ComputeCapability cc;
  std::vector<int> indices;    // driver indices, ascending
  const Gpu* first = nullptr;  // the GPU of indices.front() (its memory, source)

  /// Returns "GPU 0 (NVIDIA H200, 9.0)" or "GPUs 0-7 (8x NVIDIA B200, 10.0)" (indices listed when not a run).
  std::string label() const;
};

/// Holds what is known about the images torch carries, and from where.
struct TorchImages {
  std::vector<Arch> images;                  // union (binaries, flags or table); for display
  const PackageKernels* binaries = nullptr;  // binary truth, when read from disk
  std::string source;                        // "read from torch's binaries", "torch._C._cuda_getArchFlags()", ...
};

/// Says where an environment's packages live, as a container sees them:
/// not in a container; in the image (the container's root filesystem, with
/// files older than the container: its build put them there, and what pip
/// installs now is lost when the container is recreated, so a change belongs
/// in the image's build); in the container's own layer (the root filesystem,
/// written after the container was created: installed in it); on a mounted
/// volume or bind mount (kept); or unknown (mounts or times not read).
enum class PackageHome { host, image, layer, volume, unknown };

/// Returns where `path`, last written at `written` (Unix seconds), lives in
/// the container of `platform`: the mount whose point is the longest folder
/// prefix of it ("/": the image or the container's layer, by `written`
/// against Platform::container_created). Sets `mount` to that point.
PackageHome package_home(const Platform& platform, const std::string& path, std::optional<std::int64_t> written,
                         std::string* mount = nullptr);

/// Holds one Python environment's torch facts.
struct EnvFacts {
  const PythonEnv* env = nullptr;
  std::optional<Version> release;        // "2.8.0"
  std::string variant;                   // "cu128", "cpu", "" (a local build)
  bool nightly = false;                  // a build of the nightly channel ("2.12.0.dev20260417+cu130")
  std::optional<Version> cuda;           // torch.version.cuda; nullopt for CPU and ROCm builds
  TorchImages images;                    // its binaries, else its flags, else its official wheel row
  PackageHome home = PackageHome::host;  // where torch (else site-packages) is, in a container
  std::string home_mount = {};           // the mount point holding it ("/", "/opt/venv"); "" when not known
};

/// Holds the facts every decision reads, derived once from a Snapshot and the
/// tables. Pointers point into the Snapshot, which must outlive the Situation.
struct Situation {
  const Snapshot* snapshot = nullptr;
  PlatformKind platform = PlatformKind::linux_x86_64;
  DriverNumbering numbering = DriverNumbering::linux;
  std::string_view wheel_platform;                 // "x86_64", "aarch64", "windows"
  CommandShell shell = CommandShell::posix;        // printed fix commands
  std::optional<Version> l4t_release;              // Tegra: the snapshot's L4T release ("36.4.3"), tracked or not
  const L4tRelease* l4t = nullptr;                 // Tegra: the L4T row of that release, when tracked
  DriverState driver;                              // branch, version and CUDA in the platform's numbering
  std::vector<const Gpu*> known_gpus;              // GPUs whose capability is known, index order
  std::vector<ComputeCapability> gpus;             // distinct capabilities, sorted
  std::vector<GpuGroup> gpu_groups;                // identical GPUs together, in index order of their first
  const Toolkit* current_toolkit = nullptr;        // what a build uses now: CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda
  const HostCompiler* current_compiler = nullptr;  // CUDAHOSTCXX, CXX, then g++/c++ on PATH
  Resources resources;                             // resources_of(platform)
  std::vector<EnvFacts> pythons;                   // one per Snapshot::pythons, same order
  std::optional<Version> torch_cuda;               // CUDA of the first torch that has one
  Toolchain toolchain;  // decide_toolchain for the generic recipe (cuda-extension), when the tables have it

  /// Returns the facts the toolchain decision reads (GPUs, toolkits, compilers, resources, torch and driver CUDA).
  ToolchainFacts toolchain_facts() const;
  /// Returns the group the GPU of driver index `index` belongs to, nullptr when none does.
  const GpuGroup* group_of(int index) const;
};

/// Derives the Situation of `snapshot`; never fails (unknowns stay unknown).
Situation situate(const Snapshot& snapshot, const Knowledge& knowledge);

}  // namespace torchfix
