// Verbosity levels through the real binary (cli/trace_runner.cpp, the -vvv
// situation of cli/doctor.cpp, fleet -v, arch -v): each level prints more than the
// one below it; -vv names the tables and each command the probes ran (a fake
// nvidia-smi on PATH, a real process), -vvv what it printed; -q prints nothing.

#include <gtest/gtest.h>

#include <filesystem>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"
#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::has;
using testing::k_fixtures;
using testing::TempDir;
using testing::torchfix;

TEST(TraceRunnerCli, EachLevelOfTheDoctorOnASnapshotPrintsMore) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  const std::string snapshot = k_fixtures + "F1-rtx5090d-torch26-cu126.json";
  const auto plain = torchfix({"doctor", "--snapshot", snapshot});
  const auto v = torchfix({"doctor", "-v", "--snapshot", snapshot});
  const auto vv = torchfix({"doctor", "-vv", "--snapshot", snapshot});
  const auto vvv = torchfix({"doctor", "--snapshot", snapshot, "-v", "-v", "-v"});
  const auto quiet = torchfix({"doctor", "-q", "--snapshot", snapshot});
  for (const auto* r : {&plain, &v, &vv, &vvv, &quiet}) EXPECT_EQ(r->exit_code, 1) << r->err;
  // -v: the evidence and the fixes considered, on stdout.
  EXPECT_GT(v.out.size(), plain.out.size()) << v.out;
  EXPECT_TRUE(v.out.starts_with(plain.out.substr(0, plain.out.find('\n')))) << v.out;
  EXPECT_EQ(plain.err, "");
  EXPECT_EQ(v.err, "");
  // -vv: the same report, and on stderr where the tables came from (the
  // build tree's data folder beside the binary).
  EXPECT_EQ(vv.out, v.out);
  const std::string tables =
      "torchfix: tables from " + fs::path(TORCHFIX_BINARY).parent_path().string() + ", files of ";
  EXPECT_TRUE(vv.err.starts_with(tables)) << vv.err;
  // -vvv: also the Situation every decision read, as JSON.
  EXPECT_EQ(vvv.out, v.out);
  EXPECT_TRUE(vvv.err.starts_with(vv.err)) << vvv.err;
  EXPECT_TRUE(has(vvv.err, "torchfix: the situation the doctor judged:\n{")) << vvv.err;
  EXPECT_TRUE(has(vvv.err, "\"platform\"")) << vvv.err;
  // -q: nothing but the exit code.
  EXPECT_EQ(quiet.out, "");
  EXPECT_EQ(quiet.err, "");
}

TEST(TraceRunnerCli, VvNamesEachProbeCommandWithItsTimeAndVvvWhatItPrinted) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  const TempDir dir;
  testing::write_file(dir / "bin/nvidia-smi",
                      "#!/bin/sh\necho '0, NVIDIA H100 80GB HBM3, 9.0, 570.124.04, 81559'\necho 'a warning' >&2\n");
  fs::permissions(dir / "bin/nvidia-smi", fs::perms::owner_all);
  const Environment env{{"PATH", (dir / "bin").string() + ":/usr/bin:/bin"}, {"HOME", "/nonexistent"}};
  const auto doctor = [&](const std::string& level) {
    SystemProcessRunner runner;
    std::vector<std::string> args = {"doctor", "--no-binaries"};
    if (!level.empty()) args.push_back(level);
    auto r = runner.run(Command{TORCHFIX_BINARY, args, env, {}, std::chrono::seconds(120)});
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return r ? *r : ProcessResult{};
  };
  const std::string ran = "torchfix: ran nvidia-smi --query-gpu=";
  const auto v = doctor("-v");
  EXPECT_FALSE(has(v.err, ran)) << v.err;
  const auto vv = doctor("-vv");
  const auto at = vv.err.find(ran);
  ASSERT_NE(at, std::string::npos) << vv.err;
  const std::string line = vv.err.substr(at, vv.err.find('\n', at) - at);
  // "(0.004 s, exit 0, 49 bytes out, 10 bytes err)": the wall time and how it ended.
  EXPECT_TRUE(has(line, " s, exit 0, 49 bytes out, 10 bytes err)")) << line;
  EXPECT_FALSE(has(vv.err, "  | out: 0, NVIDIA H100 80GB HBM3")) << vv.err;
  const auto vvv = doctor("-vvv");
  EXPECT_TRUE(has(vvv.err, "\n  | out: 0, NVIDIA H100 80GB HBM3, 9.0, 570.124.04, 81559\n  | err: a warning\n"))
      << vvv.err;
  // The GPU the fake printed is the one judged, at every level.
  EXPECT_TRUE(has(v.out, "H100")) << v.out;
}

TEST(TraceRunnerCli, FleetVerboseShowsEachGroupsGpusPlatformAndToolkits) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  const TempDir dir;
  for (const char* name : {"F1-rtx5090d-torch26-cu126.json", "h200-torch211-cu130.json"}) {
    fs::copy_file(k_fixtures + name, dir / name);
  }
  const auto plain = torchfix({"fleet", "--snapshots", dir.path().string()});
  const auto v = torchfix({"fleet", "-v", "--snapshots", dir.path().string()});
  EXPECT_EQ(v.exit_code, plain.exit_code) << v.err;
  EXPECT_NE(v.out, plain.out);
  EXPECT_FALSE(has(plain.out, "      GPUs: ")) << plain.out;
  EXPECT_TRUE(has(v.out, "      GPUs: NVIDIA H200 (9.0)\n")) << v.out;
  EXPECT_TRUE(has(v.out, "      compute capabilities: 9.0; platform: linux-x86_64; toolkits: 13.0.88\n")) << v.out;
}

// arch -v: stdout stays the list a script takes; stderr says which GPUs,
// why this list and which nvcc bounds it.
TEST(TraceRunnerCli, ArchVerboseSaysWhyOnStderr) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  const std::string snapshot = k_fixtures + "env-mixed-a6000-5090.json";
  const auto plain = torchfix({"arch", "--snapshot", snapshot});
  const auto v = torchfix({"arch", "-v", "--snapshot", snapshot});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out, plain.out);
  EXPECT_EQ(plain.err, "");
  EXPECT_EQ(v.err,
            "torchfix arch: GPU 0 (NVIDIA RTX A6000, 8.6)\n"
            "torchfix arch: GPU 1 (NVIDIA GeForce RTX 5090, 12.0)\n"
            "torchfix arch: the list: GPUs 8.6, 12.0; PTX newest\n"
            "torchfix arch: nvcc 12.8.93 /opt/My CUDA's $dir/12.8/bin/nvcc: newest installed nvcc that accepts every "
            "target (table) and matches torch's CUDA 12.8\n");
}

TEST(TraceRunnerCli, EverySubcommandsHelpNamesTheLevels) {
  for (const std::string command : {"doctor", "inspect", "build", "recipes", "env", "arch", "tune", "fleet", "fix"}) {
    const auto r = torchfix({command, "--help"});
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_TRUE(has(r.out, "-v, --verbose")) << command;
    EXPECT_TRUE(has(r.out, "-vv also")) << command << r.out;
    EXPECT_TRUE(has(r.out, "-vvv also")) << command;
    EXPECT_TRUE(has(r.out, "-q, --quiet")) << command;
  }
}

}  // namespace
}  // namespace torchfix
