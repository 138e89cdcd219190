// What-if runs of `torchfix doctor` through the real binary: the situations
// users describe, and one clear line with exit 2 for absurd values.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

ProcessResult doctor(std::vector<std::string> args) {
  Environment env{{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}};
  SystemProcessRunner runner;
  args.insert(args.begin(), "doctor");
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

// A machine with only CUDA 13.0 installed, described as a snapshot.
std::string cuda13_machine(const TempDir& dir) {
  const auto path = dir / "cuda13.json";
  write_file(path, R"({"schema_version": 1, "platform": {"machine": "x86_64", "cpus": 8},
    "toolkits": [{"nvcc": "/usr/local/cuda-13.0/bin/nvcc", "origin": "PATH", "version": "13.0.88",
                  "archs": ["sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100", "sm_103",
                            "sm_110", "sm_120", "sm_121"], "archs_source": "nvcc --list-gpu-code"}]})");
  return path.string();
}

// The old doctor said "SASS for 6.1 needs CUDA >= 1.0" and suggested
// CUDA_HOME=/usr/local/cuda-1.0; sm_61 ends at CUDA 12.9.
TEST(WhatIfCli, PascalOnCuda13NamesTheLastToolkitThatCompilesIt) {
  TempDir dir;
  auto r = doctor({"--snapshot", cuda13_machine(dir), "--gpu", "GTX 1080 Ti", "--torch", "2.8.0+cu128", "-v"});
  EXPECT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("CUDA <= 12.9"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("CUDA >= 1.0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("cuda-1.0"), std::string::npos) << r.out;
}

TEST(WhatIfCli, OldDriversAndTorchWithoutVariant) {
  TempDir dir;
  const std::string machine = cuda13_machine(dir);
  auto old = doctor(
      {"--snapshot", machine, "--gpu", "GTX 1080 Ti", "--driver", "470.82.01", "--torch", "1.13.1+cu117", "--json"});
  ASSERT_NE(old.exit_code, 2) << old.err;
  const auto json = nlohmann::json::parse(old.out);
  // The table's answer is the Situation's; the snapshot keeps what was given.
  EXPECT_EQ(json["situation"]["driver"]["cuda"], "11.4");
  auto pypi = doctor({"--snapshot", machine, "--gpu", "V100", "--torch", "2.8.0", "--json"});
  ASSERT_NE(pypi.exit_code, 2) << pypi.err;
  EXPECT_EQ(nlohmann::json::parse(pypi.out)["snapshot"]["pythons"][0]["torch"]["version"], "2.8.0+cu128");
}

TEST(WhatIfCli, AbsurdValuesAreOneLineAndExitTwo) {
  TempDir dir;
  const std::string machine = cuda13_machine(dir);
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{{"--gpu", "sm_999"},
                                                                                   {"--gpu", "sm_1200"},
                                                                                   {"--driver", "300.10"},
                                                                                   {"--platform", "macos"},
                                                                                   {"--with", "flash-attn"},
                                                                                   {"--python-version", "3"}}) {
    std::vector<std::string> args = {"--snapshot", machine};
    args.insert(args.end(), bad.begin(), bad.end());
    auto r = doctor(args);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << " " << bad[1] << ": " << r.out;
    EXPECT_EQ(std::ranges::count(r.err, '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(WhatIfCli, OldGpusByNameAndPlatforms) {
  TempDir dir;
  const std::string machine = cuda13_machine(dir);
  for (const char* gpu : {"K40c", "GT 710", "Tesla K80", "Jetson TX2", "RTX 5080 Laptop GPU"}) {
    auto r = doctor({"--snapshot", machine, "--gpu", gpu, "--torch", "2.6.0+cu126"});
    EXPECT_NE(r.exit_code, 2) << gpu << ": " << r.err;
  }
  for (const char* platform : {"linux-x86_64", "linux-aarch64", "windows", "wsl2", "x86_64", "aarch64"}) {
    auto r = doctor({"--snapshot", machine, "--platform", platform, "--gpu", "RTX 4090", "--torch", "2.7.0+cu128"});
    EXPECT_NE(r.exit_code, 2) << platform << ": " << r.err;
  }
}

// A torch outside the wheel table (before 2.0, a nightly, a local build) is
// judged by what its CUDA can hold (recipes/toolkits.toml): CUDA 11.7 emits
// nothing for 12.0, so 1.13.1+cu117 cannot run on an RTX 5090 and gets the
// usual torch fix; the doctor said "cannot tell" with exit 0 before.
TEST(WhatIfCli, TorchOutsideTheTablesIsJudgedByItsCuda) {
  TempDir dir;
  const std::string machine = cuda13_machine(dir);
  auto old = doctor({"--snapshot", machine, "--gpu", "RTX 5090", "--driver", "580.65.06", "--torch", "1.13.1+cu117"});
  EXPECT_EQ(old.exit_code, 1) << old.err << old.out;
  EXPECT_NE(old.out.find("torch 1.13.1+cu117 cannot run on GPU 0"), std::string::npos) << old.out;
  EXPECT_NE(old.out.find("SASS for 12.0 needs CUDA >= 12.8"), std::string::npos) << old.out;
  EXPECT_NE(old.out.find("Install torch"), std::string::npos) << old.out;
  EXPECT_EQ(old.out.find("cannot tell which GPU archs"), std::string::npos) << old.out;

  // A cu130 nightly on 12.0: CUDA 13.0 can hold sm_120, so no failure.
  auto nightly = doctor(
      {"--snapshot", machine, "--gpu", "RTX 5090", "--driver", "580.65.06", "--torch", "2.13.0.dev20261101+cu130"});
  EXPECT_EQ(nightly.exit_code, 0) << nightly.err << nightly.out;
  EXPECT_EQ(nightly.out.find("cannot run on"), std::string::npos) << nightly.out;

  // 1.13.1+cu117 on an A100: CUDA 11.7 can hold 8.0; whether it does is not known.
  auto a100 = doctor({"--snapshot", machine, "--gpu", "A100", "--driver", "580.65.06", "--torch", "1.13.1+cu117"});
  EXPECT_EQ(a100.exit_code, 0) << a100.err << a100.out;
  EXPECT_EQ(a100.out.find("cannot run on"), std::string::npos) << a100.out;
  EXPECT_NE(a100.out.find("CUDA 11.7 can hold kernels for 3.5 up to 8.7"), std::string::npos) << a100.out;
  EXPECT_NE(a100.out.find("whether this build has 8.0 is not known"), std::string::npos) << a100.out;
}

// Rubin (10.7): the R615 branch drives it (recipes/drivers.toml), a CUDA 11.8
// build holds nothing for it, sm_100 SASS runs on it (same major), and an
// nvcc before 13.4 builds 10.3+PTX for it, never sm_107.
TEST(WhatIfCli, RubinIsJudgedByItsBranchAndTheArchRules) {
  TempDir dir;
  const std::string machine = cuda13_machine(dir);
  auto r580 = doctor({"--snapshot", machine, "--gpu", "Rubin", "--driver", "580.65.06", "--torch", "2.9.0+cu130"});
  EXPECT_EQ(r580.exit_code, 1) << r580.err << r580.out;
  EXPECT_NE(r580.out.find("cannot drive a Rubin GPU (10.7): it needs a driver >= 615"), std::string::npos) << r580.out;
  EXPECT_NE(r580.out.find("TORCH_CUDA_ARCH_LIST=10.3+PTX"), std::string::npos) << r580.out;
  EXPECT_NE(r580.out.find("runs on GPU 0 (Rubin, 10.7) with sm_100 SASS"), std::string::npos) << r580.out;

  auto cu118 = doctor({"--snapshot", machine, "--gpu", "10.7", "--driver", "R615", "--torch", "2.5.1+cu118"});
  EXPECT_EQ(cu118.exit_code, 1) << cu118.err << cu118.out;
  EXPECT_NE(cu118.out.find("torch 2.5.1+cu118 cannot run on GPU 0 (Rubin, 10.7)"), std::string::npos) << cu118.out;
  EXPECT_EQ(cu118.out.find("cannot drive"), std::string::npos) << cu118.out;
  EXPECT_EQ(cu118.out.find("sm_107"), std::string::npos) << cu118.out;
}

// A what-if on this machine says which facts it keeps from this machine.
TEST(WhatIfCli, WhatIfOnAProbedMachineSaysWhatItBorrows) {
  auto r = doctor({"--no-binaries", "--gpu", "H100", "--timeout", "5"});
  EXPECT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("what-if: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("are this machine's (probed)"), std::string::npos) << r.err;
  // A what-if torch is not this machine's: no "run with --import" for it.
  TempDir dir;
  auto t = doctor({"--snapshot", cuda13_machine(dir), "--gpu", "H100", "--torch", "2.1.0+cu121", "-v"});
  EXPECT_EQ(t.out.find("torchfix doctor --import"), std::string::npos) << t.out;
}

// The same torch release from another CUDA 12 index keeps an extension built
// against it: vllm 0.9.1 (torch==2.7.0) stays beside torch 2.7.0 moved from
// cu126 to cu128 (field trial 2026-12-06, report 10, vllm-project/vllm#19906).
TEST(WhatIfCli, AVariantChangeOfTheSameTorchKeepsItsExtensions) {
  TempDir dir;
  auto r = doctor({"--snapshot", cuda13_machine(dir), "--platform", "linux-x86_64", "--gpu", "RTX 5080", "--driver",
                   "575.57.08", "--torch", "2.7.0", "--with", "vllm==0.9.1", "--python-version", "3.12"});
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_NE(r.out.find("Run first: python3 -m pip install --force-reinstall torch==2.7.0 --index-url "
                       "https://download.pytorch.org/whl/cu128"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("vllm 0.9.1 moves to 0.9.2"), std::string::npos) << r.out;
}

// PyTorch's aarch64 cu128 wheel of 2.9 has no sm_110 and no PTX (OpenRAL/openral
// PR #167, measured on a Thor): the what-if names the cu130 wheel instead of
// "cannot tell" (field trial 2026-12-06, report 7).
TEST(WhatIfCli, ThorWithTheAarch64Cu128WheelGetsTheCu130One) {
  TempDir dir;
  auto r = doctor({"--snapshot", cuda13_machine(dir), "--platform", "linux-aarch64", "--gpu", "Jetson AGX Thor",
                   "--driver", "580.00", "--torch", "2.9.1+cu128"});
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("torch 2.9.1+cu128 cannot run on GPU 0 (Jetson AGX Thor, 11.0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pip install --force-reinstall torch==2.9.1 --index-url https://download.pytorch.org/whl/cu130"),
            std::string::npos)
      << r.out;
}

}  // namespace
// CUDA 13.x's Table 3 bundles no Windows driver, so on native Windows the
// Linux floor (580.65.06) must not be said as a Windows minimum: the fix asks
// for the minor-version floor (>= 580, the R580 branch), and a Windows R580
// driver runs a cu130 torch.
TEST(WhatIfCli, WindowsCuda13FloorIsNoLinuxNumber) {
  TempDir dir;
  const std::string machine = cuda13_machine(dir);
  auto old = doctor({"--snapshot", machine, "--platform", "windows", "--driver", "575.00", "--torch", "2.9.0+cu130",
                     "--gpu", "RTX 5090"});
  ASSERT_NE(old.exit_code, 2) << old.err;
  EXPECT_NE(old.out.find("The driver is too old for torch 2.9.0+cu130"), std::string::npos) << old.out;
  EXPECT_NE(old.out.find("Upgrade the NVIDIA driver on Windows to >= 580 (R580 or newer)"), std::string::npos)
      << old.out;
  EXPECT_EQ(old.out.find("Windows to >= 580.65.06"), std::string::npos) << old.out;
  EXPECT_NE(old.out.find("580.65.06 on Linux; the release notes give no Windows driver"), std::string::npos) << old.out;
  auto r580 = doctor({"--snapshot", machine, "--platform", "windows", "--driver", "581.42", "--torch", "2.9.0+cu130",
                      "--gpu", "RTX 5090"});
  ASSERT_NE(r580.exit_code, 2) << r580.err;
  EXPECT_EQ(r580.out.find("The driver is too old"), std::string::npos) << r580.out;
  EXPECT_EQ(r580.out.find("Upgrade the NVIDIA driver"), std::string::npos) << r580.out;
}

}  // namespace torchfix
