#pragma once
// The one toolchain decision: which nvcc, which host compiler (CXX, CC,
// CUDAHOSTCXX), which arch list and how many parallel jobs a CUDA build on a
// machine should use. `torchfix doctor` reports it, `torchfix env` exports it
// and `torchfix build` plans with it; none of them decides on its own. Pure:
// every fact comes from the Snapshot (or the build's inputs) and the knowledge.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/arch/arch_list.hpp"
#include "core/facts/knowledge.hpp"
#include "core/facts/recipe.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Holds the CPU, memory and disk a build may use, with where each came from.
struct Resources {
  int cpus = 1;                                  // usable CPUs (affinity, then the cgroup quota)
  std::string cpus_source;                       // "affinity 16", "cgroup cpu.max 400000/100000 (4.0)"
  std::optional<std::uint64_t> memory_bytes;     // memory a build may take, bytes
  std::string memory_source;                     // "MemAvailable 22.1 GiB", "cgroup memory.max 8 GiB - 1 GiB used"
  std::optional<std::uint64_t> disk_free_bytes;  // free bytes where the build writes
  std::string disk_path;                         // the folder whose filesystem was measured
};

/// Returns the CPUs and memory a build may use on the snapshot's machine:
/// CPUs are the affinity count lowered to the cgroup CPU quota (rounded down,
/// at least 1; 1 when the snapshot does not know them); memory is
/// MemAvailable lowered to the room under the cgroup memory limit. Disk is
/// left unknown: it depends on where the build writes.
Resources resources_of(const Platform& platform);

/// Formats a byte count as "22.1 GiB" / "512 MiB".
std::string format_bytes(std::uint64_t bytes);

/// Holds the jobs decision with the arithmetic behind it.
struct JobsDecision {
  int jobs = 1;
  int nvcc_threads = 1;
  std::uint64_t job_memory_bytes = 0;  // per job slot, bytes
  std::string reason;
  std::optional<std::string> warning;  // memory below one job's need
};

/// Decides parallel jobs: min(CPUs / nested, usable memory / (per-job memory
/// × nvcc threads × nested)), at least 1; usable memory keeps back 10% (at
/// most 2 GiB) for the linker and the system. nvcc threads = min(recipe
/// maximum, images per compile). `requested` (--jobs) wins, with a warning
/// when it exceeds the memory bound. Sources: shared/facts/pytorch-build.md
/// (flash-attn and vLLM formulas, NCCL nesting).
JobsDecision plan_jobs(const Resources& resources, const Recipe& recipe, const ArchList& arch,
                       std::optional<int> requested);

/// Returns the SASS targets `toolkit` accepts: its probed list (nvcc
/// --list-gpu-code), else the knowledge table for its version.
std::vector<Arch> toolkit_archs(const Toolkit& toolkit, const Knowledge* knowledge);

/// Names which probe looked for nvcc, so that "no nvcc found" names the
/// places it looked at: the Linux one (probe/toolkit_paths.cpp) or the
/// native Windows one (probe/toolkit_paths_win.cpp).
enum class NvccSearch { linux, windows };

/// Picks the newest toolkit that accepts every target of `arch` (and, for
/// extensions, whose major equals `torch_cuda`'s; with `driver_cuda` known,
/// whose major is at most the driver's: what a newer major builds does not
/// load, since minor-version compatibility works only within a major, NVIDIA
/// CUDA Compatibility guide). An 'a' or 'f' target needs the first nvcc the
/// table gives its variant (Knowledge::first_nvcc_for_variant; none without
/// `knowledge`). Errors name the targets no toolkit accepts and the CUDA
/// window that would (from the knowledge table); with no toolkit at all, the
/// places `search` looked at.
Expected<std::pair<Toolkit, std::string>> choose_toolkit(const std::vector<Toolkit>& toolkits, const ArchList& arch,
                                                         const Knowledge* knowledge, std::optional<Version> torch_cuda,
                                                         std::optional<Version> driver_cuda = std::nullopt,
                                                         NvccSearch search = NvccSearch::linux);

/// Holds the host compilers a build uses: `cxx` for CXX and CUDAHOSTCXX,
/// `cc` for CC (same family and version; empty when the snapshot lists no
/// such C compiler, and then CC is left alone).
struct HostCompilerChoice {
  HostCompiler cxx;
  std::string cc;
  std::string reason;
};

/// Returns the C++ compiler a build would use without torchfix: CUDAHOSTCXX,
/// else CXX, else g++ or c++ on PATH (what nvcc and CMake pick), else the
/// newest MSVC (Python's distutils _msvccompiler asks vswhere for `-latest`).
/// nullptr when the snapshot lists none of them.
const HostCompiler* current_host_compiler(const std::vector<HostCompiler>& compilers);

/// Says where an MSVC stands against nvcc's accepted _MSC_VER range.
enum class MsvcFit { inside, too_old, too_new, unknown };

/// Returns _MSC_VER of an MSVC version: major * 100 + minor (cl.exe 19.44 is
/// 1944; Microsoft's _MSC_VER encodes the compiler's major and minor).
int msc_ver(const Version& version);
/// Judges MSVC compiler `c` against `bounds`' msvc_min..msvc_below-1: unknown
/// when `c` is no MSVC or either side is missing (no version, or no range recorded).
MsvcFit msvc_fit(const HostCompiler& c, const HostCompilerBounds* bounds);
/// Returns the accepted MSVC versions of `bounds` as text, "19.20 to 19.49";
/// "" when no range is recorded.
std::string msvc_range_text(const HostCompilerBounds& bounds);

/// Holds how to install a compiler and where its drivers land.
struct CompilerInstall {
  std::string command;  // "sudo apt install g++-13"; a "# ..." comment where the distribution is unknown
  std::string cxx;      // the C++ driver it installs ("/usr/bin/g++-13")
  std::string cc;       // its C driver ("/usr/bin/gcc-13")
};

/// Returns how to install gcc or clang `major` on the distribution `os`
/// (/etc/os-release PRETTY_NAME) and where its binaries land: the first
/// recipes/toolkits.toml [[compiler_package]] row of that family naming a
/// word of `os` (Debian and Ubuntu's g++-N / clang-N, Fedora's gccN-c++, RHEL
/// and its rebuilds' gcc-toolset-N, each with its source); else a "# install
/// ..." comment and /usr/bin/g++-N. `knowledge` may be null (then the comment).
CompilerInstall compiler_install(const Knowledge* knowledge, std::string_view os, CompilerFamily family, int major);

/// Picks the C++ compiler inside `toolkit`'s host compiler bounds (knowledge
/// table) and at or above `gcc_min`: the current one (current_host_compiler)
/// when it fits, else one of its family, else gcc, newest first. Only paths
/// listed in `compilers` are returned. Errors name the bound, the installed
/// compilers and the fix (install an older compiler with `os`'s package
/// manager, compiler_install; or a newer CUDA).
Expected<HostCompilerChoice> choose_host_compiler(const std::vector<HostCompiler>& compilers, const Toolkit& toolkit,
                                                  const Knowledge* knowledge, std::optional<int> gcc_min,
                                                  std::string_view os = {});

/// Holds the facts a toolchain decision reads (a snapshot's: Situation::toolchain_facts, core/situation/situation.hpp).
struct ToolchainFacts {
  std::vector<ComputeCapability> gpus;  // GPUs to build for (deduplicated by the decision)
  std::vector<Toolkit> toolkits;
  std::vector<HostCompiler> compilers;
  Resources resources;
  std::optional<Version> torch_cuda;           // CUDA of the torch extensions build against
  std::string os;                              // distribution (PRETTY_NAME): picks compiler install commands
  std::optional<Version> driver_cuda;          // CUDA the NVIDIA driver supports; nullopt: unknown
  NvccSearch nvcc_search = NvccSearch::linux;  // which probe looked for nvcc
};

/// Holds what a caller asks of the decision.
struct ToolchainRequest {
  const Recipe* recipe = nullptr;  // jobs arithmetic, gcc_min, extension or project (required)
  std::optional<ArchList> arch;    // explicit list; nullopt: the facts' GPUs
  std::string arch_reason;         // why the explicit list (shown as the arch reason)
  PtxPolicy ptx = PtxPolicy::newest;
  std::optional<int> jobs;  // --jobs
};

/// Holds the decision: each part with the reason for it, or the reason it
/// could not be decided.
struct Toolchain {
  ArchList arch;
  std::string arch_reason;
  std::optional<Toolkit> toolkit;
  std::string toolkit_reason;  // why this toolkit, or why none fits
  std::optional<HostCompilerChoice> compiler;
  std::string compiler_error;           // why no compiler fits (empty when one does)
  std::optional<HostCompiler> current;  // the compiler a build would use without torchfix
  bool current_outside_bounds = false;  // `current` is rejected by the chosen nvcc
  std::string bounds_text;              // "gcc < 14, clang < 18" of the chosen nvcc
  std::string bounds_source;            // where the bounds come from
  JobsDecision jobs;
};

/// Decides the toolchain for `request` on `facts`: the arch list (request or
/// the GPUs: each GPU's own capability, or, when no toolkit accepts it, the
/// newest SASS the best toolkit has that still runs on it), the toolkit
/// (choose_toolkit; torch's CUDA major for extension recipes), the host
/// compiler (choose_host_compiler) and jobs (plan_jobs). Never fails: a part
/// that cannot be decided is left empty with its reason.
Toolchain decide_toolchain(const ToolchainFacts& facts, const Knowledge& knowledge, const ToolchainRequest& request);

/// Names the recipe whose jobs arithmetic `doctor` and `env` report: a
/// generic CUDA extension (recipes/build/cuda-extension.toml).
inline constexpr std::string_view k_generic_recipe = "cuda-extension";

}  // namespace torchfix
