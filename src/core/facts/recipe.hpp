#pragma once
// Build recipes: what a project needs to be built from source (repository,
// submodules, how it spells its arch list, environment, steps per front-end,
// memory per compile job, artefacts to verify), parsed from the TOML text of
// recipes/build/*.toml. Pure: reading the files is probe/knowledge_files.hpp's job.
// Core holds them so that every decision (toolchain, remedies) can see which
// recipes exist and what arch switch each one has.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch_list.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Holds one environment variable a recipe sets, with the source of the fact.
/// `value` may contain placeholders (see k_recipe_placeholders).
struct RecipeEnv {
  std::string name;
  std::string value;
  std::string source;
};

/// Holds one command of a build: argv without a shell (placeholders allowed),
/// run in the source tree.
struct RecipeStep {
  std::string name;               // "requirements", "wheel"
  std::vector<std::string> argv;  // argv[0] is a program name or a placeholder ("{python}")
  bool compiles = false;          // runs the compilers: OOM retry and live progress apply
};

/// Describes how one range of a project's releases is built (PyTorch moved
/// from setuptools to scikit-build-core in 2.14).
struct FrontEnd {
  std::string name;                       // "setuptools", "scikit-build-core"
  std::optional<Version> min;             // first release (major.minor), nullopt: any older
  std::optional<Version> max;             // last release (major.minor), nullopt: any newer
  bool default_for_branches = false;      // used when the ref is not a version (main, a commit)
  std::vector<std::string> requires_any;  // chosen only when the tree has one of these top-level files
  std::vector<RecipeEnv> env;
  std::vector<RecipeStep> steps;
  std::string source;
};

/// Says what a file produced by a build is, for verification.
enum class ArtefactKind { cuda_library, wheel };

/// Names files a build produces: a glob relative to the source tree, or
/// starting with {wheel_dir} or {build_dir}; `*` matches within one path
/// component.
struct Artefact {
  std::string glob;
  ArtefactKind kind = ArtefactKind::cuda_library;
};

/// Says what a recipe builds: torch itself, or an extension against an
/// installed torch (whose CUDA major the toolkit must match).
enum class RecipeKind { project, extension };

/// Holds one recipe.
struct Recipe {
  std::string name;  // "pytorch"
  std::string description;
  std::string file;  // where it was read from (errors, `torchfix recipes`)
  RecipeKind kind = RecipeKind::project;
  std::string repository;                 // clone URL; empty: --src only
  std::string default_ref;                // "main"
  std::string ref_help;                   // how to pick a ref ("release tags vX.Y.Z")
  std::string tag_format = "v{version}";  // the repository's release tags ("{version}" for 0.48.2)
  bool submodules = false;                // initialise submodules recursively after checkout
  std::string arch_variable;              // "TORCH_CUDA_ARCH_LIST", "FLASH_ATTN_CUDA_ARCHS"
  ArchFormat arch_format = ArchFormat::torch;
  std::vector<ComputeCapability> arch_supported;  // empty: any; else targets snap down to these
  // nvcc's own variable (NVCC_APPEND_FLAGS) for targets the arch switch cannot
  // express (a Tegra part, whose SASS must be exact): they get -gencode flags
  // there; empty: such targets are an error.
  std::string extra_gencode_variable;
  std::string jobs_variable;            // "MAX_JOBS"
  std::string nvcc_threads_variable;    // "NVCC_THREADS"; empty: the project takes no thread count
  int nvcc_threads_max = 1;             // upper bound on nvcc --threads the planner picks
  std::uint64_t job_memory_mib = 2048;  // peak memory of one compile job with one nvcc thread, MiB
  int nested_parallelism = 1;           // processes per job slot (bundled NCCL's make doubles it)
  std::string memory_source;
  std::uint64_t disk_mib = 1024;  // free disk the build needs, MiB
  std::optional<int> gcc_min;     // lowest gcc major the project's C++ needs
  std::vector<RecipeEnv> env;
  std::vector<FrontEnd> front_ends;
  std::vector<Artefact> artefacts;
  std::string source;  // where the recipe's facts come from

  /// Returns the first front-end whose version range holds `release` (a
  /// version parsed from the ref; nullopt: a branch, a commit or a --src tree,
  /// which take default_for_branches ones or ones without a range) and whose
  /// requires_any names one of `top_files` (the tree's top-level file names;
  /// empty: not known yet, the condition is skipped). nullptr if none.
  const FrontEnd* front_end_for(const std::optional<Version>& release,
                                const std::vector<std::string>& top_files = {}) const;
};

/// Lists the placeholders steps and env values may use.
inline constexpr std::string_view k_recipe_placeholders[] = {
    "{python}",          "{src}",          "{jobs}",      "{arch_list}", "{arch_list_cmake}",
    "{arch_list_torch}", "{nvcc_threads}", "{wheel_dir}", "{cuda_home}", "{build_dir}"};

/// Parses one recipe from TOML `text`; `file` names it in errors. Errors give
/// file, line and what is wrong (missing field, unknown arch format, unknown
/// placeholder, a fact without its source).
Expected<Recipe> parse_recipe(std::string_view text, const std::string& file);

/// Returns the recipe called `name`; errors list the known names.
Expected<const Recipe*> find_recipe(const std::vector<Recipe>& recipes, std::string_view name);

/// Holds an arch list split by how a recipe can ask for it.
struct RecipeArch {
  ArchList all;    // every target the build produces (what verification expects)
  ArchList extra;  // targets only the recipe's extra_gencode_variable can ask for
};

/// Maps each target to the newest arch of the same major the recipe has
/// kernels for (arch_supported; SASS of 8.0 runs on 8.6), appending a note for
/// each change. A Tegra target (8.7, 7.2: SASS must match exactly) is kept as
/// it is and goes to `extra` (the recipe's extra_gencode_variable). Errors: a
/// target of a generation the project has no kernels for (not supported
/// upstream), a Tegra target of a recipe without extra_gencode_variable.
Expected<RecipeArch> snap_arch_for_recipe(const ArchList& arch, const Recipe& recipe, std::vector<std::string>& notes);

/// Returns "torch", "cmake", "gencode" or "flash_attn" (the TOML spelling).
std::string_view to_string(ArchFormat format);

}  // namespace torchfix
