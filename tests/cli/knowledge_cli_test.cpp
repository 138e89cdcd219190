// The knowledge tables through the real binary, on a copy of recipes/ that
// TORCHFIX_DATA_DIR points at: a typo planted in any table or build recipe
// stops the command with exit 2 and one line naming the file and line; and a
// torch release added by the steps of docs/knowledge.md is used by the doctor.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "../build/test_support.hpp"
#include "../support/data_copy.hpp"
#include "../support/linux_only.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix {
namespace {

using testing::DataCopy;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

const std::string k_source = TORCHFIX_SOURCE_DIR;
const std::string k_h200 = k_source + "/tests/fixtures/snapshots/h200-torch211-cu130.json";
const std::string k_rtx5090d = k_source + "/tests/fixtures/snapshots/F1-rtx5090d-torch26-cu126.json";

ProcessResult torchfix(std::vector<std::string> args, const std::string& data_dir) {
  Environment env{{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  if (!data_dir.empty()) env.emplace("TORCHFIX_DATA_DIR", data_dir);
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

struct Plant {
  std::string table;  // under recipes/
  std::string from;
  std::string to;
  std::string says;  // a part of the error line
};

TEST(KnowledgeCli, ATypoInEachTableExitsTwoWithFileAndLine) {
  const std::vector<Plant> plants = {
      {"torch-wheels.toml", "\n[[wheel]]\n", "\n[[wheels]]\n", "did you mean [[wheel]]?"},
      {"torch-wheels.toml", "\nplatform = \"aarch64\"", "\nplatfrom = \"aarch64\"", "did you mean 'platform'?"},
      {"torch-wheels.toml", "\nconfidence = \"UNVERIFIED\"", "\nconfidence = \"unverifed\"", "'unverifed'"},
      {"torch-wheels.toml", "\nplatform = \"x86_64\"", "\nplatform = \"linux\"", "'linux' is not a known word"},
      {"torch-wheels.toml", "\npython = \"3.10\"", "\npyhton = \"3.10\"", "did you mean 'python'?"},
      {"gpus.toml", "\ntegra = true", "\ntegra = \"yes\"", "must be true or false"},
      {"gpus.toml", "\ncc = \"8.7\"", "\ncc = 8.7", "must be a compute capability"},
      {"toolkits.toml", "\n[[nvcc_arch]]\n", "\n[[nvcc_archs]]\n", "did you mean [[nvcc_arch]]?"},
      {"toolkits.toml", "\nwindows = \"", "\nwindow = \"", "did you mean 'windows'?"},
      {"drivers.toml", "\nlast_branch = ", "\nlast_brnach = ", "did you mean 'last_branch'?"},
      {"extensions.toml", "\ntorch_abi = true", "\ntorch_abi = 1", "must be true or false"},
      {"extensions.toml", "\n[[extension_wheel]]\n", "\n[[extension_wheels]]\n", "[[extension_wheels]]"},
      {"triton-ptxas.toml", "\nptxas_blackwell = ", "\nptxas_blackwel = ", "did you mean 'ptxas_blackwell'?"},
      {"ngc-pytorch.toml", "\"arm64-sbsa\"]", "\"arm64_sbsa\"]", "did you mean 'arm64-sbsa'?"},
      {"ngc-pytorch.toml", "\n[[release]]\n", "\n[[releases]]\n", "did you mean [[release]]?"},
      {"gpu-peaks.toml", "\nfp16 = ", "\nfp_16 = ", "did you mean 'fp16'?"},
      {"app-images.toml", "\nproject_version = ", "\nproject_verison = ", "did you mean 'project_version'?"},
      {"app-images.toml", "platforms = [\"arm64\"]", "platforms = [\"aarch64\"]", "'aarch64'"},
      {"build/pytorch.toml", "\n[[front_end.step]]\n", "\n[[front_end.steps]]\n", "did you mean [[step]]?"},
      {"build/flash-attn.toml", "\narch_format = \"flash_attn\"", "\narch_format = \"flash-attn\"",
       "did you mean 'flash_attn'?"},
      {"build/vllm.toml", "\nper_job_mib = ", "\nper_job_mb = ", "did you mean 'per_job_mib'?"},
  };
  std::vector<std::string> tables = {"gpu-peaks.toml"};
  for (const auto& entry : std::filesystem::directory_iterator(k_source + "/recipes")) {
    if (entry.path().extension() == ".toml" && entry.path().filename() != "gpu-peaks.toml")
      tables.push_back(entry.path().filename().string());
  }
  for (const auto& entry : std::filesystem::directory_iterator(k_source + "/recipes/build"))
    tables.push_back("build/" + entry.path().filename().string());
  // Every table and build recipe gets at least one typo.
  for (const std::string& table : tables) {
    EXPECT_TRUE(std::ranges::any_of(plants, [&](const Plant& p) { return p.table == table; }) ||
                table.starts_with("build/"))
        << table << " has no planted typo here";
  }
  std::vector<Plant> all = plants;
  for (const std::string& table : tables) {
    if (table.starts_with("build/")) all.push_back({table, "\ndescription = ", "\ndescripton = ", "'descripton'"});
  }
  for (const Plant& plant : all) {
    DataCopy data;
    const int line = data.replace(plant.table, plant.from, plant.to);
    const bool peaks = plant.table == "gpu-peaks.toml";
    auto r = peaks ? torchfix({"tune"}, data.dir()) : torchfix({"doctor", "--snapshot", k_h200}, data.dir());
    const std::string command = peaks ? "torchfix tune: " : "torchfix doctor: ";
    EXPECT_EQ(r.exit_code, 2) << plant.table << " " << plant.to << ": " << r.out << r.err;
    EXPECT_TRUE(r.err.starts_with(command)) << r.err;
    EXPECT_NE(r.err.find("recipes/" + plant.table + ":" + std::to_string(line) + ": "), std::string::npos)
        << plant.table << " line " << line << ": " << r.err;
    EXPECT_NE(r.err.find(plant.says), std::string::npos) << r.err;
    EXPECT_EQ(std::ranges::count(r.err, '\n'), 1) << r.err;
  }
}

TEST(KnowledgeCli, ShippedTablesLoadAndDoctorRuns) {
  auto r = torchfix({"doctor", "--snapshot", k_h200}, DataCopy().dir());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

// What a user reads cites public sources only: no build plan and no doctor
// report names the maintainers' notes (shared/facts/...) or the tables' raw
// UNVERIFIED marker, whose plain words are "not confirmed".
TEST(KnowledgeCli, PlansAndReportsCiteOnlyPublicSources) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const std::string data = k_source;
  std::vector<std::vector<std::string>> runs;
  for (const auto& e : std::filesystem::directory_iterator(data + "/recipes/build")) {
    const std::string recipe = e.path().stem().string();
    if (recipe == "cuda-extension") continue;  // needs a source tree (--src)
    runs.push_back({"build", recipe, "--gpu", "RTX 5090", "--gpu", "A100", "--dry-run", "-vv"});
  }
  runs.push_back({"build", "pytorch", "--ref", "v2.12.0", "--gpu", "RTX 5090", "--dry-run", "-vv"});
  for (const auto& e : std::filesystem::directory_iterator(k_source + "/tests/fixtures/snapshots")) {
    runs.push_back({"doctor", "--snapshot", e.path().string(), "-vv"});
    runs.push_back({"doctor", "--snapshot", e.path().string(), "--platform", "windows", "-vv"});
  }
  ASSERT_GT(runs.size(), 20U);
  for (const auto& args : runs) {
    auto r = torchfix(args, data);
    const std::string all = r.out + r.err;
    EXPECT_LE(r.exit_code, 1) << args[1] << ": " << r.err;
    EXPECT_EQ(all.find("shared/facts"), std::string::npos) << args[0] << " " << args[1] << ":\n" << all;
    EXPECT_EQ(all.find("UNVERIFIED"), std::string::npos) << args[0] << " " << args[1] << ":\n" << all;
  }
}

// docs/knowledge.md "Add a torch release", step by step, for a synthetic 2.16
// with the variants and Python range of 2.15.
void add_release_216(const DataCopy& data) {
  // Step 1: a [[wheel]] row per variant (here one, x86_64 cu132; its arch list UNVERIFIED until measured).
  data.append("torch-wheels.toml",
              "\n[[wheel]]\nmin = \"2.16\"\nmax = \"2.16\"\nvariant = \"cu132\"\n"
              "arch_list = \"7.5;8.0;8.6;9.0;10.0;12.0\"\nconfidence = \"UNVERIFIED\"\n"
              "source = \"synthetic release of tests/cli/knowledge_cli_test.cpp\"\n");
  // Steps 2 and 3: extend the [[pypi_default]] rows of every platform and the [[torch_python]] row.
  for (const char* platform : {"x86_64", "aarch64", "windows"}) {
    data.replace("torch-wheels.toml", "max = \"2.15\"\nplatform = \"" + std::string(platform) + "\"",
                 "max = \"2.16\"\nplatform = \"" + std::string(platform) + "\"");
  }
  data.replace("torch-wheels.toml", "max = \"2.15\"\npython_min", "max = \"2.16\"\npython_min");
  // The aarch64 cu130 row goes on too (step 1 for the other platform).
  data.replace("torch-wheels.toml", "max = \"2.15\"\nvariant = \"cu130\"\nplatform = \"aarch64\"",
               "max = \"2.16\"\nvariant = \"cu130\"\nplatform = \"aarch64\"");
}

TEST(KnowledgeCli, ATorchReleaseAddedByTheDocsStepsIsUsedByTheDoctor) {
  DataCopy data;
  const std::vector<std::string> what_if = {"doctor", "--snapshot", k_h200, "--torch", "2.16.0+cu132"};
  const std::vector<std::string> fix = {"doctor", "--snapshot", k_rtx5090d, "--driver", "595.45.04"};
  auto before = torchfix(what_if, data.dir());
  EXPECT_NE(before.out.find("torch 2.16.0+cu132: cannot tell which GPU archs"), std::string::npos) << before.out;
  auto fix_before = torchfix(fix, data.dir());
  EXPECT_EQ(fix_before.out.find("torch 2.16"), std::string::npos) << fix_before.out;

  add_release_216(data);
  auto loaded = load_knowledge(data.dir());
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_TRUE(loaded->torch_python(Version({2, 16})));
  EXPECT_TRUE(loaded->pypi_default(Version({2, 16}), "aarch64"));

  auto after = torchfix(what_if, data.dir());
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  EXPECT_NE(after.out.find("torch 2.16.0+cu132 runs on GPU 0 (NVIDIA H200, 9.0) with sm_90 SASS"), std::string::npos)
      << after.out;
  auto fix_after = torchfix(fix, data.dir());
  EXPECT_NE(fix_after.out.find("Install torch 2.16.x from the cu132 index"), std::string::npos) << fix_after.out;
  EXPECT_NE(fix_after.out.find("'torch==2.16.*'"), std::string::npos) << fix_after.out;
}

}  // namespace
}  // namespace torchfix
