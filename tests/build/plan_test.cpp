// Planner on fake inventories: arch list, toolkit and compiler choice, jobs,
// environment, blockers. The recipes and knowledge tables are the shipped ones.
#include "builder/plan.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/linux_only.hpp"
#include "builder/folders.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix {
namespace {

constexpr std::uint64_t k_gib = 1024ull * 1024 * 1024;
const std::filesystem::path k_root = TORCHFIX_SOURCE_DIR;

class Planner : public ::testing::Test {
 protected:
  void SetUp() override {
    auto k = load_knowledge(k_root);
    ASSERT_TRUE(k) << k.error().message;
    m_knowledge = *k;
    auto r = load_recipes(k_root / "recipes/build");
    ASSERT_TRUE(r) << r.error().message;
    m_recipes = *r;
  }

  static Toolkit nvcc(const char* version, std::vector<const char*> archs = {}) {
    Toolkit t;
    t.nvcc = std::string("/usr/local/cuda-") + version + "/bin/nvcc";
    t.version = Version::parse(version);
    for (const char* a : archs) t.archs.push_back(Arch::parse(a).value());
    t.archs_source = archs.empty() ? "" : "nvcc --list-gpu-code";
    return t;
  }
  static HostCompiler compiler(CompilerFamily family, const char* path, const char* version) {
    return {path, "PATH", family, Version::parse(version)};
  }

  BuildInputs inputs(const char* recipe, std::vector<ComputeCapability> gpus) {
    BuildInputs in;
    in.recipe = *find_recipe(m_recipes, recipe);
    in.gpus = std::move(gpus);
    in.toolkits = {nvcc("13.0.88", {"sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_110",
                                    "sm_103", "sm_120", "sm_121"})};
    in.compilers = {compiler(CompilerFamily::gcc, "/usr/bin/g++", "12.2.0"),
                    compiler(CompilerFamily::gcc, "/usr/bin/gcc", "12.2.0")};
    in.resources.cpus = 16;
    in.resources.cpus_source = "affinity 16";
    in.resources.memory_bytes = 125 * k_gib;
    in.resources.memory_source = "MemAvailable 125.0 GiB";
    in.resources.disk_free_bytes = 500 * k_gib;
    in.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/u"}};
    in.knowledge = &m_knowledge;
    in.request.work_dir = "/work/tf";
    in.source.state = SourceState::absent;
    return in;
  }

  static std::string env_of(const BuildPlan& p, const std::string& name) {
    for (const PlanEnvVar& v : p.env) {
      if (v.name == name) return v.value;
    }
    return "<unset>";
  }

  Knowledge m_knowledge;
  std::vector<Recipe> m_recipes;
};

TEST_F(Planner, PytorchReleasePlanOnAGpuServer) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  BuildInputs in = inputs("pytorch", {{9, 0}, {9, 0}, {8, 6}});
  in.toolkits.push_back(nvcc("12.4.131"));
  in.toolkits.push_back(nvcc("12.8.93"));
  in.request.ref = "v2.9.1";
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->front_end, "setuptools");
  EXPECT_EQ(plan->arch_value, "8.6;9.0+PTX");
  EXPECT_EQ(env_of(*plan, "TORCH_CUDA_ARCH_LIST"), "8.6;9.0+PTX");
  EXPECT_EQ(plan->toolkit.version->str(), "13.0.88");
  EXPECT_EQ(plan->compiler.path, "/usr/bin/g++");
  EXPECT_EQ(plan->c_compiler, "/usr/bin/gcc");
  EXPECT_EQ(plan->nvcc_threads, 2);
  // 16 CPUs / 2 nested = 8; 123 GiB / (2.5 GiB x 2 threads x 2 nested) = 12: 8 (conda-forge's choice on 16 vCPU).
  EXPECT_EQ(plan->jobs, 8) << plan->jobs_reason;
  EXPECT_EQ(env_of(*plan, "MAX_JOBS"), "8");
  EXPECT_EQ(env_of(*plan, "CUDA_HOME"), "/usr/local/cuda-13.0.88");
  EXPECT_EQ(env_of(*plan, "CUDAHOSTCXX"), "/usr/bin/g++");
  EXPECT_EQ(env_of(*plan, "USE_NINJA"), "1");
  EXPECT_EQ(env_of(*plan, "TORCH_NVCC_FLAGS"), "-Xfatbin -compress-all --threads 2");
  EXPECT_EQ(env_of(*plan, "PATH"), "/usr/local/cuda-13.0.88/bin:/usr/bin:/bin");
  EXPECT_EQ(plan->child_env.at("HOME"), "/home/u");
  EXPECT_EQ(plan->fetch.action, FetchAction::clone);
  EXPECT_EQ(plan->fetch.ref, "v2.9.1");
  ASSERT_EQ(plan->steps.size(), 2u);
  EXPECT_EQ(plan->steps[1].argv,
            (std::vector<std::string>{"python3", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-v", "-w",
                                      "/work/tf/wheels/pytorch", "/work/tf/pytorch"}));
  EXPECT_TRUE(plan->steps[1].compiles);
  std::vector<std::string> images_seen;
  for (const Arch& a : plan->expected_images) images_seen.push_back(a.name());
  EXPECT_EQ(images_seen, (std::vector<std::string>{"sm_86", "sm_90", "compute_90"}));
  EXPECT_TRUE(plan->runnable());
  EXPECT_EQ(plan->artefacts.at(1).glob, "/work/tf/wheels/pytorch/torch-*.whl");
  EXPECT_EQ(plan->log_path, "/work/tf/logs/pytorch.log");

  auto main_plan = make_plan([&] {
    auto i = in;
    i.request.ref = "main";
    return i;
  }());
  ASSERT_TRUE(main_plan);
  EXPECT_EQ(main_plan->front_end, "scikit-build-core");
  EXPECT_EQ(env_of(*main_plan, "CMAKE_BUILD_PARALLEL_LEVEL"), "8");
  EXPECT_EQ(env_of(*main_plan, "USE_NINJA"), "<unset>");
}

TEST_F(Planner, F9ToolkitTooOldForTheRequestedArchs) {
  BuildInputs in = inputs("cuda-extension", {{8, 6}});
  in.toolkits = {nvcc("12.4.131")};
  in.request.src = "/home/u/proj";
  in.request.arch = {ArchMode::list, "12.0a;9.0;8.9;8.0", std::nullopt};
  auto plan = make_plan(in);
  ASSERT_FALSE(plan);
  const std::string& m = plan.error().message;
  EXPECT_NE(m.find("nvcc 12.4.131"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot compile 12.0a"), std::string::npos) << m;
  EXPECT_NE(m.find("CUDA >= 12.8"), std::string::npos) << m;
  EXPECT_NE(m.find("--arch auto"), std::string::npos) << m;
  // What the GPU needs builds fine with the same toolkit.
  in.request.arch = {};
  auto fixed = make_plan(in);
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->arch_value, "8.6+PTX");
  EXPECT_EQ(fixed->toolkit.version->str(), "12.4.131");
}

TEST_F(Planner, F10HostCompilerTooNewForNvcc) {
  BuildInputs in = inputs("cuda-extension", {{8, 9}});
  in.toolkits = {nvcc("12.5.82")};
  in.compilers = {compiler(CompilerFamily::gcc, "/usr/bin/g++", "14.2.1")};
  in.request.src = "/home/u/proj";
  auto plan = make_plan(in);
  ASSERT_FALSE(plan);
  const std::string& m = plan.error().message;
  EXPECT_NE(m.find("gcc < 14"), std::string::npos) << m;
  EXPECT_NE(m.find("Install gcc 13"), std::string::npos) << m;
  EXPECT_NE(m.find("CUDA >= 12.8"), std::string::npos) << m;
  // With gcc 13 installed beside it, the planner picks it and points every variable at it.
  in.compilers.push_back(compiler(CompilerFamily::gcc, "/usr/bin/g++-13", "13.3.1"));
  in.compilers.push_back(compiler(CompilerFamily::gcc, "/usr/bin/gcc-13", "13.3.1"));
  in.compilers.push_back(compiler(CompilerFamily::clang, "/usr/bin/clang++", "19.1.0"));
  auto fixed = make_plan(in);
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->compiler.path, "/usr/bin/g++-13");
  EXPECT_EQ(env_of(*fixed, "CUDAHOSTCXX"), "/usr/bin/g++-13");
  EXPECT_EQ(env_of(*fixed, "CC"), "/usr/bin/gcc-13");
  EXPECT_EQ(env_of(*fixed, "CXX"), "/usr/bin/g++-13");
}

TEST_F(Planner, ExtensionToolkitMatchesTorchCudaMajor) {
  BuildInputs in = inputs("torchvision", {{9, 0}});
  in.toolkits.push_back(nvcc("12.8.93"));
  in.request.torch_cuda = Version({12, 8});
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->toolkit.version->str(), "12.8.93");
  in.toolkits.pop_back();
  auto none = make_plan(in);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("major differs from torch's CUDA 12.8"), std::string::npos)
      << none.error().message;
}

TEST_F(Planner, FlashAttnSnapsArchsAndBudgetsThreads) {
  BuildInputs in = inputs("flash-attn", {{8, 6}});
  in.resources.cpus = 2;
  in.resources.memory_bytes = 22 * k_gib;
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->arch_variable, "FLASH_ATTN_CUDA_ARCHS");
  EXPECT_EQ(plan->arch_value, "80");
  EXPECT_EQ(env_of(*plan, "FLASH_ATTN_CUDA_ARCHS"), "80");
  EXPECT_EQ(env_of(*plan, "FLASH_ATTENTION_FORCE_BUILD"), "TRUE");
  // FLASH_ATTN_CUDA_ARCHS cannot carry +PTX: sm_80 only, one image, one nvcc thread.
  EXPECT_EQ(plan->nvcc_threads, 1);
  EXPECT_EQ(env_of(*plan, "NVCC_THREADS"), "1");
  EXPECT_EQ(plan->jobs, 2) << plan->jobs_reason;  // min(2 CPUs, (22 - 2 reserve) GiB / 5 GiB) = 2
  in.gpus = {{8, 6}, {9, 0}, {12, 0}};
  auto three = make_plan(in);
  ASSERT_TRUE(three) << three.error().message;
  EXPECT_EQ(three->arch_value, "80;90;120");
  EXPECT_EQ(three->nvcc_threads, 3);
  EXPECT_EQ(three->jobs, 1) << three->jobs_reason;  // 20 GiB / (5 GiB x 3 threads) = 1
  ASSERT_FALSE(plan->warnings.empty());
  EXPECT_NE(plan->warnings[0].find("8.0 kernels for 8.6"), std::string::npos);
  EXPECT_NE(plan->warnings[1].find("cannot ask for PTX"), std::string::npos);
  in.gpus = {{7, 5}};
  auto turing = make_plan(in);
  ASSERT_FALSE(turing);
  EXPECT_NE(turing.error().message.find("no kernels for compute capability 7.5"), std::string::npos);
}

// F7: Jetson Orin (Tegra 8.7) runs only sm_87 SASS. FLASH_ATTN_CUDA_ARCHS
// turns only 80/90/100/110/120 into SASS, so 8.7 goes to nvcc itself through
// NVCC_APPEND_FLAGS, and verification expects sm_87 (it used to plan 80 and
// expect sm_80: the same binary that cannot run on the Orin).
TEST_F(Planner, F7FlashAttnForJetsonOrinTargetsSm87) {
  BuildInputs in = inputs("flash-attn", {});
  in.request.arch = {ArchMode::list, "8.7", std::nullopt};
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(env_of(*plan, "FLASH_ATTN_CUDA_ARCHS"), "87");
  EXPECT_EQ(env_of(*plan, "NVCC_APPEND_FLAGS"), "-gencode arch=compute_87,code=sm_87");
  std::vector<std::string> images_seen;
  for (const Arch& a : plan->expected_images) images_seen.push_back(a.name());
  EXPECT_EQ(images_seen, (std::vector<std::string>{"sm_87"}));
  // A discrete 8.6 still snaps to flash-attn's own 8.0 kernels.
  in.request.arch = {ArchMode::list, "8.6;8.7", std::nullopt};
  auto both = make_plan(in);
  ASSERT_TRUE(both) << both.error().message;
  EXPECT_EQ(env_of(*both, "FLASH_ATTN_CUDA_ARCHS"), "80;87");
  EXPECT_EQ(env_of(*both, "NVCC_APPEND_FLAGS"), "-gencode arch=compute_87,code=sm_87");
}

// F8: vLLM drops archs outside CUDA_SUPPORTED_ARCHS; Pascal is not among them.
TEST_F(Planner, F8VllmRecipeExistsAndRefusesPascalPlainly) {
  BuildInputs in = inputs("vllm", {{8, 9}});
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(env_of(*plan, "TORCH_CUDA_ARCH_LIST"), "8.9+PTX");
  EXPECT_EQ(env_of(*plan, "VLLM_TARGET_DEVICE"), "cuda");
  in.gpus = {{6, 1}};
  auto pascal = make_plan(in);
  ASSERT_FALSE(pascal);
  EXPECT_NE(pascal.error().message.find("does not support this GPU upstream"), std::string::npos)
      << pascal.error().message;
}

// bitsandbytes: CMake's COMPUTE_CAPABILITY on the configure line.
TEST_F(Planner, BitsandbytesPassesComputeCapabilityToCmake) {
  BuildInputs in = inputs("bitsandbytes", {{6, 1}, {8, 6}});
  in.toolkits.push_back(nvcc("12.8.93"));  // sm_61 ends at CUDA 12.9
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_FALSE(plan->steps.empty());
  const auto& configure = plan->steps[0].argv;
  EXPECT_NE(std::ranges::find(configure, "-DCOMPUTE_CAPABILITY=61;86"), configure.end());
  EXPECT_NE(std::ranges::find(configure, "-DCOMPUTE_BACKEND=cuda"), configure.end());
}

// F6: causal-conv1d has no arch switch; the arch goes through NVCC_APPEND_FLAGS
// and the prebuilt-wheel download is switched off.
TEST_F(Planner, F6CausalConv1dForcesTheBuildAndAppendsTheArch) {
  BuildInputs in = inputs("causal-conv1d", {{10, 0}});
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(env_of(*plan, "CAUSAL_CONV1D_FORCE_BUILD"), "TRUE");
  EXPECT_EQ(env_of(*plan, "NVCC_APPEND_FLAGS"),
            "-gencode arch=compute_100,code=sm_100 -gencode arch=compute_100,code=compute_100");
}

// sm_70 ends at CUDA 12.9: the planner says so instead of "Install CUDA >= 1.0".
TEST_F(Planner, ArchsDroppedByNewToolkitsNameTheLastCuda) {
  BuildInputs in = inputs("pytorch", {});
  in.request.arch = {ArchMode::list, "7.0", std::nullopt};
  auto plan = make_plan(in);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("Install CUDA <= 12.9"), std::string::npos) << plan.error().message;
  EXPECT_EQ(plan.error().message.find("1.0"), std::string::npos) << plan.error().message;
}

TEST_F(Planner, JobsFollowMemoryCpusAndRequests) {
  const Recipe& pytorch = **find_recipe(m_recipes, "pytorch");
  ArchList one = arch_list_for_gpus({{8, 6}}, PtxPolicy::none);
  Resources small{2, "affinity 2", 8 * k_gib, "MemAvailable 8.0 GiB", std::nullopt, ""};
  JobsDecision d = plan_jobs(small, pytorch, one, std::nullopt);
  EXPECT_EQ(d.jobs, 1);
  EXPECT_EQ(d.nvcc_threads, 1);
  EXPECT_EQ(d.job_memory_bytes, 5 * k_gib);  // 2.5 GiB x 1 thread x 2 nested
  Resources big{64, "affinity 64", 500 * k_gib, "MemAvailable", std::nullopt, ""};
  EXPECT_EQ(plan_jobs(big, pytorch, one, std::nullopt).jobs, 32);  // CPU-bound: 64 / 2 nested
  Resources tight{64, "affinity 64", 24 * k_gib, "cgroup memory.max", std::nullopt, ""};
  EXPECT_EQ(plan_jobs(tight, pytorch, one, std::nullopt).jobs, 4);  // (24 - 2.4) / 5 = 4
  JobsDecision forced = plan_jobs(tight, pytorch, one, 32);
  EXPECT_EQ(forced.jobs, 32);
  ASSERT_TRUE(forced.warning);
  EXPECT_NE(forced.warning->find("exceeds"), std::string::npos);
  Resources tiny{4, "affinity 4", 3 * k_gib, "MemAvailable", std::nullopt, ""};
  JobsDecision starving = plan_jobs(tiny, pytorch, one, std::nullopt);
  EXPECT_EQ(starving.jobs, 1);
  ASSERT_TRUE(starving.warning);
  EXPECT_NE(starving.warning->find("swap"), std::string::npos);
  Resources unknown{6, "affinity 6", std::nullopt, "", std::nullopt, ""};
  EXPECT_EQ(plan_jobs(unknown, pytorch, one, std::nullopt).jobs, 3);
}

TEST_F(Planner, DirtyTreeAndDiskBlockUnlessForced) {
  BuildInputs in = inputs("pytorch", {{8, 6}});
  in.source = {SourceState::dirty, "abc", "2 changed files: setup.py, version.txt", {"setup.py"}};
  in.resources.disk_free_bytes = 10 * k_gib;
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->runnable());
  EXPECT_EQ(plan->fetch.action, FetchAction::refuse_dirty);
  ASSERT_EQ(plan->blockers.size(), 2u);
  EXPECT_NE(plan->blockers[0].find("--force"), std::string::npos);
  EXPECT_NE(plan->blockers[1].find("free disk 10.0 GiB"), std::string::npos) << plan->blockers[1];
  in.request.force = true;
  auto forced = make_plan(in);
  ASSERT_TRUE(forced);
  EXPECT_TRUE(forced->runnable());
  EXPECT_EQ(forced->fetch.action, FetchAction::use_as_is);
  in.request.force = false;
  in.source = {SourceState::clean, "abc", "clean", {}};
  in.resources.disk_free_bytes = 500 * k_gib;
  auto clean = make_plan(in);
  ASSERT_TRUE(clean);
  EXPECT_EQ(clean->fetch.action, FetchAction::checkout);
  in.source = {SourceState::partial, std::nullopt, "submodules not checked out: third_party/nccl", {}};
  EXPECT_EQ(make_plan(in)->fetch.action, FetchAction::resume);
}

TEST_F(Planner, EnvironmentShowsOverridesAndInheritedVariables) {
  BuildInputs in = inputs("pytorch", {{12, 0}});
  in.env["TORCH_CUDA_ARCH_LIST"] = "All";
  in.env["USE_DISTRIBUTED"] = "0";
  in.env["EDITOR"] = "vi";
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  bool overridden = false;
  bool inherited = false;
  for (const PlanEnvVar& v : plan->env) {
    if (v.name == "TORCH_CUDA_ARCH_LIST")
      overridden = v.origin == EnvOrigin::overrides && v.why.find("=All") != std::string::npos;
    if (v.name == "USE_DISTRIBUTED") inherited = v.origin == EnvOrigin::inherited;
    EXPECT_NE(v.name, "EDITOR");
  }
  EXPECT_TRUE(overridden);
  EXPECT_TRUE(inherited);
  EXPECT_EQ(plan->child_env.at("TORCH_CUDA_ARCH_LIST"), "12.0+PTX");
  EXPECT_EQ(plan->child_env.at("EDITOR"), "vi");
}

TEST_F(Planner, NoGpuPytorchFallsBackToTheOfficialWheelList) {
  BuildInputs in = inputs("pytorch", {});
  in.request.ref = "v2.9.1";
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->arch_value, "7.5;8.0;8.6;9.0;10.0;12.0+PTX");  // the cu130 wheel of 2.9 (recipes/torch-wheels.toml)
  ASSERT_FALSE(plan->warnings.empty());
  EXPECT_NE(plan->warnings.back().find("cu130"), std::string::npos) << plan->warnings.back();
  EXPECT_NE(plan->warnings.back().find("--gpu"), std::string::npos);
}

TEST_F(Planner, ErrorsAndRedaction) {
  BuildInputs in = inputs("torchvision", {});
  auto no_gpu = make_plan(in);
  ASSERT_FALSE(no_gpu);
  EXPECT_NE(no_gpu.error().message.find("--gpu"), std::string::npos);
  in = inputs("pytorch", {});
  in.request.arch = {ArchMode::list, "Common", std::nullopt};
  ASSERT_FALSE(make_plan(in));
  in.request.arch = {ArchMode::list, "8.6;12.0", PtxPolicy::none};
  in.request.repository = "https://user:tok3n@example.com/pytorch.git";
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->arch_value, "8.6;12.0");
  EXPECT_EQ(plan->fetch.url, "https://***@example.com/pytorch.git");
  const std::string text = render_plan_text(*plan);
  const std::string json = render_plan_json(*plan);
  EXPECT_EQ(text.find("tok3n"), std::string::npos);
  EXPECT_EQ(json.find("tok3n"), std::string::npos);
  EXPECT_NE(text.find("TORCH_CUDA_ARCH_LIST=8.6;12.0"), std::string::npos);
  auto parsed = nlohmann::json::parse(json);
  EXPECT_EQ(parsed["arch"]["value"], "8.6;12.0");
  EXPECT_EQ(parsed["jobs"]["value"], plan->jobs);
  EXPECT_EQ(parsed["steps"].size(), plan->steps.size());
  BuildInputs ext = inputs("cuda-extension", {{8, 6}});
  auto no_src = make_plan(ext);
  ASSERT_FALSE(no_src);
  EXPECT_NE(no_src.error().message.find("--src"), std::string::npos);
}

TEST_F(Planner, CmakeProjectFromSrcBuildsOutsideTheTree) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  BuildInputs in = inputs("cuda-extension", {{8, 6}, {12, 0}});
  in.request.src = "/home/u/kernels";
  in.source = {SourceState::not_git, std::nullopt, "not a git checkout", {"CMakeLists.txt", "src"}};
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->front_end, "cmake");
  EXPECT_TRUE(plan->runnable()) << "a --src tree is used as it is";
  EXPECT_EQ(plan->fetch.action, FetchAction::use_as_is);
  const std::string key = build_key("cuda-extension", std::filesystem::path("/home/u/kernels"), std::nullopt);
  EXPECT_TRUE(key.starts_with("cuda-extension-kernels-")) << key;
  EXPECT_EQ(plan->build_dir, "/work/tf/build-" + key);
  EXPECT_EQ(plan->wheel_dir, "/work/tf/wheels/" + key);
  EXPECT_EQ(plan->log_path, "/work/tf/logs/" + key + ".log");
  EXPECT_EQ(env_of(*plan, "CUDAARCHS"), "86-real;120");
  EXPECT_EQ(plan->steps.at(0).argv.back(), "-DCMAKE_CUDA_ARCHITECTURES=86-real;120");
  EXPECT_EQ(plan->steps.at(1).argv,
            (std::vector<std::string>{"cmake", "--build", "/work/tf/build-" + key, "-j", std::to_string(plan->jobs)}));

  // Another project in a folder of the same name gets its own folders.
  in.request.src = "/home/v/kernels";
  auto other = make_plan(in);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_NE(other->build_dir, plan->build_dir);
  EXPECT_NE(other->wheel_dir, plan->wheel_dir);
  EXPECT_NE(other->log_path, plan->log_path);
}

TEST_F(Planner, TwoRepositoriesOfOneRecipeAreTwoClones) {
  BuildInputs in = inputs("cuda-extension", {{8, 6}});
  in.request.repository = "https://github.com/a/kernels.git";
  auto a = make_plan(in);
  ASSERT_TRUE(a) << a.error().message;
  in.request.repository = "https://gitlab.com/b/kernels";
  auto b = make_plan(in);
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_TRUE(a->src_dir.filename().string().starts_with("cuda-extension-kernels-")) << a->src_dir;
  EXPECT_NE(a->src_dir, b->src_dir);
  EXPECT_NE(a->wheel_dir, b->wheel_dir);
  EXPECT_EQ(a->src_dir, source_dir("/work/tf", "cuda-extension", std::nullopt, "https://github.com/a/kernels.git"));
}

}  // namespace
}  // namespace torchfix
