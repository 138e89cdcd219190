#pragma once
// Runs a BuildPlan: fetch, each step through the process layer (output to
// the plan's log, lines to an observer), failure classification, automatic
// retries with half the jobs after an OOM kill, and verification.

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "builder/classify.hpp"
#include "builder/fetch.hpp"
#include "builder/plan.hpp"
#include "builder/verify.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Receives what happens during a build (the CLI draws the live status line
/// from it; tests record it). Every method has an empty default.
class BuildObserver {
 public:
  virtual ~BuildObserver() = default;
  /// Reports fetch progress of one repository.
  virtual void fetch_progress(const FetchProgress&) {}
  /// Reports that step `index` (0-based) of `total` starts with `jobs` jobs.
  virtual void step_started(const PlanStep&, int /*index*/, int /*total*/, int /*jobs*/) {}
  /// Hands over one output line of the running step.
  virtual void output_line(const PlanStep&, std::string_view) {}
  /// Reports an OOM kill and the retry with fewer jobs.
  virtual void retrying(const PlanStep&, int /*from_jobs*/, int /*to_jobs*/, const BuildFailure&) {}
};

/// Holds how one step went: the jobs of each attempt and the last result.
struct StepOutcome {
  std::string name;
  std::vector<int> jobs_tried;  // one entry per attempt: 8, 4, 2
  StreamResult result;
};

/// Says how a build ended.
enum class BuildStatus { succeeded, failed, interrupted, blocked };

/// Holds the outcome of execute_plan.
struct BuildOutcome {
  BuildStatus status = BuildStatus::failed;
  std::optional<FetchResult> fetch;
  std::vector<StepOutcome> steps;
  std::vector<BuildFailure> failures;  // classified from the failed attempt's output
  std::optional<VerifyResult> verify;
  std::string message;  // what stopped the build, one line
  int final_jobs = 0;   // jobs of the last attempt
  // The failed step's first error lines (see error_line_of), else its last
  // lines, at most k_error_lines_max: shown under the failure so the user
  // sees why without opening the log.
  std::vector<std::string> error_lines;
};

/// Caps BuildOutcome::error_lines.
inline constexpr std::size_t k_error_lines_max = 8;

/// Returns true when an output line of a build step states an error: a
/// compiler or nvcc "error:" / "fatal error:", "CMake Error", ninja's
/// "FAILED:", pip's "ERROR:", make's "*** ... Error", a Python traceback's
/// last line ("...Error: ...").
bool is_error_line(std::string_view line);

/// Runs one streamed command; run_streaming in production.
using StreamRunFn = std::function<Expected<StreamResult>(const StreamCommand&)>;

/// Executes `plan`. A plan with blockers is not run (status blocked). A
/// compiling step killed for memory (log signature or SIGKILL/137) is
/// retried with half the jobs, at most `max_oom_retries` times, resuming the
/// incremental build. Ctrl-C stops the step's process group and returns
/// status interrupted (the CLI exits 130); the tree stays resumable. Errors:
/// the fetch failed, a program of a step is missing, the log cannot be written.
Expected<BuildOutcome> execute_plan(const BuildPlan& plan, BuildObserver& observer,
                                    const StreamRunFn& run = run_streaming, int max_oom_retries = 3);

/// Returns true when an output line of a build step is a compiler
/// invocation that compiles (setuptools and pip -v echo each one): its first
/// word, after a ccache/sccache launcher, names nvcc, gcc, g++, cc, c++,
/// clang or clang++ (with a target prefix like x86_64-linux-gnu- or a version
/// suffix like -12), and it has -c. Links and ninja's "[n/N]" lines are not.
bool is_compiler_invocation(std::string_view line);

/// Parses ninja's progress prefix "[12/345] ..." into (12, 345).
std::optional<std::pair<int, int>> parse_ninja_progress(std::string_view line);

}  // namespace torchfix
