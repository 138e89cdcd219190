// Torch's companions of another variant than torch's, or without their
// compiled ops (src/core/diagnosis/companion_checks.cpp), through the real
// binary on snapshots of the field trial 2026-12-06c (reports 9 and 10):
// verdict and first fix.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::fixture;
using testing::k_fixtures;
using testing::run_doctor;
using testing::run_first;
using testing::save;
using testing::TempDir;

// The ids of the JSON report's findings about `package`.
std::vector<std::string> finding_ids(const std::string& json, const std::string& package) {
  std::vector<std::string> ids;
  const nlohmann::json report = nlohmann::json::parse(json);
  for (const auto& f : report["findings"]) {
    if (f.contains("package") && f["package"] == package) ids.push_back(f["id"].get<std::string>());
  }
  return ids;
}

// ultralytics/ultralytics#5059: torchvision 0.16.0+cpu beside torch
// 2.1.0+cu118; its _C holds no CUDA kernels. The fix in the thread installs
// torchvision from the cu118 index: the installed torch reinstalled with it.
TEST(CompanionChecks, CpuTorchvisionBesideCudaTorchIsReinstalledWithTorchFromItsIndex) {
  const std::string snapshot = k_fixtures + "companion-rtx3080-torch210-cu118-torchvision016-cpu.json";
  auto r = run_doctor({"--snapshot", snapshot});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] torchvision 0.16.0+cpu does not match torch 2.1.0+cu118: its local tag +cpu names a "
                       "CPU build"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_first(r.out),
            "/home/u/yolo/bin/python -m pip install --force-reinstall torch==2.1.0 torchvision --index-url "
            "https://download.pytorch.org/whl/cu118")
      << r.out;
  auto json = run_doctor({"--snapshot", snapshot, "--json"});
  EXPECT_EQ(finding_ids(json.out, "torchvision"), std::vector<std::string>{"package.companion-variant"}) << json.out;

  // Without its local tag the files say it: a _C without CUDA kernels.
  TempDir dir;
  nlohmann::json untagged = fixture("companion-rtx3080-torch210-cu118-torchvision016-cpu.json");
  untagged["pythons"][0]["distributions"]["torchvision"] = "0.16.0";
  untagged["pythons"][0]["kernels"][1]["version"] = "0.16.0";
  r = run_doctor({"--snapshot", save(dir, "untagged.json", untagged)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("its compiled ops (torchvision/_C) hold no CUDA kernels: a CPU build"), std::string::npos)
      << r.out;
  EXPECT_TRUE(run_first(r.out).ends_with("torch==2.1.0 torchvision --index-url https://download.pytorch.org/whl/cu118"))
      << r.out;
}

// The same question asked as a what-if: a +cpu companion named with --with.
TEST(CompanionChecks, WhatIfCpuTorchvisionIsAProblemNotAnUnknown) {
  TempDir dir;
  auto r = run_doctor({"--snapshot", save(dir, "empty.json", nlohmann::json{{"schema_version", 1}}), "--platform",
                       "linux-x86_64", "--gpu", "RTX 3080", "--driver", "535.129.03", "--torch", "2.1.0+cu118",
                       "--with", "torchvision==0.16.0+cpu", "--python-version", "3.10"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] torchvision 0.16.0+cpu does not match torch 2.1.0+cu118"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("archs of torchvision==0.16.0+cpu unknown"), std::string::npos) << r.out;
  EXPECT_TRUE(run_first(r.out).ends_with("torch==2.1.0 torchvision --index-url https://download.pytorch.org/whl/cu118"))
      << r.out;
}

// The matching pair is not a finding; a +cu121 torchvision beside the cu118
// torch is (another CUDA major: its import refuses torch's).
TEST(CompanionChecks, MatchingPairHasNoFindingAndAnotherMajorHasOne) {
  auto r = run_doctor({"--snapshot", k_fixtures + "companion-rtx3080-torch210-cu118-torchvision016-cu118.json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[ok] torchvision 0.16.0+cu118 runs on GPU 0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("does not match"), std::string::npos) << r.out;

  TempDir dir;
  nlohmann::json other = fixture("companion-rtx3080-torch210-cu118-torchvision016-cu118.json");
  other["pythons"][0]["distributions"]["torchvision"] = "0.16.0+cu121";
  other["pythons"][0]["kernels"][1]["version"] = "0.16.0+cu121";
  r = run_doctor({"--snapshot", save(dir, "cu121.json", other)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] torchvision 0.16.0+cu121 does not match torch 2.1.0+cu118: its local tag +cu121 names a "
                       "build for CUDA 12.1, torch's is CUDA 11.8 (another major)"),
            std::string::npos)
      << r.out;
}

// pytorch/vision#4180 on a current Jetson: NVIDIA's JetPack torch beside a
// torchvision whose install holds no _C. No index has a CUDA torchvision for
// Jetson: the release paired with torch is built from source.
TEST(CompanionChecks, JetsonTorchvisionWithoutOpsBuildsThePairedTag) {
  auto r = run_doctor({"--snapshot", k_fixtures + "companion-orin-jp61-torch250-torchvision-without-ops.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] torchvision 0.20.0 does not match torch 2.5.0a0+872d972e41.nv24.08: its compiled ops "
                       "(torchvision/_C) hold no CUDA kernels"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("with arguments from the 'CUDA' backend"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out), "torchfix build torchvision --ref v0.20.0 --arch 8.7") << r.out;

  // A torch no table pairs a torchvision with: the honest line, no command.
  TempDir dir;
  nlohmann::json old = fixture("companion-orin-jp61-torch250-torchvision-without-ops.json");
  old["pythons"][0]["torch"]["version"] = "1.8.0";
  old["pythons"][0]["distributions"]["torch"] = "1.8.0";
  old["pythons"][0]["kernels"][0]["version"] = "1.8.0";
  r = run_doctor({"--snapshot", save(dir, "old.json", old)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("recipes/torch-wheels.toml [[extension_pin]] pairs no torchvision release with torch 1.8.0"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("No issues found"), std::string::npos) << r.out;

  // Its _C not among the files read at all (an .egg, or a snapshot listing
  // torch's files alone): absence is no proof, a warning that moves nothing.
  nlohmann::json unseen = fixture("companion-orin-jp61-torch250-torchvision-without-ops.json");
  unseen["pythons"][0]["kernels"].erase(1);
  r = run_doctor({"--snapshot", save(dir, "unseen.json", unseen)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[!] torchvision 0.20.0 does not match torch 2.5.0a0+872d972e41.nv24.08: its ops library "
                       "torchvision/_C was not among the files read"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace torchfix
