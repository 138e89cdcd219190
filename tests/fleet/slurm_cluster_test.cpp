// torchfix fleet --slurm against a real Slurm cluster on this machine
// (tests/fleet/slurm-cluster: slurmctld here, one slurmd per network
// namespace): node1 V100, node2 A100, node3 H100 answer through their own
// what-if files, node4's torchfix fails, node5 never starts. A shared venv
// with torch 2.9.1+cu130 is judged per group and the one covering wheel named.
// Skips (exit 77 of the script) without root, slurm-wlm or munge.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

const std::string k_script = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fleet/slurm-cluster";

ProcessResult run(const std::string& program, std::vector<std::string> args, Environment env, int seconds) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{program, std::move(args), std::move(env), {}, std::chrono::seconds(seconds)});
  EXPECT_TRUE(r) << program << ": " << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

Environment base_env() {
  return {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}};
}

// Stops the cluster when the test ends, passed or failed.
struct Cluster {
  std::filesystem::path dir;
  ~Cluster() { run(k_script, {"stop", dir.string()}, base_env(), 60); }
};

// A venv whose torch is 2.9.1+cu130 as files (the probe reads torch/version.py
// and the dist-info; torch is not imported).
std::string make_venv(const std::filesystem::path& root) {
  const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  auto made = run(python, {"-m", "venv", "--without-pip", (root / "venv").string()}, base_env(), 60);
  EXPECT_TRUE(made.succeeded()) << made.err;
  const std::string venv_python = (root / "venv/bin/python").string();
  auto purelib = run(venv_python, {"-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"}, base_env(), 30);
  std::string site = purelib.out.substr(0, purelib.out.find('\n'));
  write_file(std::filesystem::path(site) / "torch/version.py",
             "__version__ = '2.9.1+cu130'\ncuda: Optional[str] = '13.0'\nhip = None\n");
  write_file(std::filesystem::path(site) / "torch/__init__.py", "");
  write_file(std::filesystem::path(site) / "torch-2.9.1+cu130.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: torch\nVersion: 2.9.1+cu130\n");
  return venv_python;
}

TEST(SlurmCluster, GroupedVerdictCoveringWheelAndFailedNodes) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  TempDir tmp;
  const std::string venv = make_venv(tmp.path());
  Cluster cluster{tmp / "cluster"};
  auto started = run(k_script, {"start", cluster.dir.string()}, base_env(), 120);
  if (started.exit_code == 77) GTEST_SKIP() << started.err;
  ASSERT_TRUE(started.succeeded()) << started.out << started.err;

  Environment env = base_env();
  env["SLURM_CONF"] = (cluster.dir / "slurm.conf").string();
  env["TORCHFIX_WHAT_IF"] = (cluster.dir / "view/what-if.json").string();
  auto fleet = run(TORCHFIX_BINARY,
                   {"fleet", "--slurm", "--partition", "gpu", "--python", venv, "--time", "3", "--json",
                    "--save-snapshots", (tmp / "snapshots").string()},
                   env, 300);
  ASSERT_EQ(fleet.exit_code, 1) << fleet.out << fleet.err;
  const auto j = nlohmann::json::parse(fleet.out);

  // Three groups, one node each, in the order srun answered; find them by GPU.
  ASSERT_EQ(j["groups"].size(), 3u) << j.dump(2);
  std::map<std::string, int> group_of;  // compute capability -> group id
  for (const auto& g : j["groups"]) {
    ASSERT_EQ(g["nodes"].size(), 1u);
    ASSERT_EQ(g["compute_capabilities"].size(), 1u);
    group_of[g["compute_capabilities"][0]] = g["id"];
  }
  ASSERT_EQ(group_of.size(), 3u);
  EXPECT_EQ(j["groups"][group_of["7.0"] - 1]["nodes"][0], "node1");
  EXPECT_EQ(j["groups"][group_of["8.0"] - 1]["nodes"][0], "node2");
  EXPECT_EQ(j["groups"][group_of["9.0"] - 1]["nodes"][0], "node3");
  EXPECT_EQ(j["groups"][group_of["7.0"] - 1]["driver"], "570.133.20");

  ASSERT_EQ(j["environments"].size(), 1u);
  const auto& e = j["environments"][0];
  EXPECT_EQ(e["path"], venv);
  std::map<int, std::string> verdict;
  for (const auto& v : e["verdicts"]) verdict[v["group"]] = v["verdict"];
  EXPECT_EQ(verdict[group_of["7.0"]], "cannot run") << e.dump(2);
  EXPECT_EQ(verdict[group_of["8.0"]], "runs") << e.dump(2);
  EXPECT_EQ(verdict[group_of["9.0"]], "runs") << e.dump(2);
  EXPECT_EQ(e["fix"]["kind"], "wheel") << e.dump(2);
  // torch 2.9.1 from a CUDA 12 index: sm_70 for the V100 and a CUDA 12 runtime its 12.8 driver runs.
  EXPECT_NE(e["fix"]["summary"].get<std::string>().find("torch 2.9.1 cu12"), std::string::npos) << e.dump(2);
  EXPECT_NE(e["fix"]["commands"][0].get<std::string>().find("torch==2.9.1"), std::string::npos) << e.dump(2);

  // node4's torchfix failed, node5 never answered Slurm: both listed with why.
  std::map<std::string, std::string> failed;
  for (const auto& f : j["failures"]) failed[f["node"]] = f["reason"];
  ASSERT_EQ(failed.size(), 2u) << j["failures"].dump(2);
  EXPECT_NE(failed["node4"].find("torchfix exited 2"), std::string::npos) << failed["node4"];
  EXPECT_NE(failed["node4"].find("no such GPU 9000"), std::string::npos) << failed["node4"];
  EXPECT_NE(failed["node5"].find("not probed: Slurm reports it"), std::string::npos) << failed["node5"];

  // --save-snapshots kept each answering node's snapshot for fleet --snapshots and build --arch fleet:DIR.
  for (const char* n : {"node1", "node2", "node3"}) {
    EXPECT_TRUE(std::filesystem::exists(tmp / "snapshots" / (std::string(n) + ".json"))) << n;
  }
  auto replay = run(TORCHFIX_BINARY, {"fleet", "--snapshots", (tmp / "snapshots").string(), "--json"}, env, 120);
  EXPECT_EQ(replay.exit_code, 1) << replay.err;
  EXPECT_EQ(nlohmann::json::parse(replay.out)["groups"].size(), 3u);

  // Without torchfix at that path on the nodes (no shared filesystem): every node says so.
  auto missing =
      run(TORCHFIX_BINARY,
          {"fleet", "--slurm", "--nodes", "node[1-2]", "--torchfix", "/nonexistent/torchfix", "--json"}, env, 300);
  EXPECT_EQ(missing.exit_code, 1) << missing.out << missing.err;
  const auto m = nlohmann::json::parse(missing.out);
  ASSERT_EQ(m["failures"].size(), 2u) << m.dump(2);
  EXPECT_NE(m["failures"][0]["reason"].get<std::string>().find("torchfix not found there"), std::string::npos)
      << m.dump(2);
}

}  // namespace
}  // namespace torchfix
