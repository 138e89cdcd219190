// doctor, env and build --dry-run on the same snapshot name the same nvcc,
// host compiler, arch list and MAX_JOBS: the real binary, in real processes,
// replaying saved snapshots (core/situation/toolchain.hpp is the one decision).
#include <gtest/gtest.h>

#include <algorithm>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "../build/test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";

ProcessResult torchfix(std::vector<std::string> args) {
  Environment env{{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}, {"SHELL", "/bin/bash"}};
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

// What one command decided.
struct Decision {
  std::string nvcc, cxx, cc, arch, jobs;
};

// "Builds here: nvcc 12.6.85, CXX=/usr/bin/clang++-17, CC=..., TORCH_CUDA_ARCH_LIST=8.9+PTX, MAX_JOBS=14"
Decision from_doctor(const std::string& snapshot, nlohmann::json& doctor) {
  auto r = torchfix({"doctor", "--json", "--snapshot", snapshot});
  doctor = nlohmann::json::parse(r.out);
  Decision d;
  for (const auto& f : doctor["findings"]) {
    if (f["id"] != "toolchain.decision") continue;
    const std::string title = f["title"];
    std::smatch m;
    for (const auto& [key, field] : std::vector<std::pair<std::string, std::string*>>{
             {"CXX", &d.cxx}, {"CC", &d.cc}, {"TORCH_CUDA_ARCH_LIST", &d.arch}, {"MAX_JOBS", &d.jobs}}) {
      if (std::regex_search(title, m, std::regex("(^|, )" + key + "=([^,]+)"))) *field = m[2];
    }
    const std::string detail = f["details"][0];
    d.nvcc = detail.substr(5, detail.find(':') - 5);  // "nvcc /usr/local/cuda-12.6/bin/nvcc: ..."
  }
  return d;
}

Decision from_env(const std::string& snapshot, std::map<std::string, std::string>& vars) {
  auto r = torchfix({"env", "--json", "--shell", "bash", "--snapshot", snapshot});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  for (const auto& v : json["variables"]) vars[v["name"].get<std::string>()] = v["value"].get<std::string>();
  Decision d;
  d.nvcc = vars.contains("CUDA_HOME") ? vars["CUDA_HOME"] + "/bin/nvcc" : "";
  d.cxx = vars.contains("CXX") ? vars["CXX"] : "";
  d.cc = vars.contains("CC") ? vars["CC"] : "";
  d.arch = vars["TORCH_CUDA_ARCH_LIST"];
  d.jobs = vars["MAX_JOBS"];
  return d;
}

Decision from_build(const std::string& snapshot, const TempDir& tmp) {
  write_file(tmp / "proj/CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX CUDA)\n");
  auto r = torchfix({"build", "--src", (tmp / "proj").string(), "--dry-run", "--json", "--snapshot", snapshot,
                     "--work-dir", (tmp / "work").string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto plan = nlohmann::json::parse(r.out);
  return {plan["toolkit"]["nvcc"], plan["host_compiler"]["cxx"], plan["host_compiler"]["cc"], plan["arch"]["torch"],
          std::to_string(plan["jobs"]["value"].get<int>())};
}

struct Case {
  const char* snapshot;
  const char* cxx;          // the in-bounds C++ compiler all three name
  bool env_sets_compilers;  // the user's own compiler is outside the bounds
};

TEST(ToolchainCli, DoctorEnvAndBuildDecideTheSame) {
  const Case cases[] = {{"F15-rtx4090-clang19-nvcc126.json", "/usr/bin/clang++-17", true},
                        {"env-mixed-a6000-5090.json", "/usr/bin/g++-13", true},
                        {"toolchain-container-cgroup.json", "/usr/bin/g++", false},
                        {"env-gb10-triton35.json", "/usr/bin/g++", false}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.snapshot);
    const std::string snapshot = k_fixtures + c.snapshot;
    TempDir tmp;
    nlohmann::json doctor;
    std::map<std::string, std::string> vars;
    const Decision d = from_doctor(snapshot, doctor);
    const Decision e = from_env(snapshot, vars);
    const Decision b = from_build(snapshot, tmp);
    EXPECT_EQ(b.cxx, c.cxx);
    EXPECT_EQ(d.cxx, b.cxx);
    EXPECT_EQ(d.cc, b.cc);
    EXPECT_EQ(d.nvcc, b.nvcc);
    EXPECT_EQ(e.nvcc, b.nvcc);
    EXPECT_FALSE(b.arch.empty());
    EXPECT_EQ(d.arch, b.arch);
    EXPECT_EQ(e.arch, b.arch);
    EXPECT_EQ(d.jobs, b.jobs);
    EXPECT_EQ(e.jobs, b.jobs);
    if (c.env_sets_compilers) {
      EXPECT_EQ(e.cxx, b.cxx);
      EXPECT_EQ(vars["CUDAHOSTCXX"], b.cxx);
      EXPECT_EQ(e.cc, b.cc);
    } else {
      EXPECT_FALSE(vars.contains("CXX")) << "the user's compiler fits: nothing to override";
    }
  }
}

// F15: the doctor warns about CXX (clang 19), and no printed compiler path is
// one the snapshot does not list (the old env printed /usr/bin/clangcc-17).
TEST(ToolchainCli, F15WarnsAboutCxxAndNamesOnlyExistingCompilers) {
  const std::string snapshot = k_fixtures + "F15-rtx4090-clang19-nvcc126.json";
  auto r = torchfix({"doctor", "--snapshot", snapshot});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;  // a warning before any build
  EXPECT_NE(r.out.find("clang 19.1.7 (CXX=/usr/bin/clang++-19) is too new for nvcc 12.6.85 (needs clang < 18)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("export CUDAHOSTCXX=/usr/bin/clang++-17"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export CC=/usr/bin/clang-17"), std::string::npos) << r.out;
  auto env = torchfix({"env", "--shell", "bash", "--snapshot", snapshot});
  EXPECT_EQ(env.out.find("clangcc"), std::string::npos) << env.out;
  const std::regex path(R"(/usr/bin/[A-Za-z0-9+._-]+)");
  for (const std::string& text : {r.out, env.out}) {
    for (auto it = std::sregex_iterator(text.begin(), text.end(), path); it != std::sregex_iterator(); ++it) {
      const std::string p = it->str();
      const bool listed = p == "/usr/bin/clang++-19" || p == "/usr/bin/g++-12" || p == "/usr/bin/gcc-12" ||
                          p == "/usr/bin/clang++-17" || p == "/usr/bin/clang-17" || p == "/usr/bin/python3";
      EXPECT_TRUE(listed) << p;
    }
  }
}

// build --snapshot plans MAX_JOBS from the snapshot's CPUs, memory and cgroup
// limits, not from the machine running the test.
TEST(ToolchainCli, BuildSnapshotReplaysJobsFromTheSnapshot) {
  TempDir tmp;
  const Decision b = from_build(k_fixtures + "toolchain-container-cgroup.json", tmp);
  EXPECT_EQ(b.jobs, "6");  // cpu.max quota 6.5 of 64 CPUs
  write_file(tmp / "proj/CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX CUDA)\n");
  auto r = torchfix({"build", "--src", (tmp / "proj").string(), "--dry-run", "--json", "--snapshot",
                     k_fixtures + "toolchain-container-cgroup.json", "--work-dir", (tmp / "work").string()});
  const auto plan = nlohmann::json::parse(r.out);
  EXPECT_NE(plan["jobs"]["reason"].get<std::string>().find("cgroup /sys/fs/cgroup/cpu.max"), std::string::npos)
      << plan["jobs"]["reason"];
  EXPECT_TRUE(plan["disk"]["free_bytes"].is_null()) << "a replay does not measure this machine's disk";
}

}  // namespace
}  // namespace torchfix
