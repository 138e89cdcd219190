#pragma once
// The parts of a plan that come from the project's own build files
// (builder/project_scan.hpp): the nvcc stand-in for a project that hard-codes
// its arch list, and parallel extension builds for one that turns ninja off.
// Pure; used by make_plan.

#include <optional>
#include <string>
#include <vector>

#include "builder/plan.hpp"

namespace torchfix {

/// Returns the nvcc stand-in for `plan` when the project's files hard-code
/// arch flags, torchfix's executable is known and --keep-project-archs was
/// not given; nullopt otherwise (with --keep-project-archs a warning says
/// what the project adds). Reads plan.toolkit, plan.arch and plan.log_path.
std::optional<NvccWrap> plan_nvcc_wrap(const BuildInputs& in, const BuildPlan& plan, const std::string& key,
                                       std::vector<std::string>& warnings);

/// Returns the settings file of the nvcc stand-in (JSON: real, targets, log).
PlanFile nvcc_wrap_file(const NvccWrap& wrap, const std::filesystem::path& log_path);

/// Returns the distutils config that builds a setuptools project's
/// extensions in parallel ([build_ext] parallel = {jobs}, read through
/// DIST_EXTRA_CONFIG) when its setup.py turns ninja off; sets plan.parallel_note
/// either way it decides (also when the project can only compile serially).
std::optional<PlanFile> plan_parallel_extensions(const BuildInputs& in, BuildPlan& plan, const std::string& key);

}  // namespace torchfix
