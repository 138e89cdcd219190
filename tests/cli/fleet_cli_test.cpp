// `torchfix fleet` and its neighbours as a user runs them: the real binary on
// the project's snapshot fixtures, exit codes, the k8s labels file, the
// snapshot on stdout and `build --arch fleet:DIR --dry-run`.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;

const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";

ProcessResult torchfix(std::vector<std::string> args, Environment env = {}) {
  env.emplace("PATH", "/usr/local/cuda/bin:/usr/bin:/bin");
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

TEST(FleetCli, FixturesGroupedWithVerdictsAndExitOne) {
  auto r = torchfix({"fleet", "--snapshots", k_fixtures, "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["schema"], "torchfix-fleet/1");  // kept for one release
  // Every fixture is a node (or a failure, never dropped); most machines differ, so most are their own group.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(k_fixtures)) files += e.path().extension() == ".json";
  EXPECT_GE(j["groups"].size(), 10u);
  EXPECT_EQ(j["nodes"].get<std::size_t>() + j["failures"].size(), files);
  bool cannot = false;
  for (const auto& e : j["environments"]) {
    for (const auto& v : e["verdicts"]) cannot = cannot || v["verdict"] == "cannot run";
  }
  EXPECT_TRUE(cannot);
}

TEST(FleetCli, HealthyNodesExitZeroAndTextNamesTheGroup) {
  TempDir tmp;
  std::filesystem::copy_file(k_fixtures + "h200-torch211-cu130.json", tmp / "gpu01.json");
  std::filesystem::copy_file(k_fixtures + "h200-torch211-cu130.json", tmp / "gpu02.json");
  auto r = torchfix({"fleet", "--snapshots", tmp.path().string()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Fleet: 2 nodes in 1 group"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("group 1 (2 nodes: gpu[01-02]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVIDIA H200 (9.0); driver 580.159.04 (CUDA 13.0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runs natively on every group"), std::string::npos) << r.out;
}

TEST(FleetCli, BadInputIsOneLineAndExitTwo) {
  auto r = torchfix({"fleet", "--snapshots", "/nonexistent/fleet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'/nonexistent/fleet' does not exist"), std::string::npos) << r.err;
  r = torchfix({"fleet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give exactly one of --snapshots"), std::string::npos) << r.err;
}

TEST(FleetCli, K8sLabelsFileForThisNode) {
  TempDir tmp;
  const auto out = tmp / "features.d/torchfix";
  std::filesystem::create_directories(out.parent_path());
  auto r = torchfix(
      {"fleet", "--k8s-labels", "--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--output", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = testing::read_file(out);
  EXPECT_NE(text.find("torchfix.dev/compute-capability=12.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("=cannot-run\n"), std::string::npos) << text;
  EXPECT_NE(text.find("-version."), std::string::npos) << text;
  EXPECT_FALSE(std::filesystem::exists(out.parent_path() / ".torchfix.tmp"));
}

TEST(FleetCli, DoctorPrintsTheSnapshotAloneOnStdout) {
  auto r = torchfix({"doctor", "--snapshot", k_fixtures + "F1-rtx5090d-torch26-cu126.json", "--save-snapshot", "-"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"][0]["compute_capability"], "12.0");
}

TEST(FleetCli, DoctorTakesWhatIfValuesFromTheFileTheEnvironmentNames) {
  TempDir tmp;
  testing::write_file(tmp / "w.json", R"({"gpus": ["Tesla V100-SXM2-16GB"], "driver": "570.133.20"})");
  auto r = torchfix({"doctor", "--snapshot", k_fixtures + "h200-torch211-cu130.json", "--save-snapshot", "-"},
                    {{"TORCHFIX_WHAT_IF", (tmp / "w.json").string()}});
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"][0]["compute_capability"], "7.0");
  EXPECT_EQ(j["driver"]["version"], "570.133.20");
  testing::write_file(tmp / "bad.json", R"({"gpus": "V100"})");
  r = torchfix({"doctor", "--snapshot", k_fixtures + "h200-torch211-cu130.json"},
               {{"TORCHFIX_WHAT_IF", (tmp / "bad.json").string()}});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("\"gpus\" must be a list of GPU names"), std::string::npos) << r.err;
}

TEST(FleetCli, BuildArchFleetIsTheUnionOfTheFleetsGpus) {
  TempDir tmp;
  for (const char* f : {"F1-rtx5090d-torch26-cu126", "a10-minor-compat", "h200-torch211-cu130"}) {
    std::filesystem::copy_file(k_fixtures + f + ".json", tmp / (std::string(f) + ".json"));
  }
  auto r = torchfix({"build", "--src", TORCHFIX_SOURCE_DIR "/bench/ext", "--arch", "fleet:" + tmp.path().string(),
                     "--snapshot", k_fixtures + "h200-torch211-cu130.json", "--work-dir", (tmp / "w").string(),
                     "--dry-run", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto plan = nlohmann::json::parse(r.out);
  // RTX 5090 D (12.0), A10 (8.6), H200 (9.0): SASS for each, PTX for the newest.
  EXPECT_EQ(plan["arch"]["value"], "8.6;9.0;12.0+PTX") << plan["arch"].dump();
  EXPECT_NE(plan["arch"]["reason"].get<std::string>().find("fleet:" + tmp.path().string() + " (3 groups, 3 nodes"),
            std::string::npos)
      << plan["arch"].dump();
}

}  // namespace
}  // namespace torchfix
