// make_plan: assembles a BuildPlan from the pieces in plan.cpp. Pure: reads
// only its inputs.
#include <algorithm>
#include <set>

#include "builder/folders.hpp"
#include "builder/plan.hpp"
#include "builder/plan_project.hpp"

namespace torchfix {
namespace {

constexpr std::uint64_t k_mib = 1024ull * 1024;

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

bool steers_build(const std::string& name) {
  // setup.py forwards every BUILD_*, USE_*, CMAKE_* to CMake
  // (tools/setup_helpers/cmake.py); the rest are read by nvcc, CMake, the
  // compilers or extension setup.py files.
  for (std::string_view prefix : {"BUILD_", "USE_", "CMAKE_", "TORCH_", "CUDA", "NVCC", "CUDNN", "NCCL", "FLASH_"}) {
    if (name.starts_with(prefix)) return true;
  }
  for (std::string_view exact : {"MAX_JOBS", "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH",
                                 "MAKEFLAGS", "FORCE_CUDA", "XFORMERS_BUILD_TYPE"}) {
    if (name == exact) return true;
  }
  return false;
}

// A ref that names a release ("v2.9.1", "2.9.1", "v2.10.0-rc3") selects the
// front-end by version; a branch or commit takes the default one.
std::optional<Version> release_of(std::string_view ref) {
  if (ref.starts_with('v')) ref.remove_prefix(1);
  auto v = Version::parse(ref);
  if (!v || v->parts().size() < 2) return std::nullopt;
  return v;
}

// With no GPU to look at (a build host, a container without passthrough),
// --arch auto falls back to what the official wheel of this release and the
// newest installed toolkit's CUDA carries (recipes/torch-wheels.toml), so the
// result runs wherever that wheel runs. Only for PyTorch itself, whose wheels
// the table describes; x86_64 rows.
std::optional<ArchList> official_wheel_list(const BuildInputs& in, std::string& reason) {
  if (in.request.arch.mode != ArchMode::auto_gpus || !in.knowledge || in.recipe->name != "pytorch") return std::nullopt;
  const std::optional<Version> release = release_of(in.request.ref.value_or(in.recipe->default_ref));
  std::vector<const Toolkit*> toolkits;
  for (const Toolkit& t : in.toolkits) {
    if (t.version) toolkits.push_back(&t);
  }
  std::ranges::sort(toolkits, [](const Toolkit* a, const Toolkit* b) { return *a->version > *b->version; });
  for (const Toolkit* t : toolkits) {
    const WheelVariant* best = nullptr;
    for (const WheelVariant& w : in.knowledge->wheels) {
      if (w.platform != "x86_64" || w.cuda.major_minor() != t->version->major_minor()) continue;
      if (release ? !w.covers_release(*release) : (best && w.max < best->max)) continue;
      best = &w;
    }
    if (!best) continue;
    auto list = parse_arch_list(best->arch_list);
    if (!list) continue;
    reason = "--arch auto found no GPU: the arch list of the official " +
             (release ? release->major_minor() + " " : std::string()) + best->variant + " wheel (" + best->source +
             "); pass --gpu or --arch to build only what you need";
    return *list;
  }
  return std::nullopt;
}

// An explicit --arch list, with --ptx applied; nullopt for auto and native,
// whose list the toolchain decision makes from the GPUs.
Expected<std::optional<ArchList>> explicit_arch(const BuildInputs& in, std::string& reason) {
  const ArchRequest& req = in.request.arch;
  if (req.mode == ArchMode::list) {
    TF_TRY(list, parse_arch_list(req.list));
    if (req.ptx == PtxPolicy::none) {
      for (ArchTarget& t : list.targets) t.ptx = false;
    } else if (req.ptx == PtxPolicy::all) {
      for (ArchTarget& t : list.targets) t.ptx = true;
    }
    reason = "--arch " + req.list;
    return std::optional<ArchList>(list);
  }
  if (in.gpus.empty()) {
    if (auto wheel = official_wheel_list(in, reason)) return std::optional<ArchList>(*wheel);
    return fail(std::string("--arch ") + (req.mode == ArchMode::native ? "native" : "auto") +
                " found no GPU (no driver answer): pass --gpu sm_XY (or the product name) for each target GPU, "
                "or an explicit --arch list like 8.6;12.0+PTX");
  }
  return std::optional<ArchList>();
}

PlanFetch plan_fetch(const BuildInputs& in, const std::string& ref, std::vector<std::string>& blockers,
                     std::vector<std::string>& warnings) {
  PlanFetch f;
  f.url_with_credentials = in.request.repository.value_or(in.recipe->repository);
  f.url = redact_url(f.url_with_credentials);
  f.ref = ref;
  f.submodules = in.recipe->submodules;
  if (auto it = in.env.find("SSL_CERT_FILE"); it != in.env.end()) f.ca_file = it->second;
  if (auto it = in.env.find("SSL_CERT_DIR"); it != in.env.end()) f.ca_dir = it->second;
  if (in.request.src) {
    f.action = FetchAction::use_as_is;
    f.reason = "--src: the tree is built as it is (no fetch, no checkout)";
    return f;
  }
  switch (in.source.state) {
    case SourceState::absent:
      f.action = FetchAction::clone;
      f.reason = "no checkout yet";
      break;
    case SourceState::partial:
      f.action = FetchAction::resume;
      f.reason = "an earlier fetch stopped part way (" + in.source.detail + "): fetch only what is missing";
      break;
    case SourceState::clean:
      f.action = FetchAction::checkout;
      f.reason = "existing clean checkout" + (in.source.head ? " at " + in.source.head->substr(0, 12) : std::string()) +
                 ": fetch " + ref + " if missing, check it out, update submodules";
      break;
    case SourceState::not_git:
    case SourceState::dirty:
      if (in.request.force) {
        f.action = FetchAction::use_as_is;
        f.reason = "--force: building the tree as it is, local changes kept (" + in.source.detail + ")";
        warnings.push_back("the source tree has local changes and is built as it is (--force); ref " + ref +
                           " is not checked out");
      } else {
        f.action = FetchAction::refuse_dirty;
        f.reason = in.source.detail;
        blockers.push_back("the source folder has local changes or is not a clean checkout (" + in.source.detail +
                           "): torchfix never resets or overwrites it. Commit or move your changes, or pass --force "
                           "to build the tree as it is");
      }
      break;
  }
  return f;
}

// Chooses the recipe's front-end by the release `ref` names (or the files of
// the tree); fails naming the recipe and its ref help when none fits.
Expected<const FrontEnd*> choose_front_end(const BuildInputs& in, const std::string& ref, BuildPlan& plan) {
  const Recipe& recipe = *in.recipe;
  const std::optional<Version> release = in.request.src ? std::nullopt : release_of(ref);
  const FrontEnd* fe = recipe.front_end_for(release, in.source.top_files);
  if (!fe) {
    return fail("recipe '" + recipe.name + "' (" + recipe.file + ") has no front-end for " +
                (release ? "release " + release->str() : "ref '" + ref + "'") +
                (recipe.ref_help.empty() ? "" : "; " + recipe.ref_help));
  }
  plan.front_end = fe->name;
  plan.front_end_source = fe->source;
  return fe;
}

// Says how the arch list was chosen, for the plan's reason line.
std::string arch_reason_for(const BuildInputs& in, bool explicit_list, const Toolchain& tc) {
  if (explicit_list) return tc.arch_reason;
  const ArchRequest& req = in.request.arch;
  if (req.mode == ArchMode::native) return "--arch native: " + tc.arch_reason;
  if (req.mode == ArchMode::fleet) {
    return "--arch " + req.list +
           " (every fleet GPU gets SASS; PTX only for the newest, so GPUs newer than the fleet's can JIT): " +
           tc.arch_reason;
  }
  return "--arch auto: " + tc.arch_reason;
}

// Makes the one toolchain decision (core/situation/toolchain.hpp) that doctor and env
// report for the same machine, snapped to what the recipe's arch variable can
// say; fills the plan's arch, toolkit and compiler and returns it with the
// SASS the variable cannot ask for (`extra`).
Expected<Toolchain> plan_toolchain(const BuildInputs& in, BuildPlan& plan, ArchList& extra) {
  const Recipe& recipe = *in.recipe;
  static const Knowledge k_no_knowledge;
  const Knowledge& knowledge = in.knowledge ? *in.knowledge : k_no_knowledge;
  const ToolchainFacts facts{in.gpus, in.toolkits,    in.compilers,  in.resources, in.request.torch_cuda,
                             in.os,   in.driver_cuda, in.nvcc_search};
  ToolchainRequest treq;
  treq.recipe = &recipe;
  treq.jobs = in.request.jobs;
  treq.ptx =
      in.request.arch.ptx.value_or(in.request.arch.mode == ArchMode::native ? PtxPolicy::none : PtxPolicy::newest);
  TF_TRY(requested, explicit_arch(in, treq.arch_reason));
  treq.arch = requested;
  Toolchain tc = decide_toolchain(facts, knowledge, treq);
  const std::string arch_reason = arch_reason_for(in, requested.has_value(), tc);
  std::vector<std::string> notes;
  TF_TRY(snapped, snap_arch_for_recipe(tc.arch, recipe, notes));
  ArchList arch = snapped.all;
  extra = snapped.extra;
  if (recipe.arch_format == ArchFormat::flash_attn &&
      std::ranges::any_of(arch.targets, [](const ArchTarget& t) { return t.ptx; })) {
    // FLASH_ATTN_CUDA_ARCHS holds numbers only: PTX cannot be asked for, so it is not expected either.
    for (ArchTarget& t : arch.targets) t.ptx = false;
    for (ArchTarget& t : extra.targets) t.ptx = false;
    notes.push_back(recipe.arch_variable + " cannot ask for PTX: SASS only");
  }
  if (arch != tc.arch) {
    treq.arch = arch;
    treq.arch_reason = arch_reason;
    tc = decide_toolchain(facts, knowledge, treq);
  }
  plan.arch = arch;
  plan.arch_variable = recipe.arch_variable;
  plan.arch_value = render(arch, recipe.arch_format);
  plan.arch_reason = arch_reason;
  plan.expected_images = images(arch);
  for (auto& n : notes) plan.warnings.push_back(std::move(n));
  if (in.gpus.empty() && in.request.arch.mode != ArchMode::list) plan.warnings.push_back(arch_reason);

  if (!tc.toolkit) return fail(tc.toolkit_reason);
  plan.toolkit = *tc.toolkit;
  plan.toolkit_reason = tc.toolkit_reason;
  if (!tc.compiler) return fail(tc.compiler_error);
  plan.compiler = tc.compiler->cxx;
  plan.c_compiler = tc.compiler->cc;
  plan.compiler_reason = tc.compiler->reason;
  if (tc.current && tc.current_outside_bounds) {
    plan.warnings.push_back("your " + tc.current->origin + " compiler " + tc.current->path + " (" +
                            std::string(to_string(tc.current->family)) + " " +
                            (tc.current->version ? tc.current->version->str() : "?") + ") is outside nvcc " +
                            (plan.toolkit.version ? plan.toolkit.version->str() : "?") + "'s bounds (" +
                            tc.bounds_text + "): the build uses " + plan.compiler.path);
  }
  return tc;
}

// Fills the plan's jobs from the toolchain decision; with sccache-dist this
// machine only preprocesses and links, so jobs fill the cluster's CPUs plus
// ours, bounded by local preprocessing memory (1 GiB a job: an allowance for
// one large CUDA unit, an assumption the reason states).
void plan_jobs(const BuildInputs& in, const JobsDecision& jobs, BuildPlan& plan) {
  plan.jobs = jobs.jobs;
  plan.jobs_variable = in.recipe->jobs_variable;
  plan.jobs_reason = jobs.reason;
  plan.nvcc_threads = jobs.nvcc_threads;
  plan.job_memory_bytes = jobs.job_memory_bytes;
  if (jobs.warning) plan.warnings.push_back(*jobs.warning);
  plan.launcher = in.launcher;
  if (!in.dist || in.request.jobs) return;
  constexpr std::uint64_t k_preprocess_bytes = 1024ull * k_mib;
  const int wanted = in.dist->cpus + in.resources.cpus;
  const int by_memory =
      in.resources.memory_bytes
          ? std::max<int>(1, static_cast<int>(*in.resources.memory_bytes * 9 / 10 / k_preprocess_bytes))
          : wanted;
  plan.jobs = std::max(1, std::min(wanted, by_memory));
  plan.jobs_reason = "--dist sccache: " + std::to_string(in.dist->servers) + " build servers with " +
                     std::to_string(in.dist->cpus) + " CPUs at " + in.dist->scheduler + " + " +
                     std::to_string(in.resources.cpus) + " local CPUs = " + std::to_string(wanted) +
                     " jobs; local preprocessing at 1 GiB a job in 90% of " +
                     (in.resources.memory_bytes ? format_bytes(*in.resources.memory_bytes) : std::string("unknown")) +
                     " allows " + std::to_string(by_memory) + "; jobs " + std::to_string(plan.jobs);
}

// Places the folders: the clone lives under work_dir; logs and wheels too,
// never in a --src tree. Each is keyed by what is built (builder/folders.hpp):
// two projects named alike never share a build folder, log or wheel folder.
// Adds the fetch and the free-disk check (recipe disk_mib) to the plan.
void plan_folders(const BuildInputs& in, const std::string& ref, const std::string& key, BuildPlan& plan) {
  const Recipe& recipe = *in.recipe;
  plan.src_dir = source_dir(in.request.work_dir, recipe.name, in.request.src, in.request.repository);
  // A --src tree may hold the user's own build/: ours goes under work_dir.
  plan.build_dir = in.request.src ? in.request.work_dir / ("build-" + key) : plan.src_dir / "build";
  plan.log_path = in.request.work_dir / "logs" / (key + ".log");
  plan.wheel_dir = in.request.work_dir / "wheels" / key;
  plan.fetch = plan_fetch(in, ref, plan.blockers, plan.warnings);

  plan.disk_need_bytes = recipe.disk_mib * k_mib;
  plan.disk_free_bytes = in.resources.disk_free_bytes;
  if (!plan.disk_free_bytes || *plan.disk_free_bytes >= plan.disk_need_bytes) return;
  std::string msg = "free disk " + format_bytes(*plan.disk_free_bytes) + " at " + in.resources.disk_path +
                    " is below the " + format_bytes(plan.disk_need_bytes) + " this build needs (" + recipe.file + ")";
  if (in.request.force) {
    plan.warnings.push_back(msg + "; continuing (--force)");
  } else {
    plan.blockers.push_back(msg + ": free space, pick another --work-dir, or pass --force");
  }
}

// Expands the placeholders shared by env values and steps; {jobs} stays in
// keep_jobs() so that with_jobs can retry with fewer.
struct Expander {
  const BuildInputs& in;
  const BuildPlan& plan;
  std::filesystem::path cuda_home;

  std::string keep_jobs(std::string text) const {
    text = replace_all(std::move(text), "{python}", in.request.python);
    text = replace_all(std::move(text), "{src}", plan.src_dir.string());
    text = replace_all(std::move(text), "{arch_list_cmake}", render(plan.arch, ArchFormat::cmake));
    text = replace_all(std::move(text), "{arch_list_torch}", render(plan.arch, ArchFormat::torch));
    text = replace_all(std::move(text), "{arch_list}", plan.arch_value);
    text = replace_all(std::move(text), "{nvcc_threads}", std::to_string(plan.nvcc_threads));
    text = replace_all(std::move(text), "{wheel_dir}", plan.wheel_dir.string());
    text = replace_all(std::move(text), "{cuda_home}", cuda_home.string());
    text = replace_all(std::move(text), "{build_dir}", plan.build_dir.string());
    return text;
  }
  std::string operator()(const std::string& text) const {
    return replace_all(keep_jobs(text), "{jobs}", std::to_string(plan.jobs));
  }
};

// Collects the variables torchfix sets, then the recipe's, each with why;
// a later setting of a name replaces the earlier one.
class EnvVars {
 public:
  explicit EnvVars(const Expander& expand) : expand_(expand) {}
  void set(const std::string& name, const std::string& templ, const std::string& why) {
    std::erase_if(vars_, [&](const PlanEnvVar& v) { return v.name == name; });
    vars_.push_back({name, expand_(templ), EnvOrigin::set, why, expand_.keep_jobs(templ)});
  }
  std::vector<PlanEnvVar> take() { return std::move(vars_); }

 private:
  const Expander& expand_;
  std::vector<PlanEnvVar> vars_;
};

// Sets the compiler cache variables: CMake's launchers and, for
// cpp_extension's ninja builds, $PYTORCH_NVCC (torch/utils/cpp_extension.py
// _write_ninja_file; their C++ files get no launcher).
void set_launcher_vars(const BuildPlan& plan, const std::string& nvcc, EnvVars& vars) {
  if (plan.launcher) {
    for (const char* lang : {"C", "CXX", "CUDA"}) {
      vars.set(std::string("CMAKE_") + lang + "_COMPILER_LAUNCHER", *plan.launcher,
               "compiler cache (PyTorch's setup.py passes CMAKE_* to CMake, which honours "
               "CMAKE_<LANG>_COMPILER_LAUNCHER)");
    }
    vars.set("PYTORCH_NVCC", *plan.launcher + " " + nvcc,
             "compiler cache for .cu files of cpp_extension builds (torch/utils/cpp_extension.py _write_ninja_file); "
             "their C++ files are not cached");
  } else if (plan.nvcc_wrap) {
    vars.set("PYTORCH_NVCC", nvcc,
             "the nvcc stand-in for cpp_extension's ninja builds (torch/utils/cpp_extension.py _write_ninja_file)");
  }
}

// Returns the variables the build sets: arch, jobs, toolkit, compilers,
// PATH, launchers, the stand-in's toolkit names, the extra gencode, then
// the recipe's and the front-end's own.
std::vector<PlanEnvVar> planned_vars(const BuildInputs& in, const BuildPlan& plan, const FrontEnd& fe,
                                     const ArchList& extra, const Expander& expand) {
  const Recipe& recipe = *in.recipe;
  const std::string nvcc = (expand.cuda_home / "bin" / "nvcc").string();
  EnvVars vars(expand);
  vars.set(recipe.arch_variable, plan.arch_value, plan.arch_reason);
  vars.set(recipe.jobs_variable, "{jobs}", "jobs planner: " + plan.jobs_reason);
  if (!recipe.nvcc_threads_variable.empty()) {
    vars.set(recipe.nvcc_threads_variable, std::to_string(plan.nvcc_threads),
             "nvcc threads per compile (" + recipe.memory_source + ")");
  }
  vars.set("CUDA_HOME", expand.cuda_home.string(), "toolkit: " + plan.toolkit_reason);
  vars.set("CUDACXX", nvcc, "CMake's CUDA compiler (CMake docs, CUDACXX)");
  vars.set("CUDAHOSTCXX", plan.compiler.path, "nvcc host compiler: " + plan.compiler_reason);
  if (!plan.c_compiler.empty()) {
    vars.set("CC", plan.c_compiler, "same compiler family and version as CUDAHOSTCXX, so C, C++ and CUDA objects link");
  }
  vars.set("CXX", plan.compiler.path, "same compiler as CUDAHOSTCXX");
  const auto path = in.env.find("PATH");
  vars.set("PATH", (expand.cuda_home / "bin").string() + (path != in.env.end() ? ":" + path->second : ""),
           "the chosen toolkit's bin first, so 'nvcc' is the one planned");
  set_launcher_vars(plan, nvcc, vars);
  if (plan.nvcc_wrap) {
    for (const std::string& name : {std::string("CUDA_PATH"), std::string("CUDA_ROOT")}) {
      if (in.env.contains(name)) {
        vars.set(name, expand.cuda_home.string(), "the nvcc stand-in's toolkit folder, as CUDA_HOME");
      }
    }
  }
  if (!extra.empty() && !plan.nvcc_wrap) {
    vars.set(recipe.extra_gencode_variable, render(extra, ArchFormat::gencode),
             "SASS " + render(extra, ArchFormat::torch) + " that " + recipe.arch_variable +
                 " cannot ask for; nvcc reads this variable and appends it to every command line (nvcc docs, "
                 "NVCC_APPEND_FLAGS)");
  }
  for (const RecipeEnv& e : recipe.env) vars.set(e.name, e.value, e.source);
  for (const RecipeEnv& e : fe.env) vars.set(e.name, e.value, e.source);
  return vars.take();
}

// Puts the planned variables into the child's environment, marking those
// that override the user's, and lists the user's variables the build reads.
void apply_env(const BuildInputs& in, std::vector<PlanEnvVar> vars, BuildPlan& plan) {
  plan.child_env = in.env;
  for (PlanEnvVar& v : vars) {
    if (auto it = in.env.find(v.name); it != in.env.end() && it->second != v.value && v.name != "PATH") {
      v.origin = EnvOrigin::overrides;
      v.why += " (overrides your " + v.name + "=" + it->second + ")";
    }
    plan.child_env[v.name] = v.value;
  }
  for (const auto& [name, value] : in.env) {
    if (!steers_build(name)) continue;
    if (std::ranges::any_of(vars, [&](const PlanEnvVar& v) { return v.name == name; })) continue;
    vars.push_back({name, value, EnvOrigin::inherited, "inherited from your environment; the build reads it", value});
  }
  plan.env = std::move(vars);
}

// Adds the front-end's steps, the parallel-extensions config and the
// artefacts to check, with their placeholders expanded.
void plan_steps(const BuildInputs& in, const FrontEnd& fe, const std::string& key, const Expander& expand,
                BuildPlan& plan) {
  for (const RecipeStep& s : fe.steps) {
    PlanStep step{s.name, {}, plan.src_dir, s.compiles, {}};
    for (const std::string& a : s.argv) {
      step.argv.push_back(expand(a));
      step.argv_template.push_back(expand.keep_jobs(a));
    }
    plan.steps.push_back(std::move(step));
  }
  if (auto cfg = plan_parallel_extensions(in, plan, key)) {
    const std::string why = "builds the extensions " + std::to_string(plan.jobs) + " at a time: " + plan.parallel_note +
                            " (setuptools distutils dist.py find_config_files)";
    plan.env.push_back({"DIST_EXTRA_CONFIG", cfg->path.string(), EnvOrigin::set, why, cfg->path.string()});
    plan.child_env["DIST_EXTRA_CONFIG"] = cfg->path.string();
    plan.files.push_back(std::move(*cfg));
  }
  for (Artefact a : in.recipe->artefacts) {
    a.glob = expand(a.glob);
    plan.artefacts.push_back(std::move(a));
  }
}

}  // namespace

Expected<BuildPlan> make_plan(const BuildInputs& in) {
  if (!in.recipe) return fail("internal: make_plan without a recipe");
  const Recipe& recipe = *in.recipe;
  if (recipe.repository.empty() && !in.request.src && !in.request.repository) {
    return fail("recipe '" + recipe.name +
                "' builds a project you point at: pass --src DIR (a source tree) or --repo URL");
  }
  BuildPlan plan;
  plan.recipe = recipe.name;
  const std::string ref = in.request.ref.value_or(recipe.default_ref);
  TF_TRY(fe, choose_front_end(in, ref, plan));
  ArchList extra;
  TF_TRY(tc, plan_toolchain(in, plan, extra));
  plan_jobs(in, tc.jobs, plan);
  const std::string key = build_key(recipe.name, in.request.src, in.request.repository);
  plan_folders(in, ref, key, plan);

  // A project that hard-codes its archs gets torchfix as its nvcc: a
  // toolkit folder whose bin/nvcc rewrites each compile (plan_project.hpp).
  plan.nvcc_wrap = plan_nvcc_wrap(in, plan, key, plan.warnings);
  if (plan.nvcc_wrap) plan.files.push_back(nvcc_wrap_file(*plan.nvcc_wrap, plan.log_path));
  plan.compiles_expected = in.project.sources;

  const Expander expand{in, plan,
                        plan.nvcc_wrap ? plan.nvcc_wrap->cuda_home
                                       : std::filesystem::path(plan.toolkit.nvcc).parent_path().parent_path()};
  apply_env(in, planned_vars(in, plan, *fe, extra, expand), plan);
  plan_steps(in, *fe, key, expand, plan);
  return plan;
}

BuildPlan with_jobs(const BuildPlan& plan, int jobs) {
  BuildPlan out = plan;
  out.jobs = std::max(1, jobs);
  const std::string n = std::to_string(out.jobs);
  for (PlanEnvVar& v : out.env) {
    if (v.origin == EnvOrigin::inherited || v.value_template.find("{jobs}") == std::string::npos) continue;
    v.value = replace_all(v.value_template, "{jobs}", n);
    out.child_env[v.name] = v.value;
  }
  for (PlanStep& s : out.steps) {
    for (std::size_t i = 0; i < s.argv.size() && i < s.argv_template.size(); ++i) {
      s.argv[i] = replace_all(s.argv_template[i], "{jobs}", n);
    }
  }
  for (PlanFile& f : out.files) f.content = replace_all(f.content_template, "{jobs}", n);
  return out;
}

}  // namespace torchfix
