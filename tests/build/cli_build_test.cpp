// The torchfix binary: `build --dry-run` and `recipes`, as a user runs them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../support/linux_only.hpp"
#include "builder/folders.hpp"
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
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  testing::TempDir tmp;
  // --force: the plan's content is under test here, not this machine's free
  // disk (a 40 GiB build refused on a CI host with 39.5 GiB free; the refusal
  // itself is PlanTest's).
  auto r = run_torchfix({"build", "pytorch", "--ref", "v2.9.1", "--dry-run", "--json", "--gpu", "sm_86", "--work-dir",
                         tmp.path().string(), "--force"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto plan = nlohmann::json::parse(r.out);
  EXPECT_EQ(plan["disk"]["need_bytes"].get<std::uint64_t>(), std::uint64_t{40960} << 20);
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
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
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
  const std::string key = build_key("cuda-extension", tmp / "proj", std::nullopt);
  EXPECT_TRUE(std::filesystem::exists(tmp / "work/logs" / (key + ".log"))) << key;
}

// A CMake CUDA project in `dir` whose sources are `files` (name, text).
void write_project(const std::filesystem::path& dir, const std::string& cmake,
                   const std::vector<std::pair<std::string, std::string>>& files) {
  testing::write_file(dir / "CMakeLists.txt",
                      "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX CUDA)\n" + cmake + "\n");
  for (const auto& [name, text] : files) testing::write_file(dir / name, text);
}

Environment cuda_env() {
  Environment env = read_process_environment();
  env["PATH"] = "/usr/local/cuda/bin:" + env["PATH"];
  return env;
}

TEST(CliBuild, TwoProjectsInFoldersOfTheSameNameAndEveryKindOfOutput) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  testing::TempDir tmp;
  const std::string kernel = "__global__ void k(float* x) { x[0] = 1; }\n";
  write_project(tmp / "a/proj", "add_library(pa SHARED a.cu)", {{"a.cu", kernel}});
  write_project(tmp / "b/proj", "add_library(pb STATIC b.cu)\nadd_executable(pe main.cu)",
                {{"b.cu", kernel}, {"main.cu", "__global__ void m(int* y) { y[0] = 2; }\nint main() { return 0; }\n"}});
  const std::string work = (tmp / "work").string();
  auto a =
      run_torchfix({"build", "--src", (tmp / "a/proj").string(), "--gpu", "sm_86", "--work-dir", work}, cuda_env());
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_NE(a.out.find("libpa.so: sm_86 compute_86"), std::string::npos) << a.out;
  // The second project is not configured in the first one's build folder,
  // and its outputs are its own: a static library and an executable.
  auto b =
      run_torchfix({"build", "--src", (tmp / "b/proj").string(), "--gpu", "sm_86", "--work-dir", work}, cuda_env());
  ASSERT_EQ(b.exit_code, 0) << b.out << b.err;
  EXPECT_NE(b.out.find("libpb.a: sm_86 compute_86"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("/pe: sm_86 compute_86"), std::string::npos) << b.out;
  EXPECT_EQ(b.out.find("libpa.so"), std::string::npos) << b.out;
  EXPECT_NE(build_key("cuda-extension", tmp / "a/proj", std::nullopt),
            build_key("cuda-extension", tmp / "b/proj", std::nullopt));
}

TEST(CliBuild, FailingStepShowsTheErrorUnderIt) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  testing::TempDir tmp;
  write_project(tmp / "proj", "add_library(p SHARED a.cu)",
                {{"a.cu", "__global__ void k(float* x) { x[0] = no_such_name; }\n"}});
  auto r = run_torchfix(
      {"build", "--src", (tmp / "proj").string(), "--gpu", "sm_86", "--work-dir", (tmp / "work").string()}, cuda_env());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto failed = r.err.find("step build failed (exit 1");
  ASSERT_NE(failed, std::string::npos) << r.err;
  const auto error = r.err.find("no_such_name", failed);
  EXPECT_NE(error, std::string::npos) << "the compiler's error is not shown under the failure:\n" << r.err;
}

// On a terminal (a pty from util-linux's script) the live status line is
// cleared before the summary on stdout: "\r\x1b[K  configure: ok in ...",
// not the summary written after "[2/2 build, 2 jobs] [3/3] 0m05s" (issue 19).
TEST(CliBuild, TheLiveStatusLineIsClearedBeforeTheSummary) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  if (!std::filesystem::exists("/usr/bin/script")) GTEST_SKIP() << "no /usr/bin/script (util-linux) for a pty";
  testing::TempDir tmp;
  write_project(tmp / "proj", "add_library(p SHARED a.cu b.cu)",
                {{"a.cu", "__global__ void k(float* x) { x[0] = 1; }\n"},
                 {"b.cu", "__global__ void m(float* x) { x[0] = 2; }\n"}});
  Environment env = cuda_env();
  env["TERM"] = "xterm";
  const std::string line = std::string(TORCHFIX_BINARY) + " build --src '" + (tmp / "proj").string() +
                           "' --gpu sm_86 --work-dir '" + (tmp / "work").string() + "'";
  SystemProcessRunner runner;
  auto r = runner.run(Command{"/usr/bin/script", {"-qefc", line, "/dev/null"}, env, "", std::chrono::seconds(300)});
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->exit_code, 0) << r->out << r->err;
  EXPECT_NE(r->out.find("\r\x1b[K[2/2 build, "), std::string::npos) << "no live status line was drawn:\n" << r->out;
  const auto summary = r->out.find("  configure: ok in ");
  ASSERT_NE(summary, std::string::npos) << r->out;
  EXPECT_EQ(r->out.substr(summary - 4, 4), "\r\x1b[K") << "the summary is written after the status line:\n"
                                                       << r->out.substr(summary > 80 ? summary - 80 : 0, 120);
  EXPECT_NE(r->out.find("built and verified"), std::string::npos) << r->out;
}

TEST(CliBuild, SrcThatIsMissingOrNoProjectIsNamed) {
  testing::TempDir tmp;
  auto r = run_torchfix({"build", "--src", (tmp / "nope").string(), "--gpu", "sm_86", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope: no such directory"), std::string::npos) << r.err;
  std::filesystem::create_directories(tmp / "empty");
  r = run_torchfix({"build", "--src", (tmp / "empty").string(), "--gpu", "sm_86", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no setup.py, pyproject.toml or CMakeLists.txt in " + (tmp / "empty").string()),
            std::string::npos)
      << r.err;
}

TEST(CliBuild, RepoCmakeProjectGetsItsFrontEndAfterTheClone) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  testing::TempDir tmp;
  const auto repo = tmp / "repo";
  write_project(repo, "add_library(pr SHARED a.cu)", {{"a.cu", "__global__ void k(float* x) { x[0] = 1; }\n"}});
  testing::run_ok("git", {"init", "-q", "-b", "main"}, repo);
  testing::run_ok("git", {"add", "."}, repo);
  testing::run_ok("git", {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x"}, repo);
  auto r = run_torchfix({"build", "--repo", "file://" + repo.string(), "--ref", "main", "--gpu", "sm_86", "--work-dir",
                         (tmp / "work").string()},
                        cuda_env());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("configure"), std::string::npos) << "built with pip, not CMake:\n" << r.err;
  EXPECT_NE(r.out.find("libpr.so: sm_86 compute_86"), std::string::npos) << r.out;
}

TEST(CliBuild, RecipesListAndAMalformedRecipe) {
  auto r = run_torchfix({"recipes", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // One entry per recipe file shipped in recipes/build.
  std::size_t files = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(TORCHFIX_SOURCE_DIR) / "recipes/build"))
    files += e.path().extension() == ".toml";
  EXPECT_EQ(nlohmann::json::parse(r.out).at("schema_version"), 1);
  EXPECT_EQ(nlohmann::json::parse(r.out).at("recipes").size(), files);
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
