#include "core/situation/snapshot.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

TEST(Snapshot, RoundTripsThroughJson) {
  Snapshot s;
  s.torchfix_version = "0.1.0";
  s.platform.machine = "x86_64";
  s.platform.cuda_visible_devices = "1";
  s.platform.cpus = 64;
  s.platform.memory_available_bytes = 400ull << 30;
  s.platform.cpu_quota = 6.5;
  s.platform.cpu_quota_source = "cgroup /sys/fs/cgroup/cpu.max";
  s.platform.memory_limit_bytes = 20ull << 30;
  s.platform.memory_limit_source = "cgroup /sys/fs/cgroup/memory.max 24.0 GiB - 4.0 GiB used";
  s.platform.windows = true;
  s.driver.version = Version::parse("580.159.04");
  s.driver.cuda_version = Version::from_cuda_int(13000);
  s.gpus.push_back({0, "NVIDIA H200", ComputeCapability{9, 0}, 150ull << 30, "nvml"});
  s.gpus.push_back({1, "mystery", std::nullopt, std::nullopt, "nvidia-smi"});
  s.toolkits.push_back({"/usr/local/cuda/bin/nvcc",
                        "PATH",
                        Version::parse("13.0.88"),
                        {Arch::parse("sm_90").value()},
                        "nvcc --list-gpu-code"});
  s.compilers.push_back({"/usr/bin/g++", "PATH", CompilerFamily::gcc, Version::parse("12.2.0")});
  PythonEnv py;
  py.interpreter = "/usr/bin/python3";
  py.status = PythonStatus::ok;
  py.torch = TorchBuild{"2.11.0+cu130", "13.0", std::nullopt, parse_arch_flags("sm_75 sm_90 compute_120"), 91900, "/x"};
  py.distributions["triton"] = "3.6.0";
  py.kernels.push_back({"causal-conv1d", "1.5.0", {{"/x/_C.so", {{{Arch::parse("sm_80").value()}, 3}}, ""}}, "12.8"});
  py.index_pages.push_back({"https://download.pytorch.org/whl/cu130",
                            "https://mirror.example/whl/cu130",
                            IndexAnswer::listed,
                            "PEP 503 HTML",
                            true,
                            "",
                            {"torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"}});
  s.pythons.push_back(py);
  s.notes.push_back({"nvml", "libnvidia-ml.so.1 not found"});

  const auto json = to_json(s);
  auto back = snapshot_from_json(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(to_json(*back), json);
  EXPECT_EQ(back->gpus[0].cc, (ComputeCapability{9, 0}));
  EXPECT_FALSE(back->gpus[1].cc);
  EXPECT_EQ(back->pythons[0].torch->arch_flags.size(), 3u);
  EXPECT_EQ(back->pythons[0].kernels[0].binaries[0].groups[0].modules, 3);
  // Index truth replays: the resolver reads the probed pages from the snapshot.
  ASSERT_EQ(back->pythons[0].index_pages.size(), 1u);
  EXPECT_EQ(back->pythons[0].index_pages[0].answer, IndexAnswer::listed);
  EXPECT_EQ(back->pythons[0].index_pages[0].files.size(), 1u);
  // The facts build plans its jobs from: a replay must carry them.
  EXPECT_EQ(back->platform.cpu_quota, 6.5);
  EXPECT_EQ(back->platform.memory_limit_bytes, 20ull << 30);
  EXPECT_EQ(back->platform.memory_limit_source, s.platform.memory_limit_source);
  EXPECT_TRUE(back->platform.windows);
}

TEST(Snapshot, RejectsBadInputWithTheField) {
  auto r =
      snapshot_from_json(nlohmann::json::parse(R"({"schema_version": 1, "gpus": [{"compute_capability": "twelve"}]})"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("compute_capability"), std::string::npos) << r.error().message;
  EXPECT_FALSE(snapshot_from_json(nlohmann::json::parse(R"({"schema_version": 99})")));
  EXPECT_FALSE(snapshot_from_json(nlohmann::json::parse("[1,2]")));
  EXPECT_FALSE(snapshot_from_json(nlohmann::json::parse(R"({"schema_version": 1, "pythons": [{}]})")));
}

TEST(ArchFlags, ParsesTorchAndGencodeForms) {
  auto archs = parse_arch_flags("sm_50 sm_60 sm_70 compute_90");
  ASSERT_EQ(archs.size(), 4u);
  EXPECT_EQ(archs[3].name(), "compute_90");
}

}  // namespace
}  // namespace torchfix
