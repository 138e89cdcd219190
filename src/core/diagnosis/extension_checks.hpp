#pragma once
// Checks of the CUDA extensions of one Python environment beyond their
// kernels' archs: the driver against the CUDA major each was built with,
// two distributions that install one import package, and where each came
// from (editable checkouts, conda). Pure: reads the Situation (platform,
// GPUs, the driver's CUDA) and the environment's scanned kernels.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix::detail {

/// Returns a finding of the python section about `package` in `env`.
Finding env_finding(std::string id, Severity severity, const PythonEnv& env, std::string package, std::string title);

/// Returns a finding of the python section about package `p` in `env`.
Finding package_finding(std::string id, Severity severity, const PythonEnv& env, const PackageKernels& p,
                        std::string title);

/// Returns "NAME VERSION" of `p` ("NAME" when its version is unknown).
std::string package_label(const PackageKernels& p);

/// Returns the "package.arch" findings in `out` that say `p` of `env` runs
/// (severity ok): the verdicts a load check (driver, compression, torch ABI)
/// turns into its problem. The pointers are valid until `out` grows.
std::vector<Finding*> runs_verdicts(std::vector<Finding>& out, const PythonEnv& env, const PackageKernels& p);

/// Adds "package.driver" problems for extensions built for a CUDA major
/// above the driver's (extension_loading.cpp; check_extension_stack's first part).
void check_driver_major(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out);

/// Returns N of the first libcudart.so.N (DT_NEEDED) that a binary of `p`
/// linking torch's libraries links, or nullopt when none does (a static
/// cudart, CUDA only through torch, or a library that is no torch extension).
std::optional<int> linked_cudart_major(const PackageKernels& p);

/// Adds "package.cuda-runtime" problems for extensions that link the CUDA
/// runtime of another major than the installed torch's (extension_loading.cpp).
void check_runtime_major(const Situation& x, const PythonEnv& env, std::vector<Finding>& out);

/// Returns the [[fatbin_compression]] row (recipes/toolkits.toml) whose
/// driver floor the kernels of `p` miss: some of its binaries are compressed
/// as nvcc's --compress-mode=size/balance write them (fatbin flag 0x8000),
/// built for CUDA `cuda_major` (the driver's major when unknown), and the
/// driver supports an older CUDA than the row names; nullptr when they load
/// or the driver's CUDA is unknown. The one decision for extensions and torch.
const FatbinCompression* missed_compression_floor(const Situation& x, const Knowledge& k, const PackageKernels& p,
                                                  std::optional<int> cuda_major);

/// Turns torch's verdict `f` on `group` (torch of `env`, its binaries
/// `torch`, built for CUDA `cuda`) into the problem of kernels compressed in a
/// format the driver cannot unpack (`row`: missed_compression_floor): torch
/// imports, and its first kernel fails with "device kernel image is invalid".
/// The fix is the resolver's: a wheel the driver loads, or the driver `row` needs.
void torch_cannot_unpack(const Situation& x, const PythonEnv& env, const PackageKernels& torch,
                         const FatbinCompression& row, const Version& cuda, const GpuGroup& group, Finding& f);

/// Adds "package.driver" problems for kernels compressed in a format the
/// driver cannot unpack (missed_compression_floor).
void check_compressed_fatbins(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out);

/// Adds "package.broken-release" problems: a release that fails on a GPU
/// here whatever its kernels hold (recipes/extensions.toml [[broken_release]]);
/// they replace the release's "package.arch" verdicts on that GPU.
void check_broken_releases(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out);

/// Adds "package.cuda-library" problems (recipes/extensions.toml [[cuda_library]]).
void check_cuda_libraries(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out);

/// Adjusts and adds findings for the extensions of `env` (`out` already holds
/// check_packages' "package.arch" findings of `env`):
///  - an extension whose kernels reach a GPU ("package.arch" ok) but whose
///    CUDA major (Provenance::cuda_major: its DT_NEEDED libcudart.so.N, else
///    a cuNNN tag) is above the driver's (Situation::driver.cuda) becomes a "package.driver" problem:
///    libcudart refuses a driver older than its major (CUDA's minor-version
///    compatibility holds within a major only, docs.nvidia.com/deploy/cuda-compatibility);
///  - the same for kernels compressed as nvcc's --compress-mode=size/balance
///    writes them (BinaryKernels::zstd_fatbins) on a driver below the floor
///    of recipes/toolkits.toml [[fatbin_compression]] ("device kernel image
///    is invalid");
///  - "package.cuda-runtime": a torch C++ extension that links libcudart.so.N
///    of another major than torch's CUDA: a problem (its import fails: torch's
///    wheels bring only their own major's runtime), a warning beside its
///    verdict where an installed toolkit of that major may provide it;
///  - "package.cuda-library" (problem): an extension that loads one library
///    per CUDA version (recipes/extensions.toml [[cuda_library]]) has none
///    for torch's CUDA and falls back to CPU; it replaces the extension's
///    "package.arch" findings, and the fix moves to the first release with it;
///  - "package.shared-import" (problem): two distributions install the same
///    import package (triton beside pytorch-triton); the one loaded is
///    whichever wrote its files last; "package.shadowed" (problem): one
///    distribution installed twice on the path (the first on sys.path loads);
///  - "package.editable" (note): an editable install, with the checkout it
///    was read from and its build outputs.
/// Returns the torch-symbol check of a binary of `p` made against the
/// release of `torch_version` (any CUDA variant of it: same C++ ABI) that
/// found symbols missing, nullptr when none did (or none was made against
/// that release: a remedy's new torch is not judged by it).
const TorchSymbols* missing_torch_symbols(const PackageKernels& p, std::string_view torch_version);

/// Returns the torch release a package's own METADATA pins exactly
/// (Requires-Dist "torch==2.6.0", markers dropped), or nullopt when it pins
/// none exactly or its METADATA was not read.
std::optional<Version> metadata_torch_pin(const Provenance& provenance);

/// Names the torch release an installed package requires and where that
/// came from: `metadata_pin` (its own METADATA's, metadata_torch_pin) where it
/// was read, else the [[extension_pin]] row of `name` `version`
/// (recipes/torch-wheels.toml; `row` points at it), else the torch series its
/// version's local tag names (`series`: "2.1.2+pt23cu121" is built for 2.3.x).
/// nullopt when none pins.
struct RequiredTorch {
  Version torch;
  const ExtensionPin* row = nullptr;  // null: the METADATA or the local tag said it
  bool series = false;                // `torch` is a major.minor: every X.Y.Z of it is the same ABI
  /// Says whether the installed torch `release` is the one required.
  bool admits(const Version& release) const;
  /// Says whether `torch` is only the one its wheel was built against (a
  /// row with built_against): another torch may still load it.
  bool built_against() const { return row && row->built_against; }
};

/// Returns the torch major.minor a version's local tag names the way PyG's
/// wheel builds write it ("0.6.14+pt111cu113": 1.11; "2.1.2+pt23cu121": 2.3),
/// or nullopt when the version has no such tag.
std::optional<Version> local_tag_torch(std::string_view version);
std::optional<RequiredTorch> required_torch(const Knowledge& k, std::string_view name, std::string_view version,
                                            const std::optional<Version>& metadata_pin);

/// Returns the torch release the binary of `p` was built against: its
/// release's [[extension_pin]] row with built_against
/// (Knowledge::built_against_row), else the `torchX.Y` that the file name of
/// the release wheel it was installed from holds (Provenance::url:
/// "flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl",
/// a series). The CUDA it keeps is its libcudart.so.N, else its cuNN tag;
/// its exact variant where its local tag is one ("0.3.21+cu130"). nullopt
/// when neither says.
std::optional<BuiltAgainst> built_against_torch(const Knowledge& k, const PackageKernels& p);

/// Returns `p` as it runs beside the torch of `env`: for an extension that
/// loads one library per CUDA version (recipes/extensions.toml
/// [[cuda_library]]: bitsandbytes loads libbitsandbytes_cuda128 for
/// torch.version.cuda 12.8), only the library it loads among those; `p`
/// itself otherwise, and when that library is missing ("package.cuda-library"
/// says so).
PackageKernels as_loaded(const Knowledge& k, const PythonEnv& env, const PackageKernels& p);

/// Describes how a companion of torch (torchvision, torchaudio) does not
/// match torch's CUDA build (companion_checks.cpp).
struct CompanionMismatch {
  enum class Kind { cpu_build, other_major, no_ops };
  std::string version;  // the companion's installed version
  std::string why;      // one line: its local tag, or what its files lack
  Kind kind = Kind::no_ops;
  bool from_index = false;  // torch's own index serves the matching build (false: Jetson, local torch builds)
  bool unseen = false;      // only inferred: its ops library was not among the files read (a warning, not a problem)
};

/// Returns how companion `name` of `env` does not match its CUDA torch: a
/// `+cpu` or other-major `+cuNNN` local tag, no ops library
/// (recipes/extensions.toml [[companion_ops]]) among its files, or one
/// without CUDA kernels; nullopt when it matches, is not installed, torch
/// has no CUDA, or there is no NVIDIA GPU.
std::optional<CompanionMismatch> companion_mismatch(const Situation& x, const Knowledge& k, const PythonEnv& env,
                                                    std::string_view name);

/// Adds "package.companion-variant" problems (the resolver's fix: torch
/// reinstalled with its companions from its own index) and, where no index
/// serves them, "package.companion-build" with the build of the paired release.
void check_companions(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out);

/// Adds to `f` the source build of the `name` release paired with the
/// installed torch (recipes/torch-wheels.toml [[extension_pin]], its build
/// recipe's tag), or says that no table pairs one.
void add_companion_build(const Situation& x, const Knowledge& k, const PythonEnv& env, std::string_view name,
                         Finding& f);

/// Turns the nvcc/torch CUDA-major warning into a "package.runtime-build"
/// problem when a package that compiles its ops at run time with CUDA_HOME's
/// nvcc is installed (recipes/extensions.toml [[runtime_build]]); its first
/// fix is torch from the index of the toolkit's major where the driver runs
/// it, then the toolkit of torch's major (runtime_builds.cpp).
void check_runtime_builds(const Situation& x, const Knowledge& k, const PythonEnv& env, std::vector<Finding>& out);

/// Returns the [[runtime_build]] row of `p` when it builds its ops at run
/// time here (no compiled library of its own where the row says so), else nullptr.
const RuntimeBuild* runtime_build_of(const Knowledge& k, const PackageKernels& p);

void check_extension_stack(const Situation& situation, const Knowledge& k, const PythonEnv& env,
                           std::vector<Finding>& out);

}  // namespace torchfix::detail
