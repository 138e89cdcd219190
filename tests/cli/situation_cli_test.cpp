// The facts every decision reads (core/situation/situation.hpp), through the real
// binary: the platform and its driver numbering (Windows, Tegra), the driver's
// branch and CUDA, identical GPUs as one finding, quoting per shell, and the
// answers that were wrong before the Situation (issue 15, "Wrong today").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"
#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::commands_of;
using testing::fixture;
using testing::has;
using testing::k_fixtures;
using testing::save;
using testing::TempDir;
using testing::torchfix;
using testing::write_file;

// Windows numbering: --platform windows and machine "windows" are one
// platform. 637f9db read the what-if's Windows driver in Linux numbering:
// Blackwell's floor as the Linux 570.26, `sudo apt` as the fix, NGC
// containers on native Windows, POSIX quoting.
TEST(SituationCli, WindowsReadsWindowsNumbersAndPrintsPowerShell) {
  TempDir dir;
  nlohmann::json machine = fixture("F2-gtx1080ti-torch28-cu128.json");
  machine["platform"]["machine"] = "windows";
  machine["platform"]["os"] = "Windows 11";
  const std::string by_machine = save(dir, "machine-windows.json", machine);
  const std::string flag = k_fixtures + "F2-gtx1080ti-torch28-cu128.json";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--snapshot", flag, "--platform", "windows"}, {"--snapshot", by_machine}}) {
    std::vector<std::string> run = {"doctor", "--json", "--driver", "560.94"};
    run.insert(run.end(), args.begin(), args.end());
    SCOPED_TRACE(args.back());
    auto r = torchfix(run);
    ASSERT_NE(r.exit_code, 2) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["situation"]["platform"], "windows");
    EXPECT_EQ(j["situation"]["driver"]["cuda"], "12.6");  // Windows 560.76 is CUDA 12.6's floor
    const std::string commands = commands_of(j);
    EXPECT_FALSE(has(commands, "sudo apt")) << commands;
    EXPECT_FALSE(has(commands, "docker run")) << commands;
    EXPECT_FALSE(has(j.dump(), "570.26")) << "the Linux floor of CUDA 12.8";
    EXPECT_TRUE(has(commands, "'torch==")) << commands;  // PowerShell quotes a word with '='
  }
  // R580 on Windows is 580.xx-582.xx: 581.29 still drives Pascal.
  auto pascal = torchfix({"doctor", "--snapshot", flag, "--platform", "windows", "--driver", "581.29"});
  ASSERT_NE(pascal.exit_code, 2) << pascal.err;
  EXPECT_FALSE(has(pascal.out, "no longer drives")) << pascal.out;
  EXPECT_FALSE(has(pascal.out, "sudo apt")) << pascal.out;
  EXPECT_TRUE(has(pascal.out, "supports CUDA 13.0 (Windows numbering)")) << pascal.out;
}

// One Situation, one arch list: 637f9db's TORCH_CUDA_ARCH_LIST fix said
// '12.1+PTX' while its own toolchain line and env said 12.0+PTX (nvcc 12.8
// has no sm_121).
TEST(SituationCli, ArchListFixEqualsToolchainAndEnv) {
  TempDir dir;
  nlohmann::json g = fixture("gb10-torch211-cu130.json");
  g["toolkits"] = nlohmann::json::parse(
      R"([{"nvcc": "/usr/local/cuda-12.8/bin/nvcc", "origin": "PATH", "version": "12.8.93", "archs": [],
           "archs_source": "table"}])");
  g["compilers"] =
      nlohmann::json::parse(R"([{"path": "/usr/bin/g++", "origin": "PATH", "family": "gcc", "version": "12.2.0"}])");
  g["environment"]["TORCH_CUDA_ARCH_LIST"] = "8.0";
  for (auto& p : g["pythons"]) {
    if (p.contains("torch") && p["torch"].is_object()) {
      p["torch"]["cuda"] = "12.8";
      p["torch"]["version"] = "2.8.0+cu128";
    }
  }
  const std::string snapshot = save(dir, "gb10-nvcc128.json", g);
  auto doctor = torchfix({"doctor", "--json", "--snapshot", snapshot});
  ASSERT_NE(doctor.exit_code, 2) << doctor.err;
  const auto j = nlohmann::json::parse(doctor.out);
  std::string fix;
  std::string line;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "env.arch-list" && !f["fixes"].empty()) fix = f["fixes"][0]["commands"][0];
    if (f["id"] == "toolchain.decision") line = f["title"];
  }
  EXPECT_EQ(fix, "export TORCH_CUDA_ARCH_LIST=12.0+PTX");
  EXPECT_TRUE(has(line, "TORCH_CUDA_ARCH_LIST=12.0+PTX")) << line;
  EXPECT_EQ(j["situation"]["arch_list"], "12.0+PTX");
  auto env = torchfix({"env", "--shell", "bash", "--snapshot", snapshot});
  EXPECT_TRUE(has(env.out, "TORCH_CUDA_ARCH_LIST=12.0+PTX") || has(env.out, "TORCH_CUDA_ARCH_LIST='12.0+PTX'"))
      << env.out;
}

// Tegra: the driver comes with L4T. Thor's 580.00 is CUDA 13.0; 637f9db read
// it against the desktop floors as 12.9 ("driver too old" for a working
// Thor, a CUDA 12.9 build for sm_110 on a broken one).
TEST(SituationCli, ThorDriverIsReadThroughL4t) {
  const std::string orin = k_fixtures + "F16-orin-jetpack6-pypi-torch211.json";
  auto r = torchfix(
      {"doctor", "--json", "--snapshot", orin, "--gpu", "Thor", "--driver", "580.00", "--torch", "2.9.0+cu130"});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["situation"]["platform"], "tegra");
  EXPECT_EQ(j["situation"]["driver"]["cuda"], "13.0");
  EXPECT_TRUE(has(j["situation"]["driver"]["cuda_source"].get<std::string>(), "[[l4t]]"));
  for (const auto& f : j["findings"]) EXPECT_NE(f["id"], "driver.too-old") << f["title"];
  EXPECT_FALSE(has(r.out, "CUDA 12.9 source build")) << r.out;
  EXPECT_FALSE(has(r.out, "supports CUDA 12.9")) << r.out;
  // The L4T release in a snapshot names JetPack and its CUDA.
  TempDir dir;
  nlohmann::json s = fixture("F16-orin-jetpack6-pypi-torch211.json");
  s["platform"]["l4t"] = "36.4.3";
  s["driver"]["cuda_version"] = nullptr;
  auto l4t = torchfix({"doctor", "--json", "--snapshot", save(dir, "orin-l4t.json", s)});
  ASSERT_NE(l4t.exit_code, 2) << l4t.err;
  const auto k = nlohmann::json::parse(l4t.out);
  EXPECT_EQ(k["situation"]["l4t"]["jetpack"], "6.1");
  EXPECT_EQ(k["situation"]["driver"]["cuda"], "12.6");
}

// --driver 570 is a branch, and R570 (the tool's own notation) says the
// same; 637f9db printed "driver 570 (R570) cannot drive a Blackwell ...
// upgrade to R570 or newer" and refused R570.
TEST(SituationCli, DriverBranchFormsAndR565) {
  const std::string h200 = k_fixtures + "h200-torch211-cu130.json";
  for (const char* branch : {"570", "R570"}) {
    SCOPED_TRACE(branch);
    auto r =
        torchfix({"doctor", "--snapshot", h200, "--gpu", "RTX 5090", "--driver", branch, "--torch", "2.8.0+cu128"});
    ASSERT_NE(r.exit_code, 2) << r.err;
    EXPECT_FALSE(has(r.out, "cannot drive")) << r.out;
    EXPECT_FALSE(has(r.out, "R570 or newer")) << r.out;
    EXPECT_TRUE(has(r.out, "NVIDIA driver R570, supports CUDA 12.8")) << r.out;
  }
  // R565 reports CUDA 12.7, between the 12.6 and 12.8 toolkits.
  auto r565 = torchfix({"doctor", "--snapshot", h200, "--driver", "565.57.01"});
  ASSERT_NE(r565.exit_code, 2) << r565.err;
  EXPECT_TRUE(has(r565.out, "NVIDIA driver 565.57.01, supports CUDA 12.7")) << r565.out;
}

// Identical GPUs are one finding and one fix: eight B200s behind R535.
TEST(SituationCli, EightIdenticalGpusAreOneFinding) {
  TempDir dir;
  nlohmann::json s = fixture("F14-b200-r535-torch211.json");
  const nlohmann::json gpu = s["gpus"][0];
  s["gpus"] = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) {
    nlohmann::json g = gpu;
    g["index"] = i;
    s["gpus"].push_back(g);
  }
  auto r = torchfix({"doctor", "--json", "--snapshot", save(dir, "b200x8.json", s)});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int found = 0;
  int unsupported = 0;
  for (const auto& f : j["findings"]) {
    if (f["id"] == "gpu.found") {
      ++found;
      EXPECT_TRUE(has(f["title"], "GPUs 0-7: 8x NVIDIA B200")) << f["title"];
      EXPECT_EQ(f["gpus"].size(), 8u);
    }
    if (f["id"] == "driver.gpu-unsupported") {
      ++unsupported;
      EXPECT_TRUE(has(f["title"], "GPUs 0-7 (8x NVIDIA B200, 10.0)")) << f["title"];
      EXPECT_FALSE(f["fixes"].empty());
    }
  }
  EXPECT_EQ(found, 1);
  EXPECT_EQ(unsupported, 1);
  EXPECT_EQ(j["situation"]["gpu_groups"].size(), 1u);
  EXPECT_EQ(j["situation"]["gpu_groups"][0]["count"], 8);
}

// The fleet never prescribes a source build for a group whose driver cannot
// drive its GPUs: the doctor, on the same snapshot, says only a driver
// upgrade helps. 637f9db offered `torchfix build pytorch` for B200 on R535.
TEST(SituationCli, FleetAgreesWithDoctorWhenTheDriverCannotDriveTheGpu) {
  TempDir dir;
  std::filesystem::copy_file(k_fixtures + "F14-b200-r535-torch211.json", dir / "b200.json");
  std::filesystem::copy_file(k_fixtures + "F2-gtx1080ti-torch28-cu128.json", dir / "gtx1080ti.json");
  auto fleet = torchfix({"fleet", "--snapshots", dir.path().string(), "--json"});
  ASSERT_NE(fleet.exit_code, 2) << fleet.err;
  const auto j = nlohmann::json::parse(fleet.out);
  for (const auto& env : j["environments"]) {
    const std::string text = env.dump();
    EXPECT_FALSE(has(text, "torchfix build pytorch")) << text;
    EXPECT_TRUE(has(text, "cannot drive")) << text;
  }
  auto doctor = torchfix({"doctor", "--snapshot", (dir / "b200.json").string()});
  EXPECT_TRUE(has(doctor.out, "No software-only fix")) << doctor.out;
  EXPECT_FALSE(has(doctor.out, "torchfix build pytorch")) << doctor.out;
}

// The Triton fix names paths with spaces as one word each (637f9db printed
// them bare: `export TRITON_PTXAS_PATH=/opt/my cuda/...`).
TEST(SituationCli, TritonFixQuotesPaths) {
  TempDir dir;
  nlohmann::json e = fixture("env-gb10-triton35.json");
  for (auto& p : e["pythons"]) p["interpreter"] = "/home/u/my env/bin/python";
  for (auto& t : e["toolkits"]) {
    std::string nvcc = t["nvcc"];
    if (const auto at = nvcc.find("/usr/local/"); at != std::string::npos) nvcc.replace(at, 11, "/opt/my cuda/");
    t["nvcc"] = nvcc;
  }
  auto r = torchfix({"doctor", "--snapshot", save(dir, "spaces.json", e)});
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(r.out, "export TRITON_PTXAS_PATH='/opt/my cuda/")) << r.out;
  EXPECT_TRUE(has(r.out, "'/home/u/my env/bin/python' -m pip install --force-reinstall 'torch==2.10.*'")) << r.out;
  EXPECT_FALSE(has(r.out, "=/opt/my cuda")) << r.out;
}

// Every subcommand that shows these facts, on every snapshot fixture, shows
// one Situation: the same platform, GPUs, driver CUDA and arch list.
TEST(SituationCli, EveryCommandShowsOneSituationOnEveryFixture) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  int fixtures = 0;
  for (const auto& entry : std::filesystem::directory_iterator(k_fixtures)) {
    if (entry.path().extension() != ".json") continue;
    ++fixtures;
    const std::string snapshot = entry.path().string();
    SCOPED_TRACE(entry.path().filename().string());
    auto doctor = torchfix({"doctor", "--json", "--snapshot", snapshot});
    ASSERT_NE(doctor.exit_code, 2) << doctor.err;
    const auto j = nlohmann::json::parse(doctor.out);
    const auto& x = j["situation"];
    const std::string platform = x["platform"];
    const std::string cuda = x["driver"]["cuda"].is_string() ? x["driver"]["cuda"].get<std::string>() : "";
    const std::string arch = x["arch_list"].is_string() ? x["arch_list"].get<std::string>() : "";
    std::vector<std::string> gpus;
    for (const auto& g : x["gpus"]) gpus.push_back(g);

    // doctor (text): the driver line and the toolchain line.
    auto text = torchfix({"doctor", "-v", "--snapshot", snapshot});
    if (!cuda.empty() && !gpus.empty()) {
      EXPECT_TRUE(has(text.out, "supports CUDA " + cuda)) << text.out;
    }
    for (const auto& f : j["findings"]) {
      if (f["id"] == "toolchain.decision") {
        EXPECT_TRUE(has(f["title"], "TORCH_CUDA_ARCH_LIST=" + arch)) << f["title"];
        EXPECT_TRUE(has(text.out, "TORCH_CUDA_ARCH_LIST=" + arch)) << text.out;
      }
      if (f["id"] == "env.arch-list" && !f["fixes"].empty()) {
        EXPECT_EQ(f["fixes"][0]["commands"][0], "export TORCH_CUDA_ARCH_LIST=" + arch);
      }
    }
    // env: the arch list it exports.
    auto env = torchfix({"env", "--json", "--shell", "bash", "--snapshot", snapshot});
    EXPECT_EQ(env.exit_code, 0) << env.err;
    if (env.exit_code == 0) {
      const auto vars = nlohmann::json::parse(env.out);
      for (const auto& v : vars["variables"]) {
        if (v["name"] == "TORCH_CUDA_ARCH_LIST") {
          EXPECT_EQ(v["value"], arch);
        }
      }
    }
    // build --dry-run: the arch list it plans with.
    TempDir tmp;
    write_file(tmp / "proj/CMakeLists.txt", "cmake_minimum_required(VERSION 3.20)\nproject(p LANGUAGES CXX CUDA)\n");
    auto build = torchfix({"build", "--src", (tmp / "proj").string(), "--dry-run", "--json", "--snapshot", snapshot,
                           "--work-dir", (tmp / "work").string()});
    if (build.exit_code == 0 && !arch.empty()) {
      EXPECT_EQ(nlohmann::json::parse(build.out)["arch"]["torch"], arch);
    }
    // fleet: the group's platform, GPUs and driver CUDA.
    std::filesystem::copy_file(snapshot, tmp / "node.json");
    auto fleet = torchfix({"fleet", "--snapshots", (tmp / "node.json").string(), "--json"});
    ASSERT_NE(fleet.exit_code, 2) << fleet.err;
    const auto group = nlohmann::json::parse(fleet.out)["groups"][0];
    EXPECT_EQ(group["platform"], platform);
    EXPECT_EQ(group["compute_capabilities"].get<std::vector<std::string>>(), gpus);
    EXPECT_EQ(group["driver_cuda"].is_string() ? group["driver_cuda"].get<std::string>() : "", cuda);
    // arch: the one decision's list (before, the GPUs' own: 12.1+PTX for the
    // GB10 of F5, whose nvcc 12.8 has no sm_121, where doctor and env said 12.0+PTX).
    auto list = torchfix({"arch", "--snapshot", snapshot});
    if (gpus.empty()) {
      EXPECT_EQ(list.exit_code, 2);
    } else {
      std::string out = list.out;
      while (!out.empty() && out.back() == '\n') out.pop_back();
      EXPECT_EQ(out, arch);
    }
  }
  EXPECT_GE(fixtures, 20);
}

// One decision on minor-version compatibility (Situation's cuda_on_driver),
// read by the torch check and the NGC image judge: on an RTX 4090 the CUDA
// 12.9 image of 25.06 and torch 2.8.0+cu129 run on an R535 driver (CUDA 12.2)
// through minor-version compatibility, both as a warning. Before, the judge
// kept that path for data-centre GPUs and called the image too old on
// GeForce while torch ran. Across the CUDA major (R470, CUDA 11.4) both are
// problems on GeForce; on an A100 the image alone runs there, through the
// forward-compatibility package it carries (a pip wheel has none). On R575
// (CUDA 12.9) neither finds anything.
TEST(SituationCli, TorchAndImageAgreeOnMinorVersionCompatibility) {
  struct Case {
    std::string driver;
    std::string verdict;  // both findings' severity: "problem", "warning" or "ok"
  };
  for (const std::string gpu : {"RTX 4090", "A100"}) {
    for (const Case& c : {Case{"470.256.02", "problem"}, Case{"535.183.01", "warning"}, Case{"575.57.08", "ok"}}) {
      auto r = torchfix({"doctor", "--json", "--snapshot", k_fixtures + "F10-rtx4090-gcc14-nvcc125.json", "--gpu", gpu,
                         "--driver", c.driver, "--torch", "2.8.0+cu129", "--container", "25.06"});
      ASSERT_NE(r.exit_code, 2) << r.err;
      const auto j = nlohmann::json::parse(r.out);
      std::string torch = "ok";
      std::string image;
      for (const auto& f : j["findings"]) {
        if (f["id"] == "driver.minor-compat" || f["id"] == "driver.too-old") torch = f["severity"];
        if (f["id"] == "container.what-if") image = f["severity"];
      }
      SCOPED_TRACE(gpu + " on " + c.driver);
      EXPECT_EQ(torch, c.verdict);
      const bool forward = gpu == "A100" && c.driver.starts_with("470");
      EXPECT_EQ(image, forward ? "ok" : c.verdict);
      EXPECT_EQ(has(j.dump(), "25.06-py3 runs on every GPU here with this driver only through minor-version"),
                c.verdict == "warning");
    }
  }
}

}  // namespace
}  // namespace torchfix
