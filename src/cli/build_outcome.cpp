// torchfix build, second half: runs the plan and reports the outcome
// (cli/build_outcome.hpp).
#include "cli/build_outcome.hpp"

#include <nlohmann/json.hpp>

#include "builder/cache_stats.hpp"
#include "builder/execute.hpp"
#include "cli/build_status.hpp"
#include "core/base/json_text.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

std::string_view step_status(const StreamResult& r) {
  if (r.succeeded()) return "ok";
  return r.interrupted ? "interrupted" : "failed";
}

// Reads this build's cache statistics: ccache's stats log, or the stats of
// the build's own sccache server, which is stopped afterwards.
Expected<CacheStats> build_cache_stats(const std::string& tool, const Environment& env, ProcessRunner& runner) {
  if (tool == "ccache") {
    auto text = util::read_file_bytes(env.at("CCACHE_STATSLOG"));
    return parse_ccache_stats_log(text ? *text : std::string());
  }
  Command show{"sccache", {"--show-stats", "--stats-format=json"}, env, {}, std::chrono::seconds(30)};
  TF_TRY(shown, runner.run(show));
  Command stop{"sccache", {"--stop-server"}, env, {}, std::chrono::seconds(30)};
  (void)runner.run(stop);
  if (!shown.succeeded()) return fail("sccache --show-stats failed: " + shown.err);
  return parse_sccache_stats(shown.out);
}

// Prints the outcome; with --json the human lines go to stderr so that
// stdout stays one JSON document. A failure's line comes first, and under it
// why: the classifier's findings, else the step's first error lines.
int report_outcome(const BuildOutcome& outcome, const BuildPlan& plan, bool json, Context& ctx) {
  Printer& out = json ? *ctx.err : *ctx.out;
  for (const StepOutcome& s : outcome.steps) {
    std::string jobs;
    for (int j : s.jobs_tried) jobs += (jobs.empty() ? "" : " -> ") + std::to_string(j);
    out.line("  " + s.name + ": " + std::string(step_status(s.result)) + " in " + format_duration(s.result.seconds) +
             " (jobs " + jobs + ")");
  }
  if (outcome.verify) {
    for (const LibraryCheck& lib : outcome.verify->libraries) {
      std::string images;
      for (const Arch& a : lib.images) images += (images.empty() ? "" : " ") + a.name();
      out.line("  " + lib.path + ": " + images + (lib.missing.empty() ? "" : " (missing some)"));
    }
    for (const std::string& w : outcome.verify->wheels)
      out.line("  wheel: " + w + "  (pip install it on any machine with these GPUs)");
  }
  switch (outcome.status) {
    case BuildStatus::succeeded:
      out.line(out.paint("built and verified", Colour::green) + "; log " + plan.log_path.string());
      return k_exit_ok;
    case BuildStatus::interrupted:
      ctx.err->line("torchfix build: " + outcome.message);
      return 130;
    case BuildStatus::blocked:
    case BuildStatus::failed:
      break;
  }
  Printer& err = *ctx.err;
  err.line("torchfix build: " + outcome.message);
  for (const BuildFailure& f : outcome.failures) {
    err.line("  " + err.paint(std::string(to_string(f.kind)), Colour::red) + ": " + f.cause);
    err.line("    log: " + f.evidence);
    err.line("    fix: " + f.fix);
  }
  if (outcome.failures.empty() && !outcome.error_lines.empty()) {
    err.line("  from the log:");
    for (const std::string& l : outcome.error_lines) err.line("    " + l);
  }
  return k_exit_problem;
}

// Renders the plan and the outcome as one JSON document.
std::string outcome_json(const BuildPlan& plan, const BuildOutcome& outcome) {
  nlohmann::json j = nlohmann::json::parse(render_plan_json(plan));
  j["status"] = outcome.status == BuildStatus::succeeded     ? "succeeded"
                : outcome.status == BuildStatus::interrupted ? "interrupted"
                                                             : "failed";
  j["message"] = outcome.message;
  nlohmann::json steps = nlohmann::json::array();
  for (const StepOutcome& s : outcome.steps) {
    steps.push_back({{"name", s.name},
                     {"status", step_status(s.result)},
                     {"jobs_tried", s.jobs_tried},
                     {"exit_code", s.result.exit_code},
                     {"seconds", s.result.seconds}});
  }
  j["outcome_steps"] = steps;
  nlohmann::json failures = nlohmann::json::array();
  for (const BuildFailure& f : outcome.failures) {
    failures.push_back({{"kind", to_string(f.kind)}, {"evidence", f.evidence}, {"cause", f.cause}, {"fix", f.fix}});
  }
  j["failures"] = failures;
  j["error_lines"] = outcome.error_lines;
  return json_text(j);
}

}  // namespace

int execute_and_report(const BuildPlan& plan, const BuildRunFlags& o, Context& ctx) {
  for (const std::string& w : plan.warnings) ctx.err->line("warning: " + w);
  ctx.err->line("building " + plan.recipe + " for " + plan.arch_variable + "=" + plan.arch_value + " with nvcc " +
                (plan.toolkit.version ? plan.toolkit.version->str() : "?") + ", " + plan.jobs_variable + "=" +
                std::to_string(plan.jobs) + "; log " + plan.log_path.string());
  for (const std::string& line : {plan.nvcc_wrap ? plan.nvcc_wrap->summary : std::string(), plan.parallel_note}) {
    if (!line.empty()) ctx.err->line(line);
  }
  StatusObserver observer(*ctx.err, plan.compiles_expected);
  // This build's calls only, in the stats log torchfix set (--cache
  // ccache); a CCACHE_STATSLOG of the user's own is their history: kept.
  if (auto log = plan.child_env.find("CCACHE_STATSLOG"); log != plan.child_env.end()) {
    const auto users = ctx.env.find("CCACHE_STATSLOG");
    std::error_code ec;
    if (users == ctx.env.end() || users->second != log->second) fs::remove(log->second, ec);
  }
  auto outcome = execute_plan(plan, observer);
  if (ctx.err->smart()) ctx.err->status("");  // the live line goes before the summary
  if (!outcome) {
    ctx.err->line("torchfix build: " + outcome.error().message);
    return k_exit_tool_failure;
  }
  if (o.cache == "ccache" || o.cache == "sccache" || o.dist) {
    const std::string tool = o.dist ? "sccache" : o.cache;
    if (auto stats = build_cache_stats(tool, plan.child_env, *ctx.runner)) {
      (o.json ? *ctx.err : *ctx.out).line(cache_summary(tool, *stats));
    } else {
      ctx.err->line("warning: " + stats.error().message);
    }
  }
  if (o.json) ctx.out->block(outcome_json(plan, *outcome));
  return report_outcome(*outcome, plan, o.json, ctx);
}

}  // namespace torchfix::cli
