// GPU names as nvidia-smi and NVML print them, resolved against the real
// recipes/gpus.toml; typos get the nearest product.

#include "core/facts/gpu_name.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/repo_knowledge.hpp"
#include "core/base/nearest.hpp"

namespace torchfix {
namespace {

using testing::repo_knowledge;

struct Named {
  const char* name;
  const char* cc;
};

// Names as nvidia-smi --query-gpu=name (NVML's nvmlDeviceGetName) prints
// them on the named boards: from the snapshots under tests/fixtures, from
// docs/gpu-runs (the lent H200), from NVIDIA's product and NVML pages, and
// as users paste them into issues (memory, form factor and MIG words kept).
constexpr Named k_real_names[] = {
    {"NVIDIA H100 80GB HBM3", "9.0"},
    {"NVIDIA H100 PCIe", "9.0"},
    {"NVIDIA H100 NVL", "9.0"},
    {"H100 SXM5", "9.0"},
    {"NVIDIA H200", "9.0"},
    {"NVIDIA H200 NVL", "9.0"},
    {"NVIDIA GH200 480GB", "9.0"},
    {"NVIDIA GH200 144G HBM3e", "9.0"},
    {"NVIDIA H800", "9.0"},
    {"NVIDIA H100 80GB HBM3 MIG 1g.10gb", "9.0"},
    {"NVIDIA B200", "10.0"},
    {"NVIDIA GB200", "10.0"},
    {"NVIDIA A100-SXM4-40GB", "8.0"},
    {"NVIDIA A100-SXM4-80GB", "8.0"},
    {"NVIDIA A100 80GB PCIe", "8.0"},
    {"NVIDIA A100-PCIE-40GB", "8.0"},
    {"NVIDIA A100-SXM4-40GB MIG 3g.20gb", "8.0"},
    {"NVIDIA A10", "8.6"},
    {"NVIDIA A10G", "8.6"},
    {"NVIDIA A40", "8.6"},
    {"NVIDIA RTX A6000", "8.6"},
    {"NVIDIA L4", "8.9"},
    {"NVIDIA L40S", "8.9"},
    {"NVIDIA RTX 6000 Ada Generation", "8.9"},
    {"NVIDIA RTX 4000 SFF Ada Generation", "8.9"},
    {"NVIDIA GeForce RTX 4090", "8.9"},
    {"NVIDIA GeForce RTX 5090", "12.0"},
    {"NVIDIA GeForce RTX 5090 D", "12.0"},
    {"NVIDIA GeForce RTX 5070 Ti", "12.0"},
    {"NVIDIA GeForce RTX 5080 Laptop GPU", "12.0"},
    {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"},
    {"NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "12.0"},
    {"NVIDIA GB10", "12.1"},
    {"Tesla V100-SXM2-32GB", "7.0"},
    {"Tesla V100-PCIE-16GB", "7.0"},
    {"Tesla T4", "7.5"},
    {"Quadro RTX 6000", "7.5"},
    {"Tesla P100-PCIE-16GB", "6.0"},
    {"NVIDIA GeForce GTX 1080 Ti", "6.1"},
    {"Tesla K80", "3.7"},
    {"Orin", "8.7"},
    {"Orin (nvgpu)", "8.7"},
    {"Jetson Thor", "11.0"},
    {"NVIDIA Jetson AGX Thor", "11.0"},
};

TEST(GpuName, EveryRealNameResolves) {
  for (const Named& n : k_real_names) {
    auto cc = repo_knowledge().resolve_gpu(n.name);
    ASSERT_TRUE(cc) << n.name << ": " << cc.error().message;
    EXPECT_EQ(cc->str(), n.cc) << n.name;
  }
}

TEST(GpuName, EveryNameInTheSnapshotFixturesResolvesToItsCapability) {
  const std::filesystem::path dir = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    auto json = nlohmann::json::parse(in, nullptr, false);
    if (!json.is_object() || !json.contains("gpus") || !json["gpus"].is_array()) continue;
    for (const auto& gpu : json["gpus"]) {
      if (!gpu.contains("name") || !gpu.contains("compute_capability") || !gpu["name"].is_string()) continue;
      const std::string name = gpu["name"];
      auto cc = repo_knowledge().resolve_gpu(name);
      ASSERT_TRUE(cc) << entry.path() << ": " << name << ": " << cc.error().message;
      EXPECT_EQ(cc->str(), gpu["compute_capability"].get<std::string>()) << entry.path() << ": " << name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
}

TEST(GpuName, EveryTableNameResolvesToItsOwnRow) {
  for (const GpuProduct& product : repo_knowledge().gpus) {
    for (const std::string& name : product.names) {
      auto cc = repo_knowledge().resolve_gpu(name);
      ASSERT_TRUE(cc) << name << ": " << cc.error().message;
      EXPECT_EQ(*cc, product.cc) << name;
      cc = repo_knowledge().resolve_gpu("NVIDIA " + name);
      ASSERT_TRUE(cc) << name << ": " << cc.error().message;
      EXPECT_EQ(*cc, product.cc) << name;
    }
  }
}

TEST(GpuName, TyposGetTheNearestProduct) {
  for (const auto& [typo, meant] :
       {std::pair{"5070ti", "RTX 5070 Ti' (12.0)"}, std::pair{"rtx5090", "RTX 5090' (12.0)"},
        std::pair{"H1OO", "'H100' (9.0)"}, std::pair{"rtx 4900", "RTX 4090' (8.9)"}}) {
    auto cc = repo_knowledge().resolve_gpu(typo);
    ASSERT_FALSE(cc) << typo;
    EXPECT_NE(cc.error().message.find("did you mean"), std::string::npos) << cc.error().message;
    EXPECT_NE(cc.error().message.find(meant), std::string::npos) << cc.error().message;
  }
  auto far = repo_knowledge().resolve_gpu("no such GPU 9000");
  ASSERT_FALSE(far);
  EXPECT_EQ(far.error().message.find("did you mean"), std::string::npos) << far.error().message;
}

TEST(GpuName, MemoryAndFormFactorWordsAreNotTheProduct) {
  EXPECT_EQ(gpu_name_words("NVIDIA H100 80GB HBM3"), (std::vector<std::string>{"h100"}));
  EXPECT_EQ(gpu_name_words("Tesla V100-SXM2-32GB"), (std::vector<std::string>{"v100"}));
  EXPECT_EQ(gpu_name_words("NVIDIA RTX 6000 Ada Generation"), (std::vector<std::string>{"rtx", "6000", "ada"}));
}

TEST(Nearest, PicksTheClosestWordOrNone) {
  EXPECT_EQ(edit_distance("--jsn", "--json"), 1u);
  EXPECT_EQ(nearest_word("--jsn", {"--json", "--python", "--gpu"}), "--json");
  EXPECT_EQ(nearest_word("doktor", {"doctor", "inspect"}), "doctor");
  EXPECT_EQ(nearest_word("--versoin", {"--version", "--verbose"}), "--version");
  EXPECT_EQ(nearest_word("xyzzy", {"doctor", "inspect"}), "");
}

}  // namespace
}  // namespace torchfix
