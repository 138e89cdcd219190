// The fleet decision on real knowledge tables: grouping, verdicts per group
// for a shared environment, and the one fix that covers every group.

#include "core/fleet/fleet.hpp"

#include <gtest/gtest.h>

#include "../support/repo_knowledge.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return torchfix::testing::repo_knowledge();
}

const std::string k_venv = "/shared/venv/bin/python";

// One node: its GPUs (name, cc), its driver, and the shared venv with `torch`.
Snapshot node(std::vector<std::pair<std::string, std::string>> gpus, const std::string& driver,
              const std::string& driver_cuda, const std::string& torch = "2.9.1+cu130",
              const std::string& machine = "x86_64") {
  Snapshot s;
  int index = 0;
  for (const auto& [name, cc] : gpus) {
    Gpu g;
    g.index = index++;
    g.name = name;
    g.cc = *ComputeCapability::parse(cc);
    g.source = "test";
    s.gpus.push_back(g);
  }
  s.driver.version = Version::parse(driver);
  s.driver.cuda_version = Version::parse(driver_cuda);
  s.platform.machine = machine;
  s.platform.os = "Debian GNU/Linux 12 (bookworm)";
  s.platform.nvidia_device_nodes = true;
  s.platform.libcuda_loadable = true;
  PythonEnv env;
  env.interpreter = k_venv;
  env.origin = "--python";
  env.python_version = "3.11.2";
  if (!torch.empty()) {
    TorchBuild t;
    t.version = torch;
    t.cuda = torch.substr(torch.find("+cu") + 3, 2) + "." + torch.substr(torch.find("+cu") + 5, 1);
    t.location = "/shared/venv/lib/python3.11/site-packages/torch";
    env.torch = t;
    env.distributions["torch"] = torch;
  } else {
    env.status = PythonStatus::no_torch;
  }
  s.pythons.push_back(env);
  return s;
}

Snapshot v100() {
  return node({{"Tesla V100-SXM2-16GB", "7.0"}}, "570.133.20", "12.8");
}
Snapshot a100() {
  return node({{"NVIDIA A100-SXM4-80GB", "8.0"}, {"NVIDIA A100-SXM4-80GB", "8.0"}}, "580.95.05", "13.0");
}
Snapshot h100() {
  return node({{"NVIDIA H100 80GB HBM3", "9.0"}}, "580.95.05", "13.0");
}

const FleetEnvRow& row_of(const FleetEnv& env, std::size_t group) {
  for (const FleetEnvRow& r : env.rows) {
    if (r.group == group) return r;
  }
  throw std::runtime_error("no row for group " + std::to_string(group));
}

TEST(Fleet, GroupsIdenticalNodesAndKeepsNodeNames) {
  FleetBuilder fleet;
  fleet.add("v1", v100());
  fleet.add("a1", a100());
  fleet.add("v2", v100());
  fleet.add("h1", h100());
  fleet.add("a2", a100());
  const FleetReport r = fleet.finish(knowledge());
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.nodes, 5u);
  EXPECT_EQ(r.groups[0].nodes, (std::vector<std::string>{"v1", "v2"}));
  EXPECT_EQ(r.groups[1].nodes, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(r.groups[1].label.substr(0, 30), "NVIDIA A100-SXM4-80GB (8.0) x2");
  EXPECT_NE(r.groups[0].label.find("driver 570.133.20 (CUDA 12.8)"), std::string::npos) << r.groups[0].label;
  EXPECT_EQ(fleet_capabilities(r), (std::vector<ComputeCapability>{{7, 0}, {8, 0}, {9, 0}}));
}

TEST(Fleet, SharedVenvVerdictPerGroupAndOneWheelForAll) {
  FleetBuilder fleet;
  fleet.add("node1", v100());
  fleet.add("node2", a100());
  fleet.add("node3", h100());
  const FleetReport r = fleet.finish(knowledge());
  ASSERT_EQ(r.envs.size(), 1u);
  const FleetEnv& env = r.envs[0];
  EXPECT_EQ(env.path, k_venv);
  // torch 2.9 cu130 has no 7.0 kernels and needs a CUDA 13 driver.
  EXPECT_EQ(row_of(env, 0).verdict, FleetVerdict::cannot_run) << row_of(env, 0).reason;
  EXPECT_EQ(row_of(env, 1).verdict, FleetVerdict::runs) << row_of(env, 1).reason;
  EXPECT_EQ(row_of(env, 2).verdict, FleetVerdict::runs) << row_of(env, 2).reason;
  EXPECT_EQ(r.exit_code(), 1);
  // The same release from a CUDA 12 index (cu126 or cu128) has sm_70 and runs on the 12.8 driver.
  EXPECT_EQ(env.fix.kind, FleetFixKind::wheel) << env.fix.summary;
  EXPECT_NE(env.fix.summary.find("torch 2.9.1 cu12"), std::string::npos) << env.fix.summary;
  ASSERT_FALSE(env.fix.commands.empty());
  EXPECT_NE(env.fix.commands[0].find("torch==2.9.1"), std::string::npos) << env.fix.commands[0];
  EXPECT_NE(env.fix.commands[0].find("whl/cu12"), std::string::npos) << env.fix.commands[0];
  EXPECT_NE(env.fix.commands[0].find(k_venv), std::string::npos) << env.fix.commands[0];
  EXPECT_TRUE(env.fix.left_out.empty());
  EXPECT_EQ(env.fix.arch_list, "7.0;8.0;9.0+PTX");
}

TEST(Fleet, EveryGroupNativeNeedsNoFixAndExitsZero) {
  FleetBuilder fleet;
  fleet.add("node2", a100());
  fleet.add("node3", h100());
  const FleetReport r = fleet.finish(knowledge());
  ASSERT_EQ(r.envs.size(), 1u);
  EXPECT_EQ(r.envs[0].fix.kind, FleetFixKind::none_needed);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(Fleet, FailedNodeIsListedAndMakesExitOne) {
  FleetBuilder fleet;
  fleet.add("node3", h100());
  fleet.add_failure("node4", "torchfix exited 2: unknown GPU");
  const FleetReport r = fleet.finish(knowledge());
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_EQ(r.failures[0].node, "node4");
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(Fleet, PtxOnlyGroupRunsThroughJit) {
  Snapshot s = h100();
  s.pythons[0].torch->arch_flags = {*Arch::parse("sm_80"), *Arch::parse("compute_80")};
  s.pythons[0].torch->version = "2.9.1+cu130";
  FleetBuilder fleet;
  fleet.add("h1", s);
  const FleetReport r = fleet.finish(knowledge());
  ASSERT_EQ(r.envs.size(), 1u);
  EXPECT_EQ(r.envs[0].rows[0].verdict, FleetVerdict::runs_ptx_jit) << r.envs[0].rows[0].reason;
  EXPECT_EQ(r.exit_code(), 0);
  EXPECT_NE(r.envs[0].fix.kind, FleetFixKind::none_needed);
}

TEST(Fleet, NodesOfOneGroupWithDifferentTorchGetTheirOwnRows) {
  FleetBuilder fleet;
  fleet.add("a1", a100());
  fleet.add("a2", node({{"NVIDIA A100-SXM4-80GB", "8.0"}, {"NVIDIA A100-SXM4-80GB", "8.0"}}, "580.95.05", "13.0",
                       "2.8.0+cu128"));
  fleet.add("a3", a100());
  const FleetReport r = fleet.finish(knowledge());
  ASSERT_EQ(r.groups.size(), 1u);
  ASSERT_EQ(r.envs[0].rows.size(), 2u);
  EXPECT_EQ(r.envs[0].rows[0].nodes, (std::vector<std::string>{"a1", "a3"}));
  EXPECT_EQ(r.envs[0].rows[1].nodes, (std::vector<std::string>{"a2"}));
  EXPECT_EQ(r.envs[0].rows[1].torch, "2.8.0+cu128");
}

TEST(Fleet, NodesWithoutTheEnvironmentAreAbsentNotFailing) {
  FleetBuilder fleet;
  fleet.add("a1", a100());
  Snapshot bare = h100();
  bare.pythons.clear();
  fleet.add("h1", bare);
  const FleetReport r = fleet.finish(knowledge());
  EXPECT_EQ(row_of(r.envs[0], 1).verdict, FleetVerdict::absent);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(Fleet, TwoPlatformsLeaveTheSmallerOneOut) {
  FleetBuilder fleet;
  fleet.add("v1", v100());
  fleet.add("v2", v100());
  fleet.add("gh1", node({{"NVIDIA GH200 480GB", "9.0"}}, "580.95.05", "13.0", "2.9.1+cu130", "aarch64"));
  const FleetReport r = fleet.finish(knowledge());
  const FleetFix& fix = r.envs[0].fix;
  EXPECT_EQ(fix.kind, FleetFixKind::none) << fix.summary;
  EXPECT_EQ(fix.left_out, (std::vector<std::size_t>{1}));
  EXPECT_NE(fix.summary.find("leaves out group 2"), std::string::npos) << fix.summary;
  ASSERT_FALSE(fix.commands.empty());
  EXPECT_NE(fix.commands[0].find("whl/cu12"), std::string::npos) << fix.commands[0];
}

TEST(Fleet, OnlyTheAskedPathIsJudged) {
  FleetBuilder fleet;
  fleet.add("a1", a100());
  EXPECT_EQ(fleet.finish(knowledge(), "/other/bin/python").envs.size(), 1u);
  EXPECT_EQ(fleet.finish(knowledge(), "/other/bin/python").envs[0].rows[0].verdict, FleetVerdict::absent);
}

}  // namespace
}  // namespace torchfix
