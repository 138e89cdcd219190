#pragma once
// The Snapshot: everything the probes learned about a machine, as plain data.
// Diagnosis is a pure function of a Snapshot and the Knowledge tables; a
// Snapshot round-trips through JSON (`--save-snapshot`, `--snapshot`).
// The JSON schema is documented in docs/json-schema.md.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Names torch's companions: distributions installed with torch from its
/// index, one release per torch release (their METADATA pins torch exactly;
/// recipes/torch-wheels.toml [[extension_pin]]).
inline constexpr const char* k_torch_companions[] = {"torchvision", "torchaudio"};

/// Names the distributions of Triton (PEP 503 names): PyPI's, the PyTorch
/// nightly index's, and the Windows fork's; each installs the import package
/// `triton` and is JIT-compiled, so it holds no kernels to read.
inline constexpr std::string_view k_triton_distributions[] = {"triton", "pytorch-triton", "triton-windows"};

/// Records a probe that could not give an answer ("unknown"), and why.
struct ProbeNote {
  std::string probe;    // "nvml", "nvidia-smi", "python:/usr/bin/python3", ...
  std::string message;  // what happened, e.g. "timed out after 10 s"
};

/// Describes one GPU as the driver reports it.
struct Gpu {
  int index = 0;
  std::string name;                           // "NVIDIA H200"
  std::optional<ComputeCapability> cc;        // unknown when no probe could read it
  std::optional<std::uint64_t> memory_bytes;  // total memory, bytes
  std::string source;                         // "nvml", "cuda", "nvidia-smi", "what-if"
};

/// Describes the kernel driver and the CUDA version it supports.
struct Driver {
  std::optional<Version> version;       // "580.159.04"
  std::optional<Version> cuda_version;  // CUDA the driver supports, "13.0" (from 13000)
  std::string source;                   // which probe answered
};

/// Describes what the `-lcuda` of Triton's launcher build finds (Triton 2.0
/// to 3.5 link it; 3.6 links `-l:libcuda.so.1`): Triton's own folders, then
/// the linker's. Paths are as on the machine; files count as `ld` sees them
/// (a symlink counts when its target exists).
struct LibcudaLink {
  std::vector<std::string>
      triton_dirs;  // libcuda_dirs(): TRITON_LIBCUDA_PATH, else ldconfig -p's, else LD_LIBRARY_PATH's
  std::vector<std::string> linker_dirs;     // searched after them: LIBRARY_PATH, then ld's default folders
  std::optional<std::string> libcuda_so;    // the unversioned libcuda.so the link finds; nullopt: none
  std::optional<std::string> libcuda_so_1;  // the driver's libcuda.so.1 in triton_dirs, the link's target
};

/// Describes one mount of the probe's mount namespace (a line of
/// /proc/self/mountinfo): inside a container, "/" is the image's root
/// filesystem (overlay) and the others are volumes and bind mounts.
struct Mount {
  std::string point;    // mount point, unescaped ("/opt/my venv")
  std::string root;     // the folder of the source filesystem mounted there ("/", or a bind mount's "/srv/venv")
  std::string fs_type;  // "overlay", "ext4", "tmpfs"
  std::string source;   // "overlay", "/dev/vda"
};

/// Describes the host the probes ran on.
struct Platform {
  std::string machine;  // uname machine: "x86_64", "aarch64"
  std::string os;       // PRETTY_NAME of /etc/os-release
  bool wsl2 = false;  // a WSL kernel (osrelease), WSL's interop (binfmt_misc/WSLInterop), /dev/dxg or /usr/lib/wsl/lib
  std::optional<bool> wsl_dxg;                // WSL: /dev/dxg (GPU paravirtualization) present; nullopt: not probed
  std::optional<bool> wsl_libcuda;            // WSL: /usr/lib/wsl/lib/libcuda.so(.1) of the Windows driver present
  std::vector<std::string> wsl_linux_driver;  // WSL: a Linux driver's libcuda.so.VER/libnvidia-ml.so.VER files
  std::vector<std::string> wsl_linux_driver_packages;  // WSL: the dpkg packages owning them (/var/lib/dpkg/info/*.list)
  bool wsl_linux_driver_uninstaller = false;           // WSL: /usr/bin/nvidia-uninstall (the .run installer's) present
  bool container = false;                              // /.dockerenv, /run/.containerenv or cgroup hints
  bool nvidia_device_nodes = false;                    // /dev/nvidia0 or /dev/nvidiactl present
  bool libcuda_loadable = false;                       // dlopen("libcuda.so.1") succeeded
  std::optional<LibcudaLink> libcuda_link;             // Linux: where Triton's -lcuda looks; nullopt: not probed
  std::optional<std::string> cuda_visible_devices;     // CUDA_VISIBLE_DEVICES when set
  int cpus = 0;                                        // usable CPUs (affinity)
  std::optional<std::uint64_t> memory_available_bytes;  // MemAvailable, bytes
  std::optional<double> cpu_quota;                      // cgroup CPU quota in CPUs (cpu.max 400000/100000 = 4.0)
  std::string cpu_quota_source;                         // the file it was read from
  std::optional<std::uint64_t> memory_limit_bytes;      // room under the cgroup memory limit (max - current), bytes
  std::string memory_limit_source;                      // the file and numbers it came from
  bool windows = false;                                 // native Windows (what-if only: the probes run on Linux)
  std::optional<std::string> l4t;                       // Jetson Linux release, "36.4.3" (/etc/nv_tegra_release)
  /// In a container: its mounts outside /proc, /sys and /dev, in mountinfo
  /// order; nullopt: not read (not a container, or an older snapshot).
  std::optional<std::vector<Mount>> mounts;
  /// In a container: when it was created, Unix seconds (the mtime of the
  /// /.dockerenv or /run/.containerenv its engine writes then); nullopt: unknown.
  std::optional<std::int64_t> container_created;
};

/// Describes one CUDA toolkit (one nvcc).
struct Toolkit {
  std::string nvcc;                // absolute path of nvcc
  std::string origin;              // "PATH", "CUDA_HOME", "/usr/local/cuda-*", "conda", "pip"
  std::optional<Version> version;  // "13.0.88"
  std::vector<Arch> archs;         // SASS targets nvcc accepts
  std::string archs_source;        // "nvcc --list-gpu-code" or "table"
};

/// Names the family of a host compiler (msvc: cl.exe, found through vswhere).
enum class CompilerFamily { gcc, clang, other, msvc };

/// The origin of compilers found in /opt/rh/gcc-toolset-N (not on PATH, so
/// never the compiler a build picks up without torchfix).
inline constexpr std::string_view k_gcc_toolset_origin = "gcc-toolset";

/// Describes one host C/C++ compiler that nvcc could use.
struct HostCompiler {
  std::string path;    // absolute path
  std::string origin;  // "PATH", "CC", "CXX", "CUDAHOSTCXX", k_gcc_toolset_origin, "vswhere"
  CompilerFamily family = CompilerFamily::other;
  std::optional<Version> version;  // "12.2.0"; MSVC: cl.exe's, "19.44.35207" (_MSC_VER 1944)
};

/// Holds what one Python environment's torch says about itself.
struct TorchBuild {
  std::string version;                         // "2.6.0+cu126"
  std::optional<std::string> cuda;             // torch.version.cuda, "12.6"; nullopt on CPU/ROCm builds
  std::optional<std::string> hip;              // torch.version.hip
  std::vector<Arch> arch_flags;                // torch._C._cuda_getArchFlags(), parsed
  std::optional<int> cudnn;                    // torch.backends.cudnn.version(), 90100
  std::string location;                        // torch package directory
  std::optional<std::int64_t> installed_at{};  // mtime of its version.py, Unix seconds: when pip wrote it
};

/// Groups kernel modules (fatbins) of one library by the set of images they
/// hold: `modules` fatbins each carry exactly `images`.
struct ModuleGroup {
  std::vector<Arch> images;
  int modules = 0;
};

/// Says which of the torch symbols a C++ extension needs the installed torch
/// does not export (its undefined dynamic symbols in c10, at, torch, caffe2
/// or THP*, against the dynamic symbols of torch/lib's libc10*.so and
/// libtorch*.so): any missing means it was built against another torch and
/// its import fails with "undefined symbol".
struct TorchSymbols {
  std::string torch;                  // the torch version they were checked against ("2.5.1+cu124")
  int needed = 0;                     // torch symbols the binary needs
  int missing = 0;                    // of those, the ones torch does not export
  std::vector<std::string> examples;  // up to 3 missing, demangled where the probe could ("torch::jit::...")
};

/// Summarises the CUDA kernels of one binary file, read from its fatbins.
struct BinaryKernels {
  std::string path;                   // file (or wheel member) path
  std::vector<ModuleGroup> groups;    // kernel modules grouped by identical image sets
  std::string error;                  // non-empty when the file could not be read
  std::optional<int> cudart_major{};  // N of the libcudart.so.N it links (DT_NEEDED), when it links one
  bool links_torch = false;           // links libc10.so or a libtorch*.so (DT_NEEDED): tied to one torch release
  /// Some of its kernel images are compressed in the format nvcc's
  /// --compress-mode=size and balance write (fatbin flag 0x8000), which
  /// needs a newer driver than its CUDA major does (recipes/toolkits.toml
  /// [[fatbin_compression]]).
  bool zstd_fatbins = false;
  std::optional<TorchSymbols> torch_symbols{};  // checked against the installed torch; nullopt: not checked
};

/// Says how one distribution came to be installed (read from its
/// dist-info: INSTALLER, direct_url.json (PEP 610), METADATA Requires-Dist;
/// an .egg-link; or a conda-meta record). Empty fields are unknown.
struct Provenance {
  std::string installer;                 // "pip", "uv", "conda", "setup.py develop" (an .egg-link)
  std::string url;                       // direct_url.json's url ("file:///src/x", a VCS or archive URL)
  std::string editable_root;             // source tree of an editable install, whose build outputs were read
  std::string conda_channel;             // conda-meta "channel" ("https://conda.anaconda.org/conda-forge/linux-64")
  std::string conda_build;               // conda-meta "build" ("cuda120_py312h...")
  std::string local_version;             // the local part of the version, "cu121" of "2.4.1+cu121"
  std::vector<std::string> torch_pins;   // Requires-Dist lines naming torch ("torch==2.4.1")
  std::vector<std::string> triton_pins;  // Requires-Dist lines naming triton or pytorch-triton (torch's own)
  std::optional<int> cuda_major;         // CUDA major it links: libcudart.so.N, else a cuNNN local tag
  std::vector<std::string> owns;         // import packages (top-level folders) it installs, from RECORD
  /// Arch-setting nvcc flags, and variables read into them (MMCV_CUDA_ARGS),
  /// in the editable checkout's setup.py: with any flag containing "arch" in
  /// extra_compile_args, torch.utils.cpp_extension ignores TORCH_CUDA_ARCH_LIST
  /// (_get_cuda_arch_flags returns []).
  std::vector<std::string> arch_flags;
};

/// Lists the CUDA binaries that belong to one installed distribution.
struct PackageKernels {
  std::string distribution;  // "torch", "flash-attn", "causal-conv1d"
  std::string version;       // installed version
  std::vector<BinaryKernels> binaries;
  /// Compiled-in CUDA version of the package (e.g. torch.version.cuda), when known.
  std::optional<std::string> cuda;
  Provenance provenance{};
};

/// Says how probing one Python interpreter went.
enum class PythonStatus {
  ok,             // the probe script ran and reported
  no_torch,       // torch is not installed
  import_failed,  // `import torch` raised (message in `error`)
  crashed,        // the interpreter died (signal) during import
  timed_out,      // the probe did not finish in time
  not_runnable,   // the interpreter could not be started
};

/// Says what asking an index for its torch page gave: a list of wheel
/// files, no such page (HTTP 404 or 410: the index has no torch of that
/// variant), or no answer (network, timeout, another status, unreadable).
enum class IndexAnswer { listed, absent, unreachable };

/// Holds the torch page of one index, as probed for one environment: the
/// index its install of a wheel would use (core/resolver/wheel_index.hpp decides).
struct IndexPage {
  std::string upstream;  // the table's index, https://download.pytorch.org/whl/cu128
  std::string url;       // the index asked, as the fix prints it: the mirror, or upstream
  IndexAnswer answer = IndexAnswer::unreachable;
  std::string format = {};              // "PEP 691 JSON" or "PEP 503 HTML" (listed)
  bool cached = false;                  // read from torchfix's cache, not the network
  std::string error = {};               // not listed: why ("HTTP 404", "timed out after 3 s")
  std::vector<std::string> files = {};  // torch wheel file names listed
};

/// Describes one Python environment and the CUDA-related packages in it.
/// Describes the DLL whose load stopped `import torch` on Windows (torch's
/// "Error loading "X" or one of its dependencies") and what it imports.
struct FailedDll {
  std::string path;                   // the DLL torch named
  std::vector<std::string> imports;   // its import directory's DLL names, as written
  std::vector<std::string> missing;   // imports found in none of `searched` (API sets never count)
  std::vector<std::string> searched;  // folders looked in, in the loader's order
  std::string error;                  // why the imports could not be read; empty when they were
};

struct PythonEnv {
  std::string interpreter;  // path as given or found
  std::string origin;       // "--python", "VIRTUAL_ENV", "CONDA_PREFIX", "PATH", "system"
  PythonStatus status = PythonStatus::ok;
  std::string error;                          // for non-ok statuses
  std::optional<std::string> python_version;  // "3.12.3"
  std::optional<std::string> site_packages;   // purelib directory
  std::optional<TorchBuild> torch;
  std::map<std::string, std::string> distributions;  // CUDA-related distributions -> version
  /// Those of `distributions` installed editable -> their direct_url.json url
  /// ("file:///sgl-workspace/sglang/python"): how an application image's own
  /// install of its project is told from a user's (recipes/app-images.toml).
  std::map<std::string, std::string> editable_urls = {};
  std::vector<PackageKernels> kernels;       // binaries read from disk (fatbin reader)
  std::vector<IndexPage> index_pages = {};   // torch pages of the indexes its fixes name; empty: not asked
  std::optional<FailedDll> failed_dll = {};  // Windows: the DLL `import torch` could not load
};

/// Holds everything probed, or given by the user in what-if mode.
struct Snapshot {
  static constexpr int k_schema_version = 1;

  std::string torchfix_version;
  Platform platform;
  Driver driver;
  std::vector<Gpu> gpus;
  std::vector<Toolkit> toolkits;
  std::vector<HostCompiler> compilers;
  std::vector<PythonEnv> pythons;
  std::map<std::string, std::string> environment;  // relevant variables (CUDA_HOME, PATH, ...)
  std::vector<ProbeNote> notes;                    // probes that answered "unknown"
  bool what_if = false;                            // some values were overridden by the user
};

/// Serialises a Snapshot to JSON (schema in docs/json-schema.md).
nlohmann::json to_json(const Snapshot& snapshot);
/// Parses a Snapshot from JSON; errors name the field that is wrong.
Expected<Snapshot> snapshot_from_json(const nlohmann::json& json);

/// Returns the lowercase names used in JSON: "gcc", "ok", "timed_out", ...
std::string_view to_string(CompilerFamily family);
std::string_view to_string(PythonStatus status);
std::string_view to_string(IndexAnswer answer);

/// Parses torch's arch flags ("sm_50 sm_86 compute_90", separated by spaces,
/// commas or ';') into images, dropping duplicates; other words are skipped.
std::vector<Arch> parse_arch_flags(std::string_view flags);

}  // namespace torchfix
