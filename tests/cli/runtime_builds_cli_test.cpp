// Packages that compile their CUDA ops at run time with CUDA_HOME's nvcc
// (src/core/diagnosis/runtime_builds.cpp), through the real binary on the
// snapshot of deepspeedai/DeepSpeed-MII#277 (field trial 2026-12-06c,
// report 8): verdict and first fix.

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

// nvcc 11.7 at CUDA_HOME beside PyPI's torch 2.1.0 (CUDA 12.1) and DeepSpeed:
// its op builder refuses the toolkit. The maintainer's fix, torch from the
// cu118 index (driver 525 runs CUDA 11.8), comes first; the toolkit second.
TEST(RuntimeBuilds, DeepspeedBesideAnotherToolkitMajorMovesTorchToTheToolkitsIndex) {
  auto r = run_doctor({"--snapshot", k_fixtures + "deepspeed-a100-nvcc117-torch210-cu121.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] deepspeed compiles its CUDA ops at run time with nvcc 11.7.99, and torch 2.1.0 is built "
                       "for CUDA 12.1: every such op fails"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_first(r.out),
            "/home/u/mii/bin/python -m pip install --force-reinstall torch==2.1.0 --index-url "
            "https://download.pytorch.org/whl/cu118")
      << r.out;
  EXPECT_NE(r.out.find("fix: Install a CUDA 12.1 toolkit"), std::string::npos) << r.out;
}

// Where no torch wheel of the toolkit's major exists (CUDA 10 for torch
// 2.1), the toolkit of torch's major is the fix; without DeepSpeed the
// mismatch stays a warning about builds (exit 0).
TEST(RuntimeBuilds, NoWheelOfTheToolkitsMajorLeavesTheToolkitAndWithoutDeepspeedAWarning) {
  TempDir dir;
  nlohmann::json old = fixture("deepspeed-a100-nvcc117-torch210-cu121.json");
  old["toolkits"][0]["nvcc"] = "/usr/local/cuda-10.2/bin/nvcc";
  old["toolkits"][0]["version"] = "10.2.89";
  old["environment"]["CUDA_HOME"] = "/usr/local/cuda-10.2";
  auto r = run_doctor({"--snapshot", save(dir, "old.json", old)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] deepspeed compiles its CUDA ops at run time with nvcc 10.2.89"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Run first: export CUDA_HOME=/usr/local/cuda-12.1"), std::string::npos) << r.out;

  nlohmann::json alone = fixture("deepspeed-a100-nvcc117-torch210-cu121.json");
  alone["pythons"][0]["distributions"].erase("deepspeed");
  alone["pythons"][0]["distributions"].erase("deepspeed-mii");
  r = run_doctor({"--snapshot", save(dir, "alone.json", alone)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[!] nvcc 11.7.99 does not match torch's CUDA 12.1"), std::string::npos) << r.out;
}

// --with deepspeed==X on a machine without nvcc: its ops are built here at
// run time, so its archs are not "unknown"; the missing toolkit is said.
TEST(RuntimeBuilds, WhatIfDeepspeedSaysItsOpsNeedAToolkit) {
  TempDir dir;
  auto r = run_doctor({"--snapshot", save(dir, "empty.json", nlohmann::json{{"schema_version", 1}}), "--platform",
                       "linux-x86_64", "--gpu", "A100", "--driver", "525.105.17", "--torch", "2.1.0", "--with",
                       "deepspeed==0.12.2", "--python-version", "3.10"});
  EXPECT_EQ(r.out.find("archs of deepspeed==0.12.2 unknown"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[!] deepspeed compiles its CUDA ops at run time with CUDA_HOME's nvcc, and no nvcc is "
                       "installed"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace torchfix
