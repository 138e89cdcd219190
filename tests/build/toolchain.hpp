#pragma once
// The real nvcc and g++ of this machine as planner inventory entries, read
// by running them (the tests' stand-in for the toolchain probe).

#include <optional>
#include <regex>

#include "builder/fetch.hpp"
#include "builder/plan.hpp"
#include "core/situation/snapshot.hpp"
#include "probe/knowledge_files.hpp"
#include "test_support.hpp"

namespace torchfix::testing {

/// Holds the local nvcc and host compiler.
struct LocalToolchain {
  Toolkit toolkit;
  HostCompiler compiler;
};

/// Returns /usr/local/cuda/bin/nvcc with its version and `--list-gpu-code`
/// archs, and /usr/bin/g++; nullopt when nvcc is not installed.
inline std::optional<LocalToolchain> local_toolchain() {
  const std::string nvcc = "/usr/local/cuda/bin/nvcc";
  if (!std::filesystem::exists(nvcc) || !std::filesystem::exists("/usr/bin/g++")) return std::nullopt;
  LocalToolchain t;
  t.toolkit.nvcc = nvcc;
  t.toolkit.origin = "test";
  std::smatch m;
  const std::string version = run_ok(nvcc, {"--version"}, "/");
  if (std::regex_search(version, m, std::regex(R"(V([0-9.]+))"))) t.toolkit.version = Version::parse(m[1].str());
  const std::string codes = run_ok(nvcc, {"--list-gpu-code"}, "/");
  const std::regex sm(R"(sm_[0-9]+[af]?)");
  for (auto it = std::sregex_iterator(codes.begin(), codes.end(), sm); it != std::sregex_iterator(); ++it) {
    if (auto a = Arch::parse(it->str())) t.toolkit.archs.push_back(*a);
  }
  t.toolkit.archs_source = "nvcc --list-gpu-code";
  const std::string gxx = run_ok("/usr/bin/g++", {"-dumpfullversion"}, "/");
  t.compiler = {"/usr/bin/g++", "test", CompilerFamily::gcc, Version::parse(gxx)};
  return t;
}

/// Holds the shipped knowledge tables and build recipes of this source tree.
struct Shipped {
  Knowledge knowledge;
  std::vector<Recipe> recipes;
};

/// Loads recipes/*.toml and recipes/build/*.toml of the source tree; a load
/// error fails the test (the returned tables are then empty).
inline Shipped load_shipped() {
  Shipped s;
  auto knowledge = load_knowledge(TORCHFIX_SOURCE_DIR);
  EXPECT_TRUE(knowledge) << knowledge.error().message;
  if (knowledge) s.knowledge = *knowledge;
  auto recipes = load_recipes(std::filesystem::path(TORCHFIX_SOURCE_DIR) / "recipes/build");
  EXPECT_TRUE(recipes) << recipes.error().message;
  if (recipes) s.recipes = *recipes;
  return s;
}

/// Returns planner inputs for building the tree `src` with the cuda-extension
/// recipe, this machine's nvcc and g++ and its real environment; `shipped`
/// must outlive the result (the inputs point into it).
inline BuildInputs local_extension_inputs(const LocalToolchain& toolchain, const Shipped& shipped,
                                          const std::filesystem::path& src, const std::filesystem::path& work_dir) {
  BuildInputs in;
  in.recipe = *find_recipe(shipped.recipes, "cuda-extension");
  in.request.src = src;
  in.request.work_dir = work_dir;
  in.toolkits = {toolchain.toolkit};
  in.compilers = {toolchain.compiler};
  in.env = read_process_environment();
  in.knowledge = &shipped.knowledge;
  in.source = inspect_source(src);
  return in;
}

}  // namespace torchfix::testing
