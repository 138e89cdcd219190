#pragma once
// Running a planned build and reporting its outcome: the plan's line, the
// live status, this build's cache statistics, then each step, the verified
// binaries and, on failure, why (the classifier's findings or the log's
// first error lines). Human lines go to stderr under --json.

#include <string>

#include "builder/plan.hpp"
#include "cli/app.hpp"

namespace torchfix::cli {

/// Holds the options of `torchfix build` that running and reporting read.
struct BuildRunFlags {
  std::string cache;  // --cache: auto, none, ccache or sccache
  bool dist = false;  // --dist sccache given
  bool json = false;  // --json
};

/// Runs a runnable `plan` (execute_plan) and prints its outcome; returns the
/// exit code: 0 built and verified, 130 interrupted, k_exit_problem failed,
/// k_exit_tool_failure when it could not run at all.
int execute_and_report(const BuildPlan& plan, const BuildRunFlags& flags, Context& ctx);

}  // namespace torchfix::cli
