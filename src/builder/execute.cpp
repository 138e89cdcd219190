#include "builder/execute.hpp"

#include "builder/stand_in.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <ctime>
#include <fstream>

namespace torchfix {
namespace {

void log_header(const std::filesystem::path& log, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(log.parent_path(), ec);
  std::ofstream out(log, std::ios::app);
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  out << "\n==== torchfix " << stamp << " " << text << " ====\n";
}

std::string argv_text(const PlanStep& s) {
  std::string out;
  for (const auto& a : s.argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

bool is_oom(const StreamResult& r, const std::vector<BuildFailure>& failures) {
  if (r.signal == 9 || r.exit_code == 137) return true;
  for (const BuildFailure& f : failures) {
    if (f.kind == FailureKind::oom_killed) return true;
  }
  return false;
}

// Keeps the first error lines of a step's output, and its last lines as the
// fallback when no line looks like an error.
class ErrorLines {
 public:
  void add(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) return;
    std::string text(line.substr(0, 300));
    if (is_error_line(line) && m_errors.size() < k_error_lines_max) m_errors.push_back(text);
    m_tail.push_back(std::move(text));
    if (m_tail.size() > 4) m_tail.erase(m_tail.begin());
  }
  std::vector<std::string> lines() const { return m_errors.empty() ? m_tail : m_errors; }

 private:
  std::vector<std::string> m_errors;
  std::vector<std::string> m_tail;
};

}  // namespace

bool is_error_line(std::string_view line) {
  for (std::string_view marker : {"error:", "error :", "Error:", "CMake Error", "FAILED:", "ERROR:", "fatal error",
                                  "*** [", "No such file or directory", "does not match the source"}) {
    if (line.find(marker) != std::string_view::npos) return true;
  }
  return false;
}

bool is_compiler_invocation(std::string_view line) {
  const auto word = [&](std::size_t& at) {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) ++at;
    const std::size_t start = at;
    while (at < line.size() && line[at] != ' ' && line[at] != '\t') ++at;
    std::string_view w = line.substr(start, at - start);
    const auto slash = w.rfind('/');
    return slash == std::string_view::npos ? w : w.substr(slash + 1);
  };
  std::size_t at = 0;
  std::string_view program = word(at);
  if (program == "ccache" || program == "sccache") program = word(at);
  // x86_64-linux-gnu-g++-12 -> g++
  for (std::string_view prefix : {"x86_64-linux-gnu-", "aarch64-linux-gnu-", "powerpc64le-linux-gnu-"}) {
    if (program.starts_with(prefix)) program.remove_prefix(prefix.size());
  }
  if (const auto dash = program.rfind('-'); dash != std::string_view::npos && dash + 1 < program.size() &&
                                            std::isdigit(static_cast<unsigned char>(program[dash + 1]))) {
    program = program.substr(0, dash);
  }
  static constexpr std::string_view k_compilers[] = {"nvcc", "gcc", "g++", "cc", "c++", "clang", "clang++"};
  if (std::ranges::find(k_compilers, program) == std::end(k_compilers)) return false;
  const std::string_view rest = line.substr(at);
  return rest.find(" -c ") != std::string_view::npos || rest.ends_with(" -c");
}

std::optional<std::pair<int, int>> parse_ninja_progress(std::string_view line) {
  if (line.size() < 5 || line[0] != '[') return std::nullopt;
  const auto slash = line.find('/');
  const auto close = line.find(']');
  if (slash == std::string_view::npos || close == std::string_view::npos || slash > close) return std::nullopt;
  int done = 0;
  int total = 0;
  auto a = std::from_chars(line.data() + 1, line.data() + slash, done);
  auto b = std::from_chars(line.data() + slash + 1, line.data() + close, total);
  if (a.ec != std::errc{} || a.ptr != line.data() + slash || b.ec != std::errc{} || b.ptr != line.data() + close ||
      total <= 0) {
    return std::nullopt;
  }
  return std::pair{done, total};
}

namespace {

// Holds what one run of a step left: its result, the failures its lines
// matched (one per kind) and the lines to show.
struct StepRun {
  StreamResult result;
  std::vector<BuildFailure> failures;
  std::vector<std::string> error_lines;
};

// Runs one step once with the plan's jobs, logging and classifying its output.
Expected<StepRun> run_step(const PlanStep& step, const BuildPlan& plan, BuildObserver& observer,
                           const StreamRunFn& run) {
  log_header(plan.log_path, "step " + step.name + " (jobs " + std::to_string(plan.jobs) + "): " + argv_text(step));
  StepRun out;
  ErrorLines error_lines;
  StreamCommand command;
  command.program = step.argv.front();
  command.args.assign(step.argv.begin() + 1, step.argv.end());
  command.env = plan.child_env;
  command.working_directory = step.cwd.string();
  command.log_path = plan.log_path;
  command.on_line = [&](std::string_view line) {
    observer.output_line(step, line);
    error_lines.add(line);
    if (auto f = classify_line(line)) {
      if (std::ranges::none_of(out.failures, [&](const BuildFailure& g) { return g.kind == f->kind; })) {
        out.failures.push_back(std::move(*f));
      }
    }
  };
  TF_TRY(result, run(command));
  out.result = result;
  out.error_lines = error_lines.lines();
  return out;
}

// Picks the failure that names the OOM kill, or a generic one.
BuildFailure oom_failure(const std::vector<BuildFailure>& failures) {
  BuildFailure oom =
      failures.empty() ? BuildFailure{FailureKind::oom_killed, "exit 137 / SIGKILL", "", ""} : failures.front();
  for (const auto& f : failures) {
    if (f.kind == FailureKind::oom_killed) oom = f;
  }
  return oom;
}

// Records a failed step in the outcome: its failures (an OOM kill named
// first when the exit says so), its lines and the message.
void record_failure(const PlanStep& step, const BuildPlan& plan, StepRun run, BuildOutcome& outcome) {
  const StreamResult& result = run.result;
  outcome.failures = std::move(run.failures);
  if (is_oom(result, outcome.failures) &&
      std::ranges::none_of(outcome.failures, [](const BuildFailure& f) { return f.kind == FailureKind::oom_killed; })) {
    outcome.failures.insert(outcome.failures.begin(),
                            {FailureKind::oom_killed, "the step was killed (SIGKILL / exit 137)",
                             "the kernel's OOM killer likely stopped it", "fewer jobs (--jobs), or more memory/swap"});
  }
  outcome.status = BuildStatus::failed;
  outcome.error_lines = std::move(run.error_lines);
  outcome.message =
      "step " + step.name + " failed (" +
      (result.signal ? "signal " + std::to_string(*result.signal) : "exit " + std::to_string(result.exit_code)) +
      ", jobs " + std::to_string(plan.jobs) + "); log: " + plan.log_path.string();
}

enum class StepEnd { next, stop };

// Runs step `i` until it succeeds, halving the jobs after an OOM kill of a
// compiling step (at most `max_oom_retries` times); `stop` when the outcome
// is final (interrupted or failed).
Expected<StepEnd> run_step_with_retries(int i, int total, BuildPlan& plan, BuildObserver& observer,
                                        const StreamRunFn& run, int max_oom_retries, BuildOutcome& outcome) {
  StepOutcome step_outcome;
  step_outcome.name = plan.steps[static_cast<std::size_t>(i)].name;
  for (int retries = 0;; ++retries) {
    const PlanStep& step = plan.steps[static_cast<std::size_t>(i)];
    step_outcome.jobs_tried.push_back(plan.jobs);
    observer.step_started(step, i, total, plan.jobs);
    TF_TRY(ran, run_step(step, plan, observer, run));
    step_outcome.result = ran.result;
    outcome.final_jobs = plan.jobs;
    if (ran.result.interrupted) {
      outcome.steps.push_back(step_outcome);
      outcome.status = BuildStatus::interrupted;
      outcome.message = "step " + step.name + " interrupted; rerun the same command to resume";
      return StepEnd::stop;
    }
    if (ran.result.succeeded()) break;
    if (step.compiles && is_oom(ran.result, ran.failures) && plan.jobs > 1 && retries < max_oom_retries) {
      const int fewer = std::max(1, plan.jobs / 2);
      observer.retrying(step, plan.jobs, fewer, oom_failure(ran.failures));
      plan = with_jobs(plan, fewer);
      if (auto prepared = prepare_plan_files(plan); !prepared) return std::unexpected(prepared.error());
      continue;
    }
    outcome.steps.push_back(step_outcome);
    record_failure(step, plan, std::move(ran), outcome);
    return StepEnd::stop;
  }
  outcome.steps.push_back(step_outcome);
  return StepEnd::next;
}

}  // namespace

Expected<BuildOutcome> execute_plan(const BuildPlan& input, BuildObserver& observer, const StreamRunFn& run,
                                    int max_oom_retries) {
  BuildOutcome outcome;
  BuildPlan plan = input;
  outcome.final_jobs = plan.jobs;
  if (!plan.runnable()) {
    outcome.status = BuildStatus::blocked;
    outcome.message = plan.blockers.front();
    return outcome;
  }
  if (plan.fetch.action == FetchAction::clone || plan.fetch.action == FetchAction::resume ||
      plan.fetch.action == FetchAction::checkout) {
    TF_TRY(fetched, fetch_source(plan.fetch, plan.src_dir, [&](const FetchProgress& p) {
             observer.fetch_progress(p);
             return true;
           }));
    outcome.fetch = fetched;
  }
  std::error_code ec;
  std::filesystem::create_directories(plan.wheel_dir, ec);
  if (auto prepared = prepare_plan_files(plan); !prepared) return std::unexpected(prepared.error());
  if (plan.nvcc_wrap) log_header(plan.log_path, "nvcc stand-in: " + plan.nvcc_wrap->summary);
  const auto started = std::filesystem::file_time_type::clock::now();

  const int total = static_cast<int>(plan.steps.size());
  for (int i = 0; i < total; ++i) {
    TF_TRY(end, run_step_with_retries(i, total, plan, observer, run, max_oom_retries, outcome));
    if (end == StepEnd::stop) return outcome;
  }
  // The file clock's coarse granularity can date a file written right after
  // `started` a little before it: allow 2 s.
  VerifyResult verify = verify_outputs(plan, started - std::chrono::seconds(2));
  outcome.verify = verify;
  if (!verify.ok()) {
    outcome.status = BuildStatus::failed;
    outcome.message = "the build finished but its output is not what was planned: " + verify.problems.front();
    return outcome;
  }
  outcome.status = BuildStatus::succeeded;
  outcome.message = "built and verified";
  return outcome;
}

}  // namespace torchfix
