// Tests of variable selection: pure function of a Snapshot, the real
// knowledge tables (recipes/) and the Triton ptxas table.
#include "shellenv/selection.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "core/situation/situation.hpp"
#include "probe/knowledge_files.hpp"
#include "shellenv/rc_file.hpp"

namespace torchfix::shellenv {
namespace {

class SelectionTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto k = load_knowledge(TORCHFIX_SOURCE_DIR);
    ASSERT_TRUE(k) << k.error().message;
    s_knowledge = new Knowledge(std::move(*k));
  }

  // The toolchain decision doctor and build make for `s` (core/situation/toolchain.hpp).
  SelectionInputs inputs(const Snapshot& s) const {
    ToolchainRequest request;
    request.recipe = s_knowledge->build_recipe(k_generic_recipe);
    return {s_knowledge, decide_toolchain(situate(s, *s_knowledge).toolchain_facts(), *s_knowledge, request)};
  }

  static Toolkit toolkit(const std::string& root, const std::string& version) {
    return {root + "/bin/nvcc", "PATH", Version::parse(version), {}, "table"};
  }
  static Gpu gpu(int index, const std::string& name, ComputeCapability cc) {
    return {index, name, cc, std::nullopt, "nvml"};
  }
  static PythonEnv python_with_torch(const std::string& version, const std::string& cuda, const std::string& flags) {
    PythonEnv env;
    env.interpreter = "/usr/bin/python3";
    TorchBuild torch;
    torch.version = version;
    torch.cuda = cuda;
    torch.arch_flags = parse_arch_flags(flags);
    env.torch = torch;
    return env;
  }
  static const EnvVar* find(const std::vector<EnvVar>& vars, std::string_view name) {
    for (const EnvVar& v : vars) {
      if (v.name == name) return &v;
    }
    return nullptr;
  }

  static inline Knowledge* s_knowledge = nullptr;
};

TEST_F(SelectionTest, MixedGpusGetToolkitAndArchList) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  Snapshot s;
  s.gpus = {gpu(0, "NVIDIA RTX A6000", {8, 6}), gpu(1, "NVIDIA GeForce RTX 5090", {12, 0})};
  s.toolkits = {toolkit("/usr/local/cuda-12.6", "12.6.85"), toolkit("/usr/local/cuda-12.8", "12.8.93")};
  s.pythons = {python_with_torch("2.7.1+cu128", "12.8", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120")};
  const auto vars = select_variables(s, inputs(s), PurposeFilter::all);
  ASSERT_TRUE(find(vars, "CUDA_HOME"));
  EXPECT_EQ(find(vars, "CUDA_HOME")->value, "/usr/local/cuda-12.8");
  ASSERT_TRUE(find(vars, "PATH"));
  EXPECT_EQ(find(vars, "PATH")->value, "/usr/local/cuda-12.8/bin");
  EXPECT_EQ(find(vars, "PATH")->action, VarAction::prepend);
  ASSERT_TRUE(find(vars, "TORCH_CUDA_ARCH_LIST"));
  EXPECT_EQ(find(vars, "TORCH_CUDA_ARCH_LIST")->value, "8.6;12.0+PTX");
  EXPECT_NE(find(vars, "TORCH_CUDA_ARCH_LIST")->reason.find("RTX 5090 (12.0)"), std::string::npos);
  // Native SASS for both GPUs: no JIT cache, no LD_LIBRARY_PATH, no compiler override.
  EXPECT_FALSE(find(vars, "CUDA_CACHE_MAXSIZE"));
  EXPECT_FALSE(find(vars, "LD_LIBRARY_PATH"));
  EXPECT_FALSE(find(vars, "CUDAHOSTCXX"));
  for (const EnvVar& v : vars) EXPECT_FALSE(v.reason.empty()) << v.name;
}

TEST_F(SelectionTest, ToolkitMatchingTorchCudaMajorWinsOverNewer) {
  Snapshot s;
  s.gpus = {gpu(0, "NVIDIA H100", {9, 0})};
  s.toolkits = {toolkit("/usr/local/cuda-13.0", "13.0.88"), toolkit("/usr/local/cuda-12.8", "12.8.93")};
  s.pythons = {python_with_torch("2.7.1+cu128", "12.8", "sm_90")};
  EXPECT_EQ(find(select_variables(s, inputs(s), PurposeFilter::build), "CUDA_HOME")->value, "/usr/local/cuda-12.8");
  s.pythons.clear();
  EXPECT_EQ(find(select_variables(s, inputs(s), PurposeFilter::build), "CUDA_HOME")->value, "/usr/local/cuda-13.0");
}

TEST_F(SelectionTest, Gb10WithNvcc128CompilesSm120) {
  Snapshot s;
  s.gpus = {gpu(0, "NVIDIA GB10", {12, 1})};
  s.toolkits = {toolkit("/usr/local/cuda-12.8", "12.8.93")};
  const auto vars = select_variables(s, inputs(s), PurposeFilter::build);
  ASSERT_TRUE(find(vars, "TORCH_CUDA_ARCH_LIST"));
  EXPECT_EQ(find(vars, "TORCH_CUDA_ARCH_LIST")->value, "12.0+PTX");
  EXPECT_NE(find(vars, "TORCH_CUDA_ARCH_LIST")->reason.find("no sm_121"), std::string::npos);
}

TEST_F(SelectionTest, TooNewGccGetsHostCompilerFromBounds) {
  Snapshot s;
  s.gpus = {gpu(0, "NVIDIA GeForce RTX 3090", {8, 6})};
  s.toolkits = {toolkit("/usr/local/cuda-12.6", "12.6.85")};
  s.compilers = {{"/usr/bin/g++", "PATH", CompilerFamily::gcc, Version::parse("14.2.0")},
                 {"/usr/bin/g++-12", "g++-12", CompilerFamily::gcc, Version::parse("12.3.0")},
                 {"/usr/bin/gcc-12", "gcc-12", CompilerFamily::gcc, Version::parse("12.3.0")},
                 {"/usr/bin/gcc-13", "gcc-13", CompilerFamily::gcc, Version::parse("13.3.0")}};
  const auto vars = select_variables(s, inputs(s), PurposeFilter::build);
  ASSERT_TRUE(find(vars, "CUDAHOSTCXX"));
  // gcc-13 has no g++-13 beside it: the newest C++ compiler that exists is g++-12.
  EXPECT_EQ(find(vars, "CUDAHOSTCXX")->value, "/usr/bin/g++-12");
  EXPECT_EQ(find(vars, "CXX")->value, "/usr/bin/g++-12");
  EXPECT_EQ(find(vars, "CC")->value, "/usr/bin/gcc-12");
  EXPECT_NE(find(vars, "CC")->reason.find("gcc < 14"), std::string::npos) << find(vars, "CC")->reason;
  // In bounds: nothing to override.
  s.compilers = {{"/usr/bin/g++", "PATH", CompilerFamily::gcc, Version::parse("13.1.0")}};
  EXPECT_FALSE(find(select_variables(s, inputs(s), PurposeFilter::build), "CUDAHOSTCXX"));
}

TEST_F(SelectionTest, PtxOnlyReachSetsJitCache) {
  Snapshot s;
  s.gpus = {gpu(0, "NVIDIA H100", {9, 0})};
  s.pythons = {python_with_torch("2.1.0+cu118", "11.8", "sm_80 sm_86 compute_86")};
  const auto vars = select_variables(s, inputs(s), PurposeFilter::runtime);
  ASSERT_TRUE(find(vars, "CUDA_CACHE_MAXSIZE"));
  EXPECT_EQ(find(vars, "CUDA_CACHE_MAXSIZE")->value, "4294967296");
  EXPECT_EQ(find(vars, "CUDA_CACHE_MAXSIZE")->purpose, Purpose::runtime);
  // A build-only snippet leaves it out.
  EXPECT_FALSE(find(select_variables(s, inputs(s), PurposeFilter::build), "CUDA_CACHE_MAXSIZE"));
}

TEST_F(SelectionTest, Gb10WithTriton35GetsTritonPtxasPath) {
  Snapshot s;
  s.gpus = {gpu(0, "NVIDIA GB10", {12, 1})};
  s.toolkits = {toolkit("/usr/local/cuda-13.0", "13.0.88")};
  PythonEnv env = python_with_torch("2.9.0+cu130", "13.0", "sm_120 compute_120");
  env.distributions = {{"pytorch-triton", "3.5.0+git7416ffcb"}};
  s.pythons = {env};
  const auto vars = select_variables(s, inputs(s), PurposeFilter::runtime);
  ASSERT_TRUE(find(vars, "TRITON_PTXAS_PATH"));
  EXPECT_EQ(find(vars, "TRITON_PTXAS_PATH")->value, "/usr/local/cuda-13.0/bin/ptxas");
  EXPECT_NE(find(vars, "TRITON_PTXAS_PATH")->reason.find("sm_121a"), std::string::npos);
  // Triton 3.6 bundles a Blackwell ptxas (12.9) that knows sm_121a.
  s.pythons[0].distributions = {{"triton", "3.6.0"}};
  EXPECT_FALSE(find(select_variables(s, inputs(s), PurposeFilter::runtime), "TRITON_PTXAS_PATH"));
  EXPECT_FALSE(find(select_variables(s, inputs(s), PurposeFilter::runtime), "TRITON_PTXAS_BLACKWELL_PATH"));
}

TEST_F(SelectionTest, ThorWithTriton36NeedsBlackwellPtxasOverride) {
  Snapshot s;
  s.gpus = {gpu(0, "NVIDIA Thor", {11, 0})};
  s.toolkits = {toolkit("/usr/local/cuda-13.0", "13.0.48")};
  PythonEnv env;
  env.interpreter = "/usr/bin/python3";
  env.distributions = {{"triton", "3.6.0"}};
  s.pythons = {env};
  auto vars = select_variables(s, inputs(s), PurposeFilter::runtime);
  ASSERT_TRUE(find(vars, "TRITON_PTXAS_BLACKWELL_PATH"));
  EXPECT_FALSE(find(vars, "TRITON_PTXAS_PATH"));
  // Without a toolkit new enough there is nothing to point at.
  s.toolkits = {toolkit("/usr/local/cuda-12.9", "12.9.86")};
  EXPECT_FALSE(find(select_variables(s, inputs(s), PurposeFilter::runtime), "TRITON_PTXAS_BLACKWELL_PATH"));
  // Triton 3.7 bundles 13.1 for Blackwell and Thor.
  s.toolkits = {toolkit("/usr/local/cuda-13.0", "13.0.48")};
  s.pythons[0].distributions = {{"triton", "3.7.1"}};
  EXPECT_TRUE(select_variables(s, inputs(s), PurposeFilter::runtime).empty());
}

TEST_F(SelectionTest, Wsl2WithoutLibcudaGetsLdLibraryPathOnly) {
  Snapshot s;
  s.platform.wsl2 = true;
  auto vars = select_variables(s, inputs(s), PurposeFilter::all);
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_EQ(vars[0].name, "LD_LIBRARY_PATH");
  EXPECT_EQ(vars[0].value, "/usr/lib/wsl/lib");
  s.platform.libcuda_loadable = true;
  EXPECT_TRUE(select_variables(s, inputs(s), PurposeFilter::all).empty());
}

TEST_F(SelectionTest, JobsComeFromTheToolchainDecision) {
  Snapshot s;
  s.platform.cpus = 6;
  s.platform.memory_available_bytes = 64ull << 30;
  auto vars = select_variables(s, inputs(s), PurposeFilter::build);
  ASSERT_TRUE(find(vars, "MAX_JOBS") && find(vars, "NVCC_THREADS"));
  EXPECT_EQ(find(vars, "MAX_JOBS")->value, "6");
  EXPECT_EQ(find(vars, "NVCC_THREADS")->value, "1");
  EXPECT_TRUE(select_variables(s, inputs(s), PurposeFilter::runtime).empty());
}

TEST_F(SelectionTest, TritonTableRejectsRowsWithoutSource) {
  auto rows = parse_knowledge({{"t.toml", "[[triton]]\nmin = \"3.5\"\nmax = \"3.5\"\nptxas = \"12.8\"\n"}});
  ASSERT_FALSE(rows);
  EXPECT_NE(rows.error().message.find("source"), std::string::npos);
  EXPECT_FALSE(s_knowledge->triton_ptxas("2.0.0"));  // older than the first row (2.1)
  EXPECT_EQ(s_knowledge->triton_ptxas("3.4.0")->ptxas.str(), "12.8.93");
  EXPECT_EQ(s_knowledge->triton_ptxas("3.9.0")->ptxas_blackwell->str(), "13.1.80");
}

}  // namespace
}  // namespace torchfix::shellenv
