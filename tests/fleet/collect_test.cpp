// Gathering node snapshots: saved files and folders, sinfo's and srun's
// output, and what collect_slurm runs (a recording runner stands in for
// Slurm here; tests/fleet/slurm_cluster_test.cpp runs a real cluster).

#include "fleet/collect.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"
#include "../support/repo_knowledge.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";

TEST(FleetCollect, FolderOfSnapshotsIsOneNodePerFileAndBadFilesAreFailures) {
  TempDir dir;
  std::filesystem::copy_file(k_fixtures + "h200-torch211-cu130.json", dir / "gpu01.json");
  std::filesystem::copy_file(k_fixtures + "h200-torch211-cu130.json", dir / "gpu02.json");
  write_file(dir / "gpu03.json", "{ not json");
  write_file(dir / "notes.txt", "ignored");
  FleetBuilder fleet;
  ASSERT_TRUE(add_snapshot_paths({dir.path()}, fleet));
  const Knowledge& k = testing::repo_knowledge();
  const FleetReport r = fleet.finish(k);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"gpu01", "gpu02"}));
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].node, "gpu03");
  EXPECT_NE(r.failures[0].reason.find("invalid JSON"), std::string::npos) << r.failures[0].reason;
}

// A folder is parsed on every CPU in batches; the result must be the one
// file-by-file adding gives: same nodes in the same order, same failures.
// 120 files span several batches (16 a batch on 2 CPUs), with distinct snapshots, repeats of earlier
// ones (in and across batches) and bad files between them.
TEST(FleetCollect, FolderParsedInParallelEqualsFileByFile) {
  TempDir dir;
  std::ifstream in(k_fixtures + "h200-torch211-cu130.json");
  auto base = nlohmann::json::parse(in);
  std::vector<std::filesystem::path> files;
  for (int i = 0; i < 120; ++i) {
    const auto path = dir / ("n" + std::to_string(1000 + i) + ".json");
    if (i % 37 == 5) {
      write_file(path, "{ not json " + std::to_string(i));
    } else {
      nlohmann::json s = base;
      s["environment"]["CUDA_VISIBLE_DEVICES"] = std::to_string(i % 3 == 0 ? i % 11 : i);
      if (i % 50 == 7) s["gpus"][0]["compute_capability"] = "8.0";
      write_file(path, s.dump());
    }
    files.push_back(path);
  }
  const Knowledge& k = testing::repo_knowledge();
  FleetBuilder folder;
  ASSERT_TRUE(add_snapshot_paths({dir.path()}, folder));
  FleetBuilder one_by_one;
  for (const auto& f : files) ASSERT_TRUE(add_snapshot_paths({f}, one_by_one));
  const FleetReport a = folder.finish(k);
  const FleetReport b = one_by_one.finish(k);
  EXPECT_EQ(a.nodes, 120u - 4u);  // 5, 42, 79 and 116 are not JSON
  ASSERT_EQ(a.groups.size(), b.groups.size());
  ASSERT_EQ(a.groups.size(), 2u);
  for (std::size_t g = 0; g < a.groups.size(); ++g) EXPECT_EQ(a.groups[g].nodes, b.groups[g].nodes);
  ASSERT_EQ(a.failures.size(), 4u);
  for (std::size_t f = 0; f < a.failures.size(); ++f) {
    EXPECT_EQ(a.failures[f].node, b.failures[f].node);
    EXPECT_NE(a.failures[f].reason.find("invalid JSON"), std::string::npos) << a.failures[f].reason;
  }
}

TEST(FleetCollect, MissingPathOrEmptyFolderIsAnError) {
  TempDir dir;
  FleetBuilder fleet;
  auto missing = add_snapshot_paths({dir / "nope"}, fleet);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);
  auto empty = add_snapshot_paths({dir.path()}, fleet);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("no *.json snapshot"), std::string::npos);
}

TEST(FleetCollect, SinfoStatesDecideWhichNodesAreProbed) {
  const auto nodes = parse_sinfo(
      "node1|idle\nnode2|mixed\nnode3|down*\nnode4|drained\nnode5|unknown\n"
      "node6|allocated+\nnode7|idle~\nnode1|idle\n");
  ASSERT_EQ(nodes.size(), 7u);
  std::vector<std::string> usable;
  for (const auto& n : nodes) {
    if (n.usable) usable.push_back(n.name);
  }
  EXPECT_EQ(usable, (std::vector<std::string>{"node1", "node2", "node6"}));
}

TEST(FleetCollect, SrunOutputIsSplitPerTaskWithNodeSnapshotAndExit) {
  const std::string out =
      "0: @@torchfix-node node1\n1: @@torchfix-node node2\n0: {\n1: {\"a\": 1}\n0:   \"x\": 2\n0: }\n"
      "0: @@torchfix-exit 1\n1: @@torchfix-exit 2\n";
  const std::string err = "1: torchfix doctor: unknown GPU 'x'\nsrun: error: node2: task 1: Exited with exit code 2\n";
  const auto tasks = parse_srun_output(out, err);
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].node, "node1");
  EXPECT_EQ(tasks[0].snapshot, "{\n  \"x\": 2\n}\n");
  EXPECT_EQ(tasks[0].exit, 1);
  EXPECT_EQ(tasks[1].exit, 2);
  ASSERT_EQ(tasks[1].err.size(), 1u);
  EXPECT_EQ(tasks[1].err[0], "torchfix doctor: unknown GPU 'x'");
}

TEST(FleetCollect, SrunRunsOneBoundedTaskPerNode) {
  SlurmRequest request;
  request.partitions = {"gpu", "big"};
  request.pythons = {"/shared/venv/bin/python"};
  request.torchfix = "/shared/bin/torchfix";
  request.time_limit_minutes = 3;
  const Command c = srun_command(request, {"node1", "node2"});
  EXPECT_EQ(c.program, "srun");
  const auto has = [&](const std::string& a) { return std::ranges::find(c.args, a) != c.args.end(); };
  EXPECT_TRUE(has("--ntasks-per-node=1"));
  EXPECT_TRUE(has("--nodes=2"));
  EXPECT_TRUE(has("--nodelist=node1,node2"));
  EXPECT_TRUE(has("--time=3"));
  EXPECT_TRUE(has("--label"));
  EXPECT_TRUE(has("--partition=gpu,big"));
  EXPECT_TRUE(has("/shared/bin/torchfix"));
  EXPECT_EQ(c.args.back(), "/shared/venv/bin/python");
  EXPECT_GT(c.timeout, std::chrono::minutes(3));
}

// Answers sinfo and srun from fixed text, recording what it was asked.
class ScriptedSlurm final : public ProcessRunner {
 public:
  std::vector<Command> ran;
  std::string srun_out;
  std::string srun_err;
  Expected<ProcessResult> run(const Command& c) override {
    ran.push_back(c);
    ProcessResult r;
    r.exit_code = 0;
    if (c.program == "sinfo") {
      r.out = "node1|idle\nnode2|idle\nnode3|down*\n";
    } else {
      r.out = srun_out;
      r.err = srun_err;
      r.exit_code = 1;
    }
    return r;
  }
};

TEST(FleetCollect, DownNodesAndSilentNodesAreFailuresNeverDropped) {
  std::ifstream in(k_fixtures + "h200-torch211-cu130.json");
  std::stringstream text;
  text << in.rdbuf();
  std::string labelled;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) labelled += "0: " + line + "\n";
  ScriptedSlurm slurm;
  slurm.srun_out = "0: @@torchfix-node node1\n" + labelled + "0: @@torchfix-exit 0\n";
  slurm.srun_err = "srun: error: Task launch for StepId=7.0 failed on node node2: Communication connection failure\n";
  SlurmRequest request;
  request.torchfix = "/shared/bin/torchfix";
  FleetBuilder fleet;
  ASSERT_TRUE(collect_slurm(request, {{"PATH", "/usr/bin"}}, slurm, fleet));
  ASSERT_EQ(slurm.ran.size(), 2u);
  EXPECT_EQ(slurm.ran[1].program, "srun");
  EXPECT_NE(std::ranges::find(slurm.ran[1].args, "--nodelist=node1,node2"), slurm.ran[1].args.end());
  const Knowledge& k = testing::repo_knowledge();
  const FleetReport r = fleet.finish(k);
  EXPECT_EQ(r.nodes, 1u);
  ASSERT_EQ(r.failures.size(), 2u);
  EXPECT_EQ(r.failures[0].node, "node3");
  EXPECT_NE(r.failures[0].reason.find("down*"), std::string::npos) << r.failures[0].reason;
  EXPECT_EQ(r.failures[1].node, "node2");
  EXPECT_NE(r.failures[1].reason.find("Communication connection failure"), std::string::npos) << r.failures[1].reason;
}

}  // namespace
}  // namespace torchfix
