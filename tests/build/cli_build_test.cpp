// The torchfix binary: `build --dry-run` and `recipes`, as a user runs them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace torchfix {
namespace {

ProcessResult run_torchfix(std::vector<std::string> args, Environment env = read_process_environment()) {
  SystemProcessRunner runner;
  Command c{TORCHFIX_BINARY, std::move(args), std::move(env), "", std::chrono::seconds(120)};
  auto r = runner.run(c);
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : ProcessResult{};
}

TEST(CliBuild, DryRunJsonForAnAmpereGpu) {
  testing::TempDir tmp;
  auto r = run_torchfix({"build", "pytorch", "--ref", "v2.9.1", "--dry-run", "--json", "--gpu", "sm_86", "--work-dir",
                         tmp.path().string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto plan = nlohmann::json::parse(r.out);
  EXPECT_EQ(plan["recipe"], "pytorch");
  EXPECT_EQ(plan["front_end"]["name"], "setuptools");
  EXPECT_EQ(plan["arch"]["value"], "8.6+PTX");
  EXPECT_EQ(plan["source"]["action"], "clone");
  EXPECT_EQ(plan["source"]["dir"], (tmp / "pytorch").string());
  EXPECT_GE(plan["jobs"]["value"].get<int>(), 1);
  EXPECT_FALSE(std::filesystem::exists(tmp / "pytorch")) << "--dry-run changes nothing";
}

TEST(CliBuild, DryRunRefusesAutoAndExplainsMalformedInput) {
  auto r = run_torchfix({"build", "pytorch", "--dry-run", "--arch", "All"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
  r = run_torchfix({"build", "no-such-recipe", "--dry-run", "--gpu", "sm_86"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("flash-attn"), std::string::npos) << r.err;
}

TEST(CliBuild, BuildsAndVerifiesACudaProject) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  testing::TempDir tmp;
  testing::write_file(
      tmp / "proj/CMakeLists.txt",
      "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX CUDA)\nadd_library(p SHARED a.cu)\n");
  testing::write_file(tmp / "proj/a.cu", "__global__ void k(float* x) { x[0] = 1; }\n");
  Environment env = read_process_environment();
  env["PATH"] = "/usr/local/cuda/bin:" + env["PATH"];
  auto r = run_torchfix(
      {"build", "--src", (tmp / "proj").string(), "--gpu", "sm_86", "--work-dir", (tmp / "work").string()}, env);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("libp.so: sm_86 compute_86"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("built and verified"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("TORCH_CUDA_ARCH_LIST=8.6+PTX"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::exists(tmp / "work/logs/cuda-extension.log"));
}

TEST(CliBuild, RecipesListAndAMalformedRecipe) {
  auto r = run_torchfix({"recipes", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out).size(), 6u);
  testing::TempDir tmp;
  std::filesystem::copy(std::filesystem::path(TORCHFIX_SOURCE_DIR) / "recipes", tmp / "recipes",
                        std::filesystem::copy_options::recursive);
  testing::write_file(tmp / "recipes/build/zz-broken.toml", "name = \"broken\"\nkind = \"project\"\narch_format = 7\n");
  Environment env = read_process_environment();
  env["TORCHFIX_DATA_DIR"] = tmp.path().string();
  r = run_torchfix({"recipes"}, env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("zz-broken.toml:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace torchfix
