#pragma once
// The build plan: a pure function of a recipe, the request and an inventory
// of the machine (GPUs, toolkits, host compilers, resources, environment,
// state of the source tree). The plan is a value: printed by --dry-run,
// serialised by --json, executed by build/execute.hpp.

#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "builder/project_scan.hpp"
#include "core/arch/arch_list.hpp"
#include "core/facts/knowledge.hpp"
#include "core/facts/recipe.hpp"
#include "core/situation/snapshot.hpp"
#include "core/situation/toolchain.hpp"
#include "probe/knowledge_files.hpp"
#include "probe/process.hpp"
#include "probe/resources.hpp"

namespace torchfix {

/// Says where the arch list comes from.
enum class ArchMode {
  auto_gpus,  // every probed GPU, deduplicated, PTX on the newest (--arch auto)
  native,     // the GPUs CUDA sees now (CUDA_VISIBLE_DEVICES applied), SASS only (--arch native)
  list,       // an explicit TORCH_CUDA_ARCH_LIST value (--arch "8.6;12.0+PTX")
  fleet,      // the union of a fleet's GPUs (--arch fleet:DIR), given as BuildInputs::gpus; PTX on the newest
};

/// Holds the --arch request.
struct ArchRequest {
  ArchMode mode = ArchMode::auto_gpus;
  std::string list;              // for ArchMode::list; for fleet, where the GPUs came from ("fleet:DIR, 3 groups")
  std::optional<PtxPolicy> ptx;  // nullopt: newest for auto, none for native, as written for list
};

/// Says what the source folder looks like before the build (probed by builder/fetch.hpp).
enum class SourceState {
  absent,   // nothing there: clone
  partial,  // an interrupted clone or missing submodules: resume
  clean,    // a checkout without local changes
  dirty,    // local changes: never reset or overwritten
  not_git,  // a folder that is not a git checkout
};

/// Holds the probed state of the source folder.
struct SourceStatus {
  SourceState state = SourceState::absent;
  std::optional<std::string> head;     // commit checked out, when known
  std::string detail;                  // "3 modified files: setup.py, ..."
  std::vector<std::string> top_files;  // top-level file names (setup.py, CMakeLists.txt): picks the front-end
};

/// Says what happens to an arch list a project hard-codes.
enum class ProjectArchs {
  replace,  // torchfix stands in for nvcc and rewrites each compile's arch flags to the plan's (default)
  keep,     // --keep-project-archs: the project's own list is built too
};

/// Holds what the user asked for (`torchfix build` options).
struct BuildRequest {
  ArchRequest arch;
  std::optional<std::string> ref;            // tag, branch or commit; nullopt: the recipe's default
  std::optional<std::filesystem::path> src;  // --src DIR: build this tree as it is, no fetch
  std::filesystem::path work_dir;            // clones, logs and wheels go under it
  std::optional<int> jobs;                   // --jobs N overrides the planner
  bool force = false;                        // build a dirty tree as it is; ignore the disk check
  std::string python = "python3";            // interpreter the build steps run
  std::optional<Version> torch_cuda;         // CUDA of the installed torch (extensions), "13.0"
  std::optional<std::string> repository;     // --repo URL overrides the recipe's
  ProjectArchs project_archs = ProjectArchs::replace;
};

/// Describes an sccache-dist cluster the compiles go to (--dist sccache), as
/// `sccache --dist-status` reports it.
struct DistCluster {
  std::string scheduler;  // scheduler URL
  int servers = 0;        // build servers registered
  int cpus = 0;           // their CPUs together
};

/// Holds everything make_plan reads. No field is read from the OS by the planner.
struct BuildInputs {
  const Recipe* recipe = nullptr;
  BuildRequest request;
  std::vector<ComputeCapability> gpus;         // probed (or --gpu) compute capabilities
  std::vector<Toolkit> toolkits;               // installed nvcc versions
  std::vector<HostCompiler> compilers;         // installed C++ compilers
  std::string os;                              // distribution (PRETTY_NAME): compiler install commands
  std::optional<Version> driver_cuda;          // CUDA this machine's driver supports: no nvcc of a newer major
  NvccSearch nvcc_search = NvccSearch::linux;  // which probe looked for `toolkits`
  Resources resources;
  Environment env;                       // the user's environment
  const Knowledge* knowledge = nullptr;  // toolkit tables; nullptr: only probed facts
  std::optional<std::string> launcher;   // ccache or sccache found on PATH
  std::optional<DistCluster> dist;       // --dist sccache: jobs sized for the cluster
  SourceStatus source;
  ProjectScan project;                    // the project's build files (builder/project_scan.hpp)
  std::filesystem::path wrapper_program;  // torchfix's own executable: the nvcc stand-in; empty: no stand-in
};

/// Says what fetch will do with the source folder.
enum class FetchAction { clone, resume, checkout, use_as_is, refuse_dirty };

/// Describes the fetch part of a plan.
struct PlanFetch {
  FetchAction action = FetchAction::clone;
  std::string url;                   // credentials already removed (safe to print)
  std::string url_with_credentials;  // as given; never printed or logged
  std::string ref;
  bool submodules = false;
  std::string reason;
  // Certificate authorities for HTTPS, from the user's SSL_CERT_FILE and
  // SSL_CERT_DIR ("" = the TLS library's own default: the system's bundle).
  std::string ca_file;
  std::string ca_dir;
};

/// Says why a variable is in the build environment.
enum class EnvOrigin { set, overrides, inherited };

/// Holds one variable of the build environment with why it is there.
struct PlanEnvVar {
  std::string name;
  std::string value;
  EnvOrigin origin = EnvOrigin::set;
  std::string why;             // the fact's source, or "you set it" for inherited ones
  std::string value_template;  // value with {jobs} kept, so a retry can change the jobs
};

/// Holds one command to run (placeholders already substituted).
struct PlanStep {
  std::string name;
  std::vector<std::string> argv;
  std::filesystem::path cwd;
  bool compiles = false;
  std::vector<std::string> argv_template;  // argv with {jobs} kept
};

/// Describes torchfix standing in for nvcc: a folder laid out like the
/// toolkit (CUDA_HOME) whose bin/nvcc is torchfix, which rewrites each
/// compile's arch flags to `targets` and runs `real_nvcc` (core/arch/nvcc_args.hpp).
struct NvccWrap {
  std::filesystem::path cuda_home;       // the stand-in toolkit folder (work_dir/nvcc-<key>)
  std::filesystem::path real_cuda_home;  // the toolkit it mirrors
  std::string real_nvcc;
  std::filesystem::path program;     // torchfix's executable, linked as cuda_home/bin/nvcc
  std::vector<std::string> targets;  // the plan's nvcc arguments (gencode_args)
  std::vector<std::string> asked;    // images the project's files name ("sm_75", ...)
  std::string summary;               // "setup.py asks for sm_75, ..., sm_121; building sm_90 + compute_90"
};

/// Holds a file the executor writes before the first step (the nvcc
/// stand-in's settings, a distutils config).
struct PlanFile {
  std::filesystem::path path;
  std::string content;
  std::string content_template;  // content with {jobs} kept
};

/// Holds a complete, printable build plan.
struct BuildPlan {
  std::string recipe;
  std::string front_end;
  std::string front_end_source;
  PlanFetch fetch;
  std::filesystem::path src_dir;
  std::filesystem::path build_dir;  // CMake build folder: src/build for clones, under work_dir for --src
  std::filesystem::path log_path;
  std::filesystem::path wheel_dir;
  ArchList arch;
  std::string arch_variable;  // "TORCH_CUDA_ARCH_LIST"
  std::string arch_value;     // in the recipe's spelling
  std::string arch_reason;
  std::vector<Arch> expected_images;  // what the CUDA libraries must contain
  Toolkit toolkit;
  std::string toolkit_reason;
  HostCompiler compiler;   // C++ compiler (CXX, CUDAHOSTCXX)
  std::string c_compiler;  // CC
  std::string compiler_reason;
  int jobs = 1;
  std::string jobs_variable;
  std::string jobs_reason;
  int nvcc_threads = 1;
  std::uint64_t job_memory_bytes = 0;  // planned peak per job slot (per job × nvcc threads × nested), bytes
  std::optional<std::string> launcher;
  std::uint64_t disk_need_bytes = 0;
  std::optional<std::uint64_t> disk_free_bytes;
  std::vector<PlanEnvVar> env;  // every variable torchfix sets, plus inherited ones that steer the build
  Environment child_env;        // the full environment the steps get
  std::vector<PlanStep> steps;
  std::optional<NvccWrap> nvcc_wrap;  // set when the project hard-codes its archs (and not --keep-project-archs)
  std::vector<PlanFile> files;        // written by the executor before the steps
  std::string parallel_note;          // how the project's compiles run in parallel, or what serial costs
  int compiles_expected = 0;          // compiler invocations the progress line counts toward (scan's sources)
  std::vector<Artefact> artefacts;
  std::vector<std::string> warnings;
  std::vector<std::string> blockers;  // reasons the plan must not run (dirty tree, disk); --force lifts some

  bool runnable() const { return blockers.empty(); }
};

/// Computes the plan. Errors: no GPU for --arch auto/native, a malformed
/// --arch list, no toolkit or host compiler that fits, no front-end for the
/// ref, a recipe without repository and no --src. A dirty tree or too little
/// disk is not an error: the plan carries a blocker the CLI shows.
Expected<BuildPlan> make_plan(const BuildInputs& inputs);

/// Returns `plan` with `jobs` parallel jobs: the jobs variable, every env
/// value and argument that used {jobs}, and child_env updated (OOM retries).
BuildPlan with_jobs(const BuildPlan& plan, int jobs);

/// Removes user:password@ (or token@) from a URL: "https://***@host/x".
std::string redact_url(std::string_view url);

/// Returns the text form of a plan, one fact per line, as --dry-run prints it.
std::string render_plan_text(const BuildPlan& plan);

/// Returns the JSON form of a plan (--dry-run --json); serialised with dump().
std::string render_plan_json(const BuildPlan& plan);

/// Returns "clone", "resume", "checkout", "use-as-is", "refuse-dirty".
std::string_view to_string(FetchAction action);

}  // namespace torchfix
