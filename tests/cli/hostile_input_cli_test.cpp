// The audit's (issue 20) unclear-message, miscount, slow-diagnosis and
// stray-process defects U7, H3 (legal sizes), U10 (build), U14, U16, U17 and
// U19 through the real binary: an endless sinfo, a large legal snapshot, a
// build step's daemon, a dry run of a distributed build, a hostile data
// folder, one snapshot given several times, a snapshot field of the wrong type.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "../support/linux_only.hpp"
#include "hostile_sh.hpp"

#ifndef _WIN32  // every test below is Linux-only (TORCHFIX_LINUX_ONLY)

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::sh;
using testing::TempDir;

// U7: a sinfo that prints without end is stopped at the output limit, and
// the message says so and what to do (it was "sinfo failed (exit -1): ;").
TEST(HostileInputCli, EndlessSinfoSaysItPrintedTooMuch) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  testing::write_file(dir / "bin" / "sinfo", "#!/bin/sh\nexec yes 'gpu|idle'\n");
  fs::permissions(dir / "bin" / "sinfo", fs::perms::owner_all);
  auto r = sh("PATH=$PWD/bin:$PATH $T fleet --slurm; echo rc=$?", dir.path());
  EXPECT_EQ(r.out, "rc=2\n") << r.err;
  EXPECT_NE(r.err.find("torchfix fleet: sinfo printed more than 32 MiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--partition or --nodes"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("exit -1"), std::string::npos) << r.err;
}

// U17: the same file given through a folder three times, as f.json and
// ./f.json, or through a link, is one node, and torchfix says so.
TEST(HostileInputCli, FleetCountsOneFileOnce) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  fs::create_directories(dir / "fa");
  fs::copy_file(testing::k_f1, dir / "fa" / "n1.json");
  fs::create_symlink("fa/n1.json", dir / "link.json");
  auto r = sh("$T fleet --json --snapshots fa fa ./fa/n1.json fa/n1.json link.json", dir.path());
  const auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out << r.err;
  EXPECT_EQ(report.at("nodes"), 1) << r.out;
  EXPECT_NE(r.err.find("torchfix fleet: note: '" + fs::canonical(dir / "fa" / "n1.json").string() +
                       "' is given 5 times; it counts as one node"),
            std::string::npos)
      << r.err;
}

// U19: a schema error names the JSON path of the offending field.
TEST(HostileInputCli, SchemaErrorsNameTheField) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  const auto base = nlohmann::json::parse(testing::read_file(testing::k_f1));
  const auto write = [&](const char* name, const auto& edit) {
    nlohmann::json j = base;
    edit(j);
    testing::write_file(dir / name, j.dump());
  };
  write("cc.json", [](nlohmann::json& j) { j["gpus"][0]["compute_capability"] = 9.0; });
  write("py.json", [](nlohmann::json& j) { j["pythons"][0]["interpreter"] = 3; });
  write("dist.json", [](nlohmann::json& j) { j["pythons"][0]["distributions"]["torch"] = 2.6; });
  auto r = sh("for f in cc py dist; do $T doctor --snapshot $f.json; echo rc=$?; done", dir.path());
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("rc=1"), std::string::npos) << r.out;
  for (const char* field : {"gpus[0].compute_capability: type must be string, but is number",
                            "pythons[0].interpreter: type must be string, but is number",
                            "pythons[0].distributions.torch: type must be string, but is number"}) {
    EXPECT_NE(r.err.find(field), std::string::npos) << field << "\n" << r.err;
  }
}

// U16: a folder named x.toml among the recipes, and MiB counts that would
// wrap when made bytes, are refused with the file (and line) named.
TEST(HostileInputCli, RecipeFolderAndHugeMibAreRefused) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  const std::string src = TORCHFIX_SOURCE_DIR;
  sh("for d in folder mib; do mkdir $d; cp -r " + src + "/recipes " + src + "/templates $d/; done", dir.path());
  fs::create_directories(dir / "folder" / "recipes" / "build" / "x.toml");
  auto r =
      sh("sed -i 's/^per_job_mib = .*/per_job_mib = 9223372036854775807/' mib/recipes/build/cuda-extension.toml"
         " && mkdir p && for d in folder mib; do TORCHFIX_DATA_DIR=$PWD/$d $T build cuda-extension --src p"
         " --arch 8.6 --dry-run; echo rc=$?; done",
         dir.path());
  EXPECT_EQ(r.out.find("GiB per job"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 10), "rc=2\nrc=2\n") << r.out << r.err;
  EXPECT_NE(r.err.find("x.toml: a folder, not a recipe file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cuda-extension.toml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'per_job_mib' must be an integer from 1 to 1073741824"), std::string::npos) << r.err;
}

// U14: `build --dist sccache --dry-run` leaves no config behind (it holds the
// token), and a token with quotes and newlines stays one TOML string in the
// config sccache reads: no injected [evil] table.
TEST(HostileInputCli, DistDryRunKeepsNoConfigAndQuotesTheToken) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  testing::write_file(
      dir / "bin" / "sccache",
      "#!/bin/sh\nif [ \"$1\" = --dist-status ]; then cp \"$SCCACHE_CONF\" \"$HOME/seen.conf\"; "
      "echo '{\"SchedulerStatus\": [\"http://s:10600\", {\"num_servers\": 2, \"num_cpus\": 16}]}'; fi\n");
  fs::permissions(dir / "bin" / "sccache", fs::perms::owner_all);
  testing::write_file(dir / "p" / "CMakeLists.txt", "cmake_minimum_required(VERSION 3.25)\nproject(p)\n");
  auto r =
      sh("PATH=$PWD/bin:$PATH $T build cuda-extension --src p --arch 8.6 --dist sccache --dist-scheduler "
         "http://s:10600 --dist-token \"$TOKEN\" --work-dir w --dry-run >plan.txt; echo rc=$?; find w -type f; "
         "python3 -c 'import sys, tomllib; c = tomllib.load(open(\"seen.conf\", \"rb\")); "
         "print(sorted(c), c[\"dist\"][\"auth\"][\"token\"] == sys.argv[1])' \"$TOKEN\"",
         dir.path(), {{"TOKEN", "t\"\n[evil]\nx = \"1"}});
  EXPECT_EQ(r.out, "rc=0\n['dist'] True\n") << r.out << r.err << testing::read_file(dir / "plan.txt");
  EXPECT_NE(testing::read_file(dir / "plan.txt").find("--dist sccache: 2 build servers"), std::string::npos)
      << testing::read_file(dir / "plan.txt");
}

// H3 (legal sizes): a snapshot of 64 GPUs and 64 environments, within the
// probes' bounds, is diagnosed whole: every environment gets its finding. Its
// time is a bench target, not asserted here (bench/remedy-bench.sh: 1.4 s on
// the ASan build, 0.03 s Release; every remedy re-diagnosing all 64
// environments took 58.8 s: docs/hostile-inputs.md).
TEST(HostileInputCli, LargeLegalSnapshotIsDiagnosedWhole) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  auto j = nlohmann::json::parse(testing::read_file(testing::k_f1));
  const auto gpu = j["gpus"][0];
  const auto python = j["pythons"][0];
  j["gpus"] = nlohmann::json::array();
  j["pythons"] = nlohmann::json::array();
  for (int i = 0; i < 64; ++i) {
    j["gpus"].push_back(gpu);
    j["gpus"].back()["index"] = i;
    j["pythons"].push_back(python);
    j["pythons"].back()["interpreter"] = "/home/u/venv" + std::to_string(i) + "/bin/python";
  }
  testing::write_file(dir / "s64.json", j.dump());
  auto r = sh("$T doctor --snapshot s64.json --json", dir.path());
  const auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.out.substr(0, 2000) << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::set<std::string> judged;
  for (const auto& f : report["findings"])
    if (f.contains("python") && f["python"].is_string()) judged.insert(f["python"].get<std::string>());
  EXPECT_EQ(judged.size(), 64u) << "each of the 64 environments has its own finding";
}

// U10 (build): a build step that leaves a daemon which setsids and clears
// its environment (no parent link, no TORCHFIX_RUN_ID) does not outlive an
// interrupted build: torchfix, the child subreaper, kills it too.
TEST(HostileInputCli, StoppedBuildLeavesNoSetsidDaemon) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  testing::write_file(dir / "p" / "CMakeLists.txt",
                      "cmake_minimum_required(VERSION 3.25)\nproject(p LANGUAGES NONE)\n"
                      "add_custom_target(slow ALL COMMAND sh ${CMAKE_SOURCE_DIR}/slow.sh)\n");
  testing::write_file(dir / "p" / "slow.sh", "(setsid env -i sh -c 'echo $$ > " + (dir / "daemon.pid").string() +
                                                 "; exec sleep 3600' >/dev/null 2>&1 </dev/null &)\nsleep 3600\n");
  auto r =
      sh("$T build cuda-extension --src $PWD/p --arch 8.6 --cache none >build.txt 2>&1 & pid=$!; "
         "for i in $(seq 600); do [ -s daemon.pid ] && break; sleep 0.1; done; sleep 0.5; kill -TERM $pid; wait $pid; "
         "echo rc=$?; sleep 0.5; d=$(cat daemon.pid); echo started=$d; "
         "if kill -0 $d 2>/dev/null && ! grep -q '^State:.Z' /proc/$d/status; then echo alive; kill -9 $d; fi",
         dir.path());
  EXPECT_NE(r.out.find("started="), std::string::npos) << r.out << testing::read_file(dir / "build.txt");
  EXPECT_EQ(r.out.find("started=\n"), std::string::npos) << "the build step never ran\n"
                                                         << testing::read_file(dir / "build.txt");
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("alive"), std::string::npos) << r.out << testing::read_file(dir / "build.txt");
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
