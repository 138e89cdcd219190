#pragma once
// The knowledge tables (recipes/gpus.toml, toolkits.toml, torch-wheels.toml, ...;
// the NGC container table is parsed by core/facts/ngc_table.hpp into Knowledge::ngc),
// parsed from TOML text into values with the source of every row. Parsing is
// pure; reading the files is probe/knowledge_files.hpp's job.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/facts/app_image_table.hpp"
#include "core/facts/loading_facts.hpp"
#include "core/facts/ngc_table.hpp"
#include "core/facts/recipe.hpp"

namespace torchfix {

/// Names GPU products of one compute capability (recipes/gpus.toml).
struct GpuProduct {
  ComputeCapability cc;
  std::vector<std::string> names;
  bool tegra = false;
  std::string source;
};

/// Holds the minimum Linux driver of a toolkit release (its GA).
struct DriverFloor {
  Version cuda;                    // "12.8"
  Version linux;                   // "570.26"
  std::optional<Version> windows;  // "570.65"; nullopt when the toolkit bundles no Windows driver
  std::string source;
};

/// Holds the driver floor for minor-version compatibility within a CUDA major.
struct MinorCompat {
  int cuda_major = 0;
  Version linux;
  std::optional<Version> windows;
  std::string source;
};

/// Holds the drivers that can drive one GPU generation (recipes/drivers.toml):
/// below `linux`/`windows` the driver does not see the GPU at all, and after
/// `last_branch` NVIDIA's drivers dropped the generation.
struct GpuDriverSupport {
  std::string generation;          // "Blackwell"
  ComputeCapability cc_min;        // inclusive
  ComputeCapability cc_max;        // inclusive
  Version linux;                   // first Linux driver, "570.26"
  std::optional<Version> windows;  // first Windows driver, "570.65"
  std::optional<int> last_branch;  // last branch that drives it (470 for Kepler), nullopt: current
  std::string source;
};

/// Holds one Jetson Linux (L4T) release (recipes/drivers.toml [[l4t]]): the
/// JetPack it belongs to, the CUDA it ships and the driver version its
/// nvidia-smi reports. On Tegra the driver comes with L4T, so this row, not
/// the desktop [[driver_floor]] rows, says which CUDA the driver supports.
struct L4tRelease {
  Version release;                // "36.4" (R36.4.x, /etc/nv_tegra_release "R36 ... REVISION: 4.3")
  Version jetpack;                // "6.1"
  Version cuda;                   // "12.6"
  std::optional<Version> driver;  // "540.4.0"; nullopt when not recorded
  std::string source;
};

/// Holds the CUDA version a driver branch reports that no toolkit release
/// floors (recipes/drivers.toml [[driver_cuda]]): R565 reports 12.7.
struct DriverCuda {
  Version linux;                   // first Linux driver of the branch, "565.57.01"
  std::optional<Version> windows;  // first Windows driver, "565.90"
  Version cuda;                    // "12.7"
  std::string source;
};

/// Names the variant `pip install torch` gives for a release range on a
/// platform (recipes/torch-wheels.toml [[pypi_default]]); "cpu" for CPU-only.
struct PypiDefault {
  Version min;
  Version max;
  std::string platform;  // "x86_64", "aarch64", "windows"
  std::string variant;   // "cu128", "cpu"
  std::string source;
};

/// Holds the Python versions official wheels of a release range exist for.
struct TorchPython {
  Version min;         // first torch release (major.minor)
  Version max;         // last torch release (major.minor)
  Version python_min;  // "3.10"
  Version python_max;  // "3.14"
  std::string source;
};

/// Holds one extension release and the torch release it requires exactly
/// (its METADATA's Requires-Dist torch==X), or, with `built_against`, the
/// torch its wheel was built against where it declares none (sgl-kernel):
/// pip does not enforce that one, and a build against an older torch can
/// load on a newer one (sgl-project/sglang#5247), so only its binary's torch
/// symbols say it does not load; the row names the release to move to.
struct ExtensionPin {
  std::string distribution;    // "xformers"
  std::string version;         // "0.0.29.post3"
  Version torch;               // "2.6.0"
  bool built_against = false;  // the build's torch, not a Requires-Dist pin
  std::string source;
};

/// Holds the ptxas versions one range of Triton releases bundles
/// (recipes/triton-ptxas.toml): Triton assembles each kernel for the GPU's
/// exact arch (sm_121a on GB10), so a bundled ptxas older than the first CUDA
/// that knows that arch fails.
struct TritonPtxas {
  Version min;  // major.minor, inclusive
  Version max;
  Version ptxas;                           // bin/ptxas: archs below 10.0, or all without ptxas_blackwell
  std::optional<Version> ptxas_blackwell;  // bin/ptxas-blackwell: archs 10.0 and up (Triton 3.3+)
  std::string blackwell_variable;          // overrides ptxas-blackwell; "": TRITON_PTXAS_BLACKWELL_PATH
  std::optional<Version> ptxas_cuda_max;   // newest CUDA whose ptxas it can drive; nullopt: no limit known
  std::optional<Version> torch;            // the torch release (major.minor) that requires it
  std::string source;
};

/// Holds the Triton one torch release needs (recipes/triton-ptxas.toml
/// [[torch_triton]]): torch.compile calls the API of that Triton release,
/// and another minor release breaks it (torch 2.7 with Triton 3.4:
/// "'CompiledKernel' has no attribute 'launch_enter_hook'").
struct TorchTriton {
  Version torch;             // "2.7.1" (that release) or "2.7" (every 2.7.x)
  std::string distribution;  // "triton" (torch's Linux Requires-Dist), "triton-windows" (the fork's README)
  Version triton;            // "3.3.1" (that release) or "3.3" (any 3.3.x)
  std::string source;

  /// Returns true when `triton` names one release ("3.3.1"), false for a series ("3.3").
  bool exact() const { return triton.parts().size() > 2; }
};

/// Says which nvcc versions accept a group of SASS targets (inclusive bounds).
struct NvccArchRange {
  std::vector<Arch> archs;
  std::optional<Version> first;  // nullopt: since before any tracked version
  std::optional<Version> last;   // nullopt: still accepted
  std::string source;
};

/// Holds the nvcc versions that can compile SASS for a GPU: from `first` to
/// `last` inclusive (major.minor); nullopt ends are open (before every
/// tracked version, still accepted).
struct NvccWindow {
  std::optional<Version> first;
  std::optional<Version> last;

  /// Returns true when nvcc `version` (major.minor compared) is inside.
  bool contains(const Version& version) const;
  /// Returns "CUDA >= 11.0", "CUDA <= 12.9", "CUDA 11.4 to 12.9" or "any CUDA".
  std::string str() const;
  /// Narrows this window to what it shares with `other`: the later first
  /// and the earlier last (the nvcc that compiles for two targets).
  void narrow(const NvccWindow& other);
  /// Returns true when no nvcc is inside (first after last).
  bool empty() const;
};

/// Holds the host compiler bounds of nvcc versions cuda_min..cuda_max
/// (major.minor, inclusive): the compiler's major must be below the bound;
/// MSVC's _MSC_VER (19.44 -> 1944) must be in msvc_min..msvc_below-1, as
/// include/crt/host_config.h checks it.
struct HostCompilerBounds {
  Version cuda_min;
  Version cuda_max;
  std::optional<int> gcc_below;
  std::optional<int> clang_below;
  std::optional<int> msvc_min;
  std::optional<int> msvc_below;
  std::string source;
};

/// Says how a distribution installs gcc or clang of one major
/// (recipes/toolkits.toml [[compiler_package]]); `{major}` in the texts
/// stands for the major ("sudo apt install g++-{major}").
struct CompilerPackage {
  std::vector<std::string> os;  // words of /etc/os-release PRETTY_NAME, any one matches ("Ubuntu", "Rocky")
  std::string family;           // "gcc" or "clang" (to_string of a CompilerFamily)
  std::string command;          // "sudo dnf install gcc-toolset-{major}-gcc-c++"
  std::string cxx;              // where its C++ driver lands: "/usr/bin/g++-{major}"
  std::string cc;               // and its C driver: "/usr/bin/gcc-{major}"
  std::string source;
};

/// Says how a Linux distribution installs an NVIDIA driver branch
/// (recipes/drivers.toml [[driver_package]]); `{branch}` in `command` stands
/// for the branch number ("sudo apt install nvidia-driver-{branch}").
struct DriverPackage {
  std::vector<std::string> os;  // words of /etc/os-release PRETTY_NAME, any one matches ("Ubuntu")
  std::string command;          // one shell line, with its comment
  std::string source;
};

/// Describes the official wheels of one CUDA variant for a release range.
struct WheelVariant {
  Version min;               // first release, "2.7"
  Version max;               // last release, "2.7"
  std::string variant;       // "cu128"
  Version cuda;              // 12.8, from the variant name
  std::string platform;      // "x86_64" or "aarch64"
  std::string arch_list;     // as built: "7.5;8.0;8.6;9.0;10.0;12.0+PTX"
  std::vector<Arch> images;  // what that list compiles to: sm_75 ... sm_120, compute_120
  std::string confidence;    // "build script", "maintainer", "measured", "UNVERIFIED"
  std::string source;
  // NVIDIA's JetPack wheels ([[jetpack_wheel]], platform "jetpack"): one
  // wheel file for some L4T releases and one Python, named by its URL.
  std::string url;                // https://developer.download.nvidia.com/compute/redist/jp/v61/pytorch/torch-...whl
  std::string torch;              // its exact release, "2.5.0a0+872d972e41.nv24.08"
  std::string jetpack;            // "6.1"
  std::vector<std::string> l4t;   // L4T releases (major.minor) it is built for, "36.4"
  std::optional<Version> python;  // the one Python it is built for, "3.10"

  /// Returns true when `release` (major.minor compared) is in [min, max].
  bool covers_release(const Version& release) const;
  /// Returns the pip index URL, https://download.pytorch.org/whl/<variant>.
  std::string index_url() const;
  /// Returns how the arch list is known, in a report's words ("measured",
  /// "from the build script", "not confirmed" for an UNVERIFIED row).
  std::string_view how_known() const;
};

/// Describes the official wheels of one extension's release range
/// (recipes/extensions.toml): the archs its build script compiles.
struct ExtensionWheel {
  std::string distribution;  // "flash-attn"
  Version min;               // first release, inclusive ("2.7.4")
  Version max;               // last release, inclusive
  std::string arch_list;     // TORCH_CUDA_ARCH_LIST form: "8.0;9.0;10.0;12.0+PTX"
  std::vector<Arch> images;  // what that list compiles to
  std::string source;
};

/// Holds the lowest compute capability an extension project supports upstream.
struct ExtensionSupport {
  std::string distribution;
  ComputeCapability min_cc;
  bool torch_abi = false;  // built against torch's C++ ABI: a new torch needs a matching build
  std::string source;
};

/// Holds one page of a project's wheel index (recipes/extensions.toml
/// [[project_index]]): the wheels of `distributions` built for torch
/// `torch` (major.minor, or one exact release where the page names it) and
/// each CUDA variant in `variants` (and each Python in `pythons` where the
/// page names the Python).
/// Names how a fix installs from a project's page: beside the configured
/// indexes (`--only-binary PKG PKG -f PAGE`, as PyG's README does) or from
/// the page alone (`--no-index PKG -f PAGE`, as pytorch3d's INSTALL.md does,
/// so that a PyPI release of the same version is never picked instead).
enum class PageInstall { find_links, no_index };

struct ProjectIndexPage {
  std::vector<std::string> distributions;  // "torch-scatter", "pyg-lib"; "mmcv"
  // URL with {variant} and the torch as {torch} (major.minor), {release}
  // ("2.8.0") or {release_nodot} ("201"), and optionally {python_nodot}
  // ("310"): ".../torch-{torch}.0+{variant}.html"
  std::string page;
  Version torch;                              // 2.8; 2.0.1 where the page names an exact release
  std::vector<std::string> variants;          // "cpu", "cu126", ...
  std::vector<std::string> pythons;           // "3.8", "3.10": the Pythons of a {python_nodot} page; else empty
  std::string install;                        // "find-links" (also when absent) or "no-index": how the project installs
  std::string install_source;                 // where `install` comes from (required with it)
  PageInstall how = PageInstall::find_links;  // `install` as a value
  std::string source;

  /// Says whether the page is for one exact torch release ({release} or {release_nodot}).
  bool exact() const;
  /// Says whether this row's page serves torch `release` ("2.8" or "2.8.0";
  /// an exact row only its own three-part release).
  bool serves(const Version& release) const;
  /// Returns the page for `variant` ("cu128") and `python` ("3.10"; needed
  /// only by a {python_nodot} page), or "" when this row has none.
  std::string url(const std::string& variant, const std::string& python = "") const;
};

/// Holds what one conda channel publishes of `pytorch` (recipes/torch-wheels.toml
/// [[conda_torch]]): how its CUDA builds are told apart, the metapackage that
/// picks their CUDA version, and its last release when it stopped publishing.
struct CondaTorchChannel {
  std::string channel;               // "conda-forge", "pytorch"
  std::string cuda_builds;           // glob of the build strings of CUDA builds: "cuda*"
  std::string cuda_pin = {};         // the metapackage that selects the CUDA version ("cuda-version"); empty: none
  std::optional<Version> last = {};  // the last torch release published there (2.5); nullopt: still publishing
  std::string source;
};

/// Holds where a project's source lives when PyPI has no sdist of it under its
/// name (recipes/extensions.toml [[project_source]]): a source build of release
/// V is the repository at tag `tag_format` with {version} = V.
struct ProjectSource {
  std::string distribution;           // "detectron2"
  std::string repository;             // "https://github.com/facebookresearch/detectron2.git"
  std::string tag_format;             // "v{version}"
  std::vector<std::string> odd_tags;  // tags spelled otherwise than tag_format, case aside ("V0.7.8")
  std::string source;

  /// Returns the tag of release `version` ("0.6+cu113" -> "v0.6": the local label is dropped).
  std::string tag(std::string_view version) const;
};

/// Holds the torch releases one release of a source-built project accepts
/// (recipes/extensions.toml [[source_torch_cap]]): its setup.py refuses a
/// torch outside [torch_min, torch_max] (both inclusive, on torch's release
/// without its local label) unless an override the project warns against is set.
struct SourceTorchCap {
  std::string distribution;  // "kaolin"
  Version release;           // "0.18.0"
  Version torch_min;         // "1.6.0"
  Version torch_max;         // "2.8.0"
  std::string source;

  /// Returns true when torch `torch` is inside the cap; a major.minor ("2.8",
  /// a fix's torch==2.8.*) is inside when every X.Y.Z of it up to torch_max
  /// is, so only a series below torch_max's, or its own exact release, passes.
  bool admits(const Version& torch) const;
};

/// Holds all knowledge tables.
struct Knowledge {
  std::vector<GpuProduct> gpus;
  std::vector<DriverFloor> driver_floors;
  std::vector<MinorCompat> minor_compat;
  std::vector<NvccArchRange> nvcc_archs;
  std::vector<HostCompilerBounds> host_compilers;
  std::vector<CompilerPackage> compiler_packages;  // recipes/toolkits.toml [[compiler_package]], first match wins
  std::vector<WheelVariant> wheels;
  std::vector<WheelVariant> jetpack_wheels;  // recipes/torch-wheels.toml [[jetpack_wheel]] (platform "jetpack")
  std::vector<ExtensionSupport> extensions;
  std::vector<GpuDriverSupport> gpu_drivers;
  std::vector<L4tRelease> l4t;                 // recipes/drivers.toml [[l4t]]
  std::vector<DriverCuda> driver_cudas;        // recipes/drivers.toml [[driver_cuda]]
  std::vector<DriverPackage> driver_packages;  // recipes/drivers.toml [[driver_package]], first match wins
  std::vector<PypiDefault> pypi_defaults;
  std::vector<TorchPython> torch_pythons;
  std::vector<ExtensionPin> extension_pins;
  std::vector<TritonPtxas> triton;
  std::vector<TorchTriton> torch_tritons;                  // recipes/triton-ptxas.toml [[torch_triton]]
  std::vector<FatbinCompression> fatbin_compression;       // recipes/toolkits.toml [[fatbin_compression]]
  std::vector<CudaLibrary> cuda_libraries;                 // recipes/extensions.toml [[cuda_library]]
  std::vector<RuntimeDll> runtime_dlls;                    // recipes/drivers.toml [[runtime_dll]]
  std::vector<UncompressedRelease> uncompressed_releases;  // recipes/extensions.toml [[uncompressed_release]]
  std::vector<BrokenRelease> broken_releases;              // recipes/extensions.toml [[broken_release]]
  std::vector<VariantIndex> variant_indexes;               // recipes/extensions.toml [[variant_index]]
  std::vector<CompanionOps> companion_ops;                 // recipes/extensions.toml [[companion_ops]]
  std::vector<RuntimeBuild> runtime_builds;                // recipes/extensions.toml [[runtime_build]]
  std::vector<ExtensionWheel> extension_wheels;
  std::vector<ProjectIndexPage> project_index;    // recipes/extensions.toml [[project_index]]
  std::vector<ProjectSource> project_sources;     // recipes/extensions.toml [[project_source]]
  std::vector<SourceTorchCap> source_torch_caps;  // recipes/extensions.toml [[source_torch_cap]]
  std::vector<CondaTorchChannel> conda_torch;     // recipes/torch-wheels.toml [[conda_torch]]
  std::vector<Recipe> build_recipes;  // recipes/build/*.toml, sorted by name: what `torchfix build` can build
  NgcTable ngc;                       // recipes/ngc-pytorch.toml: NVIDIA's PyTorch containers (parse_ngc_table)
  AppImageTable app_images;           // recipes/app-images.toml: vLLM's and SGLang's images (parse_app_image_table)

  /// Resolves a --gpu value: a product name ("RTX 5070 Ti", "NVIDIA H200";
  /// case and the words NVIDIA/GeForce ignored), "sm_120" or "12.0".
  /// Errors: unknown name (with close matches), ambiguous name.
  Expected<ComputeCapability> resolve_gpu(std::string_view spec) const;
  /// Returns the first product name listed for `cc`, or "" when none.
  std::string product_name(ComputeCapability cc) const;

  /// Returns the newest CUDA version whose GA driver floor is <= `driver`
  /// (Linux numbering, or Windows numbering when `windows`); nullopt when the
  /// driver is older than every tracked floor.
  std::optional<Version> cuda_for_driver(const Version& driver, bool windows = false) const;
  /// Returns the GA driver floor of CUDA `cuda` (major.minor), if tracked.
  const DriverFloor* driver_floor(const Version& cuda) const;
  /// Returns the minor-version compatibility floor of a CUDA major, if tracked.
  const MinorCompat* minor_compat_for(int cuda_major) const;
  /// Returns the SASS targets an nvcc of `nvcc` version accepts, by table.
  std::vector<Arch> nvcc_archs_for(const Version& nvcc) const;
  /// Returns the lowest nvcc version that accepts SASS for `cc` (generic
  /// variant, or the Tegra part's own), nullopt when none is tracked or
  /// when every nvcc before the tracked ones accepts it (see nvcc_window_for,
  /// which also gives the last one).
  std::optional<Version> first_nvcc_for(ComputeCapability cc) const;
  /// Returns the nvcc versions that compile SASS running on `cc` (generic
  /// SASS of the same major at or below it, or the Tegra part's own):
  /// the union of the matching recipes/toolkits.toml rows; nullopt when no
  /// row matches. sm_61 gives "CUDA <= 12.9", sm_86 "CUDA >= 11.0".
  std::optional<NvccWindow> nvcc_window_for(ComputeCapability cc) const;
  /// Returns the first nvcc version that accepts any target of `variant`:
  /// the lowest `first` of the recipes/toolkits.toml [[nvcc_arch]] rows that
  /// list one (sm_90a: 12.0; the 'f' family targets: 12.9). nullopt for the
  /// generic variant and for a variant no row lists.
  std::optional<Version> first_nvcc_for_variant(ArchVariant variant) const;
  /// Returns the generation row (recipes/drivers.toml) that covers `cc`, nullptr when none does.
  const GpuDriverSupport* gpu_driver(ComputeCapability cc) const;
  /// Returns the L4T row of `release` (major.minor compared: 36.4.3 -> the
  /// 36.4 row), nullptr when not tracked.
  const L4tRelease* l4t_release(const Version& release) const;
  /// Returns the PyPI default variant row of `release` on `platform`, if tracked.
  const PypiDefault* pypi_default(const Version& release, std::string_view platform) const;
  /// Returns the Python range of official wheels of `release`, if tracked.
  const TorchPython* torch_python(const Version& release) const;
  /// Returns the ptxas row of a Triton version ("3.5.0+git7416ffcb"): the row
  /// that covers its major.minor, the last row for newer versions, nullptr for
  /// older or unparsable versions.
  const TritonPtxas* triton_ptxas(std::string_view triton_version) const;
  /// Returns the [[torch_triton]] row of `distribution` ("triton",
  /// "triton-windows") for torch `release`: the row of that exact release,
  /// else the row of its major.minor; nullptr when the table has none.
  const TorchTriton* triton_for_torch(std::string_view distribution, const Version& release) const;
  /// Returns the host compiler bounds of an nvcc version, if tracked.
  const HostCompilerBounds* host_bounds_for(const Version& nvcc) const;
  /// Returns the build recipe called `name` (recipes/build/*.toml), nullptr
  /// when none exists: a fix may name `torchfix build NAME` only when this is
  /// not null.
  const Recipe* build_recipe(std::string_view name) const;
  /// Returns the wheel row of `distribution` (PEP 503 name, "flash-attn")
  /// that covers `version`, nullptr when the knowledge has none.
  const ExtensionWheel* extension_wheel(std::string_view distribution, const Version& version) const;
  /// Returns the extension support row of a distribution, if any.
  const ExtensionSupport* extension(std::string_view distribution) const;
  /// Returns the [[extension_pin]] row of release `version` of `distribution`
  /// (the torch its wheel's METADATA pins), nullptr when the tables have none
  /// (recipes/torch-wheels.toml).
  const ExtensionPin* pin_of(std::string_view distribution, std::string_view version) const;
  /// Returns the [[broken_release]] row under which release `version` of
  /// `distribution` (PEP 503 name) fails on a GPU of capability `cc`,
  /// nullptr when none does (recipes/extensions.toml).
  const BrokenRelease* broken_release(std::string_view distribution, const Version& version,
                                      ComputeCapability cc) const;
  /// Returns the [[extension_pin]] row with built_against of `distribution`
  /// `version`: its own, else its public release's for a `+cuNNN` build
  /// ("0.3.21+cu130": 0.3.21's); nullptr when none (recipes/torch-wheels.toml).
  const ExtensionPin* built_against_row(std::string_view distribution, std::string_view version) const;
  /// Returns the [[variant_index]] row of release `version` of `distribution`
  /// (its local tag ignored) built for torch's CUDA variant `variant`
  /// ("cu129"), nullptr when no source names one (recipes/extensions.toml).
  const VariantIndex* variant_index(std::string_view distribution, std::string_view version,
                                    std::string_view variant) const;
  /// Says whether [[extension_pin]] has a row for any release of `distribution`.
  bool pins(std::string_view distribution) const;
  /// Returns the release of `distribution` pinned to torch `torch`: the row
  /// pinned to it exactly, else the last row of its major.minor; "" when
  /// [[extension_pin]] has none (recipes/torch-wheels.toml).
  std::string release_for_torch(std::string_view distribution, const Version& torch) const;
  /// Returns the [[project_index]] page with `distribution`'s wheels for torch
  /// `release` (major.minor is compared; an exact row's release in full) and
  /// CUDA variant `variant` ("cu128") for Python `python` ("3.10"), or "" when
  /// no row lists it (recipes/extensions.toml).
  std::string project_page(std::string_view distribution, const Version& release, const std::string& variant,
                           const std::string& python = "") const;
  /// Returns the [[project_index]] row project_page() reads for
  /// `distribution` and torch `release`, nullptr when no row serves it.
  const ProjectIndexPage* project_page_row(std::string_view distribution, const Version& release) const;
  /// Returns the [[project_source]] row of `distribution`, nullptr when PyPI's sdist is its source.
  const ProjectSource* project_source(std::string_view distribution) const;
  /// Returns the [[source_torch_cap]] row of `distribution` at `release`
  /// (its local label ignored), nullptr when the table has none.
  const SourceTorchCap* source_torch_cap(std::string_view distribution, const Version& release) const;
  /// Returns the newest release of `distribution` whose cap admits torch
  /// `torch` (SourceTorchCap::admits), nullptr when none does.
  const SourceTorchCap* newest_release_admitting(std::string_view distribution, const Version& torch) const;
  /// Returns the [[project_index]] rows that list `distribution`, in table order.
  std::vector<const ProjectIndexPage*> project_rows(std::string_view distribution) const;
};

/// Names one knowledge file's text for parse_knowledge.
struct KnowledgeText {
  std::string file;  // path shown in errors ("recipes/gpus.toml")
  std::string text;  // TOML
};

/// Parses the tables (any order, recognised by their array names: gpu;
/// driver_floor, minor_compat, nvcc_arch, host_compiler; gpu_driver; wheel,
/// extension, pypi_default, torch_python, extension_pin; triton, torch_triton).
/// Errors name the file, the line and what is wrong (a row without `source`
/// is an error: every fact carries its source).
Expected<Knowledge> parse_knowledge(const std::vector<KnowledgeText>& files);

/// Converts a wheel arch list in TORCH_CUDA_ARCH_LIST form ("8.6;9.0+PTX")
/// to images (sm_86, sm_90, compute_90) through parse_arch_list (core/arch/arch_list.hpp).
/// Errors name the entry.
Expected<std::vector<Arch>> images_from_arch_list(std::string_view list);

}  // namespace torchfix
