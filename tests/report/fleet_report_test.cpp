// The fleet renderers: Slurm-style node lists, the text report, the JSON
// document and node-feature-discovery's features.d file.

#include "report/fleet_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

TEST(FleetReport, CompressesNodeNamesLikeSlurm) {
  EXPECT_EQ(compress_hostlist({"node3", "node1", "node2", "gpu004", "gpu001", "gpu002", "login"}),
            "gpu[001-002,004],node[1-3],login");
  EXPECT_EQ(compress_hostlist({"node1"}), "node1");
  EXPECT_EQ(compress_hostlist({}), "");
}

FleetReport sample() {
  FleetReport r;
  FleetGroup g;
  g.label = "Tesla V100-SXM2-16GB (7.0); driver 570.133.20 (CUDA 12.8)";
  g.gpus = {"Tesla V100-SXM2-16GB (7.0)", "Tesla V100-SXM2-16GB (7.0)"};
  g.ccs = {{7, 0}};
  g.driver = Version::parse("570.133.20");
  g.driver_cuda = Version::parse("12.8");
  g.machine = "x86_64";
  g.nodes = {"node1", "node2"};
  r.groups.push_back(g);
  r.nodes = 2;
  FleetEnv env;
  env.path = "/shared/venv/bin/python";
  env.rows.push_back({0, FleetVerdict::cannot_run, "2.9.1+cu130", "torch cannot run on GPU 0", {"node1", "node2"}});
  env.fix.kind = FleetFixKind::wheel;
  env.fix.summary = "one wheel for every group: torch 2.9.1 cu128";
  env.fix.commands = {"pip install torch==2.9.1 --index-url https://download.pytorch.org/whl/cu128"};
  r.envs.push_back(env);
  r.failures.push_back({"node4", "torchfix exited 2"});
  return r;
}

TEST(FleetReport, JsonNamesGroupsVerdictsFixAndFailures) {
  const nlohmann::json j = fleet_json(sample());
  EXPECT_EQ(j["schema"], "torchfix-fleet/1");
  EXPECT_EQ(j["groups"][0]["id"], 1);
  EXPECT_EQ(j["groups"][0]["compute_capabilities"][0], "7.0");
  EXPECT_EQ(j["environments"][0]["verdicts"][0]["verdict"], "cannot run");
  EXPECT_EQ(j["environments"][0]["fix"]["kind"], "wheel");
  EXPECT_EQ(j["failures"][0]["node"], "node4");
  EXPECT_EQ(j["exit_code"], 1);
}

TEST(FleetReport, NfdFeaturesAreLabelSafeKeyValueLines) {
  const std::string text = nfd_features(sample());
  EXPECT_NE(text.find("\ntorchfix.dev/cuda-driver=12.8\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntorchfix.dev/compute-capability=7.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntorchfix.dev/gpu-count=2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ntorchfix.dev/torch.venv=cannot-run\n"), std::string::npos) << text;
  // '+' is not allowed in a label value.
  EXPECT_NE(text.find("\ntorchfix.dev/torch-version.venv=2.9.1-cu130\n"), std::string::npos) << text;
  for (std::size_t at = 0, nl; (nl = text.find('\n', at)) != std::string::npos; at = nl + 1) {
    const std::string line = text.substr(at, nl - at);
    if (line.starts_with('#')) continue;
    const auto eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << line;
    const std::string value = line.substr(eq + 1);
    EXPECT_LE(value.size(), 63u) << line;
    for (char c : value)
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') << line;
  }
}

}  // namespace
}  // namespace torchfix
