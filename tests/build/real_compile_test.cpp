// A small CUDA project generated here (several .cu files, CMake + ninja),
// planned for 8.6 and 12.0 GPUs and built through the same plan/execute path
// as any recipe, with the real nvcc; the archs in the produced library are
// read back with the fatbin reader.
#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "binary/reader.hpp"
#include "builder/execute.hpp"
#include "builder/verify.hpp"
#include "test_support.hpp"
#include "toolchain.hpp"

namespace torchfix {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

TEST(RealCompile, CudaProjectFor86And120HasExactlyThoseImages) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  TempDir tmp;
  const auto src = tmp / "kernels";
  write_file(src / "CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.20)\nproject(kernels LANGUAGES CXX CUDA)\n"
             "add_library(kernels SHARED scale.cu add.cu reduce.cu host.cpp)\n");
  write_file(src / "scale.cu", "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n");
  write_file(src / "add.cu", "__global__ void add(float* x, const float* y) { x[threadIdx.x] += y[threadIdx.x]; }\n");
  write_file(src / "reduce.cu",
             "__global__ void reduce(const float* x, float* out) { atomicAdd(out, x[threadIdx.x]); }\n");
  write_file(src / "host.cpp", "int kernels_version() { return 1; }\n");

  const testing::Shipped shipped = testing::load_shipped();
  BuildInputs in = testing::local_extension_inputs(*toolchain, shipped, src, tmp / "work");
  in.gpus = {{12, 0}, {8, 6}};  // --arch auto over an RTX 3090 and an RTX 5090
  in.resources = read_resources("/", affinity_cpu_count(), tmp.path());
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->arch_value, "8.6;12.0+PTX");
  EXPECT_EQ(plan->child_env.at("CUDAARCHS"), "86-real;120");

  BuildObserver quiet;
  auto outcome = execute_plan(*plan, quiet);
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_EQ(outcome->status, BuildStatus::succeeded) << outcome->message << "\n" << read_file(plan->log_path);
  ASSERT_TRUE(outcome->verify);
  ASSERT_EQ(outcome->verify->libraries.size(), 1u);
  const LibraryCheck& lib = outcome->verify->libraries[0];
  EXPECT_EQ(lib.path, (plan->build_dir / "libkernels.so").string());
  std::vector<std::string> found;
  for (const Arch& a : lib.images) found.push_back(a.name());
  EXPECT_EQ(found, (std::vector<std::string>{"sm_86", "sm_120", "compute_120"}));
  EXPECT_EQ(lib.modules, 3);  // one fatbin per .cu file
  EXPECT_TRUE(lib.missing.empty());
  // The same library read directly: every module carries both SASS images.
  const auto kernels = binary::read_kernels_file(plan->build_dir / "libkernels.so");
  ASSERT_TRUE(kernels.error.empty()) << kernels.error;
  for (const auto& module : kernels.modules) EXPECT_EQ(module.entries.size(), 3u);
  // The source tree is untouched: the build went to work_dir.
  EXPECT_FALSE(std::filesystem::exists(src / "build"));

  // A plan that asks for an image the build does not produce is caught by verification.
  BuildPlan wrong = *plan;
  wrong.expected_images.push_back(Arch::parse("sm_90").value());
  VerifyResult v = verify_outputs(wrong);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.problems[0].find("missing sm_90"), std::string::npos) << v.problems[0];
}

// F7: a flash-attn library built the old way (FLASH_ATTN_CUDA_ARCHS=80, sm_80
// only) fails verification of a plan for a Jetson Orin (8.7); compiled with
// the plan's own NVCC_APPEND_FLAGS it carries sm_87 and passes. Real nvcc.
TEST(RealCompile, VerificationFailsWhenTheAskedArchIsMissing) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  TempDir tmp;
  const auto src = tmp / "flash-attention";
  write_file(src / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n");
  const testing::Shipped shipped = testing::load_shipped();
  BuildInputs in = testing::local_extension_inputs(*toolchain, shipped, src, tmp / "work");
  in.recipe = *find_recipe(shipped.recipes, "flash-attn");
  in.request.arch = {ArchMode::list, "8.7", std::nullopt};
  in.resources = read_resources("/", affinity_cpu_count(), tmp.path());
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->child_env.at("NVCC_APPEND_FLAGS"), "-gencode arch=compute_87,code=sm_87");

  // What setup.py runs for FLASH_ATTN_CUDA_ARCHS=80, with and without the plan's environment.
  const auto compile = [&](const Environment& env) {
    StreamCommand c;
    c.program = toolchain->toolkit.nvcc;
    c.args = {"-shared",
              "-Xcompiler",
              "-fPIC",
              "-gencode",
              "arch=compute_80,code=sm_80",
              "k.cu",
              "-o",
              "build/lib.linux-x86_64-cpython-312/flash_attn_2_cuda.cpython-312-x86_64-linux-gnu.so"};
    c.env = env;
    c.working_directory = src.string();
    c.log_path = (tmp / "nvcc.log").string();
    std::filesystem::create_directories(src / "build/lib.linux-x86_64-cpython-312");
    auto r = run_streaming(c);
    ASSERT_TRUE(r && r->succeeded()) << read_file(tmp / "nvcc.log");
  };
  Environment plain = read_process_environment();
  plain.erase("NVCC_APPEND_FLAGS");
  compile(plain);
  const VerifyResult old_way = verify_outputs(*plan);
  ASSERT_FALSE(old_way.ok());
  std::string problems;
  for (const auto& p : old_way.problems) problems += p + "\n";
  EXPECT_NE(problems.find("sm_87"), std::string::npos) << problems;

  compile(plan->child_env);
  const VerifyResult planned = verify_outputs(*plan);
  EXPECT_TRUE(planned.ok()) << (planned.problems.empty() ? "" : planned.problems[0]);
  ASSERT_EQ(planned.libraries.size(), 1u);
  std::vector<std::string> found;
  for (const Arch& a : planned.libraries[0].images) found.push_back(a.name());
  EXPECT_EQ(found, (std::vector<std::string>{"sm_80", "sm_87"}));
}

}  // namespace
}  // namespace torchfix
