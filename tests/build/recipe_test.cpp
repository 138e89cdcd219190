#include "core/facts/recipe.hpp"
#include "probe/knowledge_files.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace torchfix {
namespace {

const std::filesystem::path k_recipes = std::filesystem::path(TORCHFIX_SOURCE_DIR) / "recipes/build";

std::string minimal(const std::string& extra = "",
                    const std::string& step_argv = R"(["{python}", "-m", "pip", "wheel", "{src}"])") {
  return R"(name = "demo"
description = "demo"
kind = "extension"
source = "test"
arch_variable = "TORCH_CUDA_ARCH_LIST"
arch_format = "torch"
jobs_variable = "MAX_JOBS"
)" + extra +
         R"(
[memory]
per_job_mib = 1000
source = "test"

[[front_end]]
name = "pip"
source = "test"

[[front_end.step]]
name = "wheel"
argv = )" +
         step_argv + "\n";
}

std::string error_of(const std::string& text) {
  auto r = parse_recipe(text, "demo.toml");
  EXPECT_FALSE(r);
  return r ? std::string{} : r.error().message;
}

TEST(Recipes, ShippedRecipesAllLoad) {
  auto recipes = load_recipes(k_recipes);
  ASSERT_TRUE(recipes) << recipes.error().message;
  std::vector<std::string> names;
  for (const Recipe& r : *recipes) names.push_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bitsandbytes", "causal-conv1d", "cuda-extension", "flash-attn",
                                             "mamba-ssm", "mmcv-full", "pytorch", "torchvision", "vllm", "xformers"}));
  const Recipe* pytorch = *find_recipe(*recipes, "pytorch");
  EXPECT_EQ(pytorch->kind, RecipeKind::project);
  EXPECT_TRUE(pytorch->submodules);
  EXPECT_EQ(pytorch->front_end_for(Version({2, 9, 1}))->name, "setuptools");
  EXPECT_EQ(pytorch->front_end_for(Version({2, 13, 0}))->name, "setuptools");
  EXPECT_EQ(pytorch->front_end_for(Version({2, 14, 0}))->name, "scikit-build-core");
  EXPECT_EQ(pytorch->front_end_for(std::nullopt)->name, "scikit-build-core");
  const Recipe* fa = *find_recipe(*recipes, "flash-attn");
  EXPECT_EQ(fa->arch_format, ArchFormat::flash_attn);
  EXPECT_EQ(fa->arch_variable, "FLASH_ATTN_CUDA_ARCHS");
  EXPECT_EQ(fa->nvcc_threads_variable, "NVCC_THREADS");
  EXPECT_EQ(fa->job_memory_mib, 5120u);
  const Recipe* ext = *find_recipe(*recipes, "cuda-extension");
  EXPECT_TRUE(ext->repository.empty());
  EXPECT_EQ(ext->front_end_for(std::nullopt, {"CMakeLists.txt", "src"})->name, "cmake");
  EXPECT_EQ(ext->front_end_for(std::nullopt, {"setup.py", "CMakeLists.txt"})->name, "pip");
  for (const Recipe& r : *recipes) {
    EXPECT_FALSE(r.source.empty()) << r.name;
    EXPECT_FALSE(r.memory_source.empty()) << r.name;
    for (const RecipeEnv& e : r.env) EXPECT_FALSE(e.source.empty()) << r.name << " " << e.name;
  }
  auto unknown = find_recipe(*recipes, "tensorflow");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("flash-attn"), std::string::npos);
}

TEST(Recipes, MinimalRecipeParses) {
  auto r = parse_recipe(minimal(), "demo.toml");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->job_memory_mib, 1000u);
  EXPECT_EQ(r->nested_parallelism, 1);
  EXPECT_EQ(r->front_ends.at(0).steps.at(0).argv.at(0), "{python}");
}

TEST(Recipes, MalformedRecipesNameFileLineAndProblem) {
  // TOML syntax error on line 2.
  std::string m = error_of("name = \"x\"\ndescription = \n");
  EXPECT_NE(m.find("demo.toml:2"), std::string::npos) << m;
  // A field missing.
  m = error_of(minimal().replace(minimal().find("jobs_variable"), 26, ""));
  EXPECT_NE(m.find("demo.toml:"), std::string::npos) << m;
  EXPECT_NE(m.find("jobs_variable"), std::string::npos) << m;
  // Unknown arch format, with its line (line 6).
  std::string bad_format = minimal();
  bad_format.replace(bad_format.find("\"torch\""), 7, "\"nvcc\"");
  m = error_of(bad_format);
  EXPECT_NE(m.find("demo.toml:6"), std::string::npos) << m;
  EXPECT_NE(m.find("'nvcc'"), std::string::npos) << m;
  // A typo in a placeholder.
  m = error_of(minimal("", R"(["{pyhton}", "setup.py"])"));
  EXPECT_NE(m.find("{pyhton}"), std::string::npos) << m;
  EXPECT_NE(m.find("demo.toml:"), std::string::npos) << m;
  // An env fact without its source.
  m = error_of(minimal("[[env]]\nname = \"FORCE_CUDA\"\nvalue = \"1\"\n"));
  EXPECT_NE(m.find("'source'"), std::string::npos) << m;
  EXPECT_NE(m.find("demo.toml:8"), std::string::npos) << m;
  // Negative memory.
  std::string neg = minimal();
  neg.replace(neg.find("per_job_mib = 1000"), 18, "per_job_mib = -5");
  m = error_of(neg);
  EXPECT_NE(m.find("per_job_mib"), std::string::npos) << m;
}

TEST(Recipes, LoaderReportsTheBadFileAndDuplicates) {
  testing::TempDir tmp;
  testing::write_file(tmp / "a.toml", minimal());
  testing::write_file(tmp / "b.toml", "name = [\n");
  auto r = load_recipes(tmp.path());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("b.toml:"), std::string::npos) << r.error().message;
  testing::write_file(tmp / "b.toml", minimal());
  r = load_recipes(tmp.path());
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("already used"), std::string::npos) << r.error().message;
  EXPECT_FALSE(load_recipes(tmp / "missing"));
}

}  // namespace
}  // namespace torchfix
