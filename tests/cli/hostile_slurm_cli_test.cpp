// The audit's (issue 20) fleet --slurm defects through the real binary, with
// a fake sinfo and srun on PATH: a planted link at a node's saved snapshot
// (D5, as root in a private mount namespace), task answers for nodes sinfo
// never listed or for a node twice (U6), and an srun that floods its output
// (M4, U8).

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../support/linux_only.hpp"
#include "hostile_sh.hpp"

#ifndef _WIN32  // every test below is Linux-only (TORCHFIX_LINUX_ONLY)

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::sh;
using testing::TempDir;

// Writes a sinfo listing gpu01 and gpu02 and an srun running `srun_body`
// into DIR/bin; `node LABEL NAME FILE` prints one task's answer.
void write_slurm(const TempDir& dir, const std::string& srun_body) {
  testing::write_file(dir / "bin" / "sinfo", "#!/bin/sh\necho 'gpu01|idle'\necho 'gpu02|mixed'\n");
  testing::write_file(dir / "bin" / "srun",
                      "#!/bin/sh\nnode() { printf '%s: @@torchfix-node %s\\n' \"$1\" \"$2\"; "
                      "sed \"s/^/$1: /\" \"$3\"; echo; echo \"$1: @@torchfix-exit 0\"; }\n" +
                          srun_body + "\n");
  for (const char* tool : {"sinfo", "srun"}) fs::permissions(dir / "bin" / tool, fs::perms::owner_all);
}

std::string gpu_name(const fs::path& snapshot) {
  const auto json = nlohmann::json::parse(testing::read_file(snapshot), nullptr, false);
  return json.is_object() ? json["gpus"][0].value("name", "") : "";
}

// D5: root's `fleet --slurm --save-snapshots DIR` never writes a node's
// snapshot through a link another user planted at DIR/NODE.json.
TEST(HostileSlurmCli, SavedSnapshotsNeverFollowPlantedLinks) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write_slurm(dir, "node 1 gpu01 \"$F1\"; node 2 gpu02 \"$F1\"");
  RUN_IN_NAMESPACE(r,
                   "mkdir mnt/sv; chown nobody mnt/sv; echo precious > mnt/victim; "
                   "setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s $PWD/mnt/victim mnt/sv/gpu02.json; "
                   "set +e; PATH=$PWD/bin:$PATH $T fleet --slurm --save-snapshots $PWD/mnt/sv 2>&1; echo rc=$?; "
                   "cat mnt/victim; test -f mnt/sv/gpu01.json -a ! -L mnt/sv/gpu01.json && echo regular; "
                   "grep -c \"RTX 5090 D\" mnt/sv/gpu01.json",
                   dir);
  EXPECT_NE(r.out.find("refusing to follow the symlink"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mnt/sv/gpu02.json"), std::string::npos) << r.out;
  // gpu01's snapshot (before gpu02's) is saved as a regular file.
  ASSERT_EQ(gpu_name(testing::k_f1), "NVIDIA GeForce RTX 5090 D");
  EXPECT_NE(r.out.find("rc=2\nprecious\nregular\n1\n"), std::string::npos) << r.out;
}

// U6: only a node sinfo listed counts, once, by its first answer: a task
// naming a "ghost", a path, a name with escape sequences or a node that
// already answered is a failure line, never a node or a saved file; a task
// label beyond int is no label.
TEST(HostileSlurmCli, OnlyListedNodesAnswerOnce) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write_slurm(dir,
              "node 0 \"$(printf 'gpu01\\033]2;pwned\\007')\" \"$F1\"; node 1 ../../evil \"$F1\"; "
              "node 2 gpu02 \"$F1\"; node 3 gpu02 \"$F10\"; node 99999999999999999999 gpu01 \"$F1\"; "
              "node 4 ghost \"$F1\"");
  fs::create_directories(dir / "a" / "b");
  const std::string f10 = testing::k_fixtures + "F10-rtx4090-gcc14-nvcc125.json";
  auto r = sh("PATH=$PWD/bin:$PATH $T fleet --slurm --save-snapshots $PWD/a/b/sv; echo rc=$?; ls -A a a/b/sv",
              dir.path(), {{"F10", f10}});
  ASSERT_NE(gpu_name(f10), gpu_name(testing::k_f1));
  EXPECT_TRUE(r.out.ends_with("rc=1\na:\nb\n\na/b/sv:\ngpu02.json\n")) << r.out << r.err;
  EXPECT_EQ(gpu_name(dir / "a" / "b" / "sv" / "gpu02.json"), gpu_name(testing::k_f1));
  EXPECT_EQ(r.out.find('\033'), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 node"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ghost: answered by a task that is not this node's"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("../../evil: not a node name"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("gpu01: no answer from the node"), std::string::npos) << r.out;
}

// M4, U8, H6: an srun that floods its output (labelled lines, or empty
// lines) is stopped at 192 MiB in bounded memory, and each node's line says
// why (before: 5.2 GB and "no answer from the node"; > 10 GB and bad_alloc
// for empty lines). Measured above the binary's start-up peak, with ASan's
// quarantine off so freed buffers count as freed.
TEST(HostileSlurmCli, FloodingSrunIsStoppedInBoundedMemory) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  testing::write_file(dir / "labelled" / "srun", "#!/bin/sh\nexec yes \"0: $(printf %01000d 0)\"\n");
  testing::write_file(dir / "empty" / "srun", "#!/bin/sh\nexec yes ''\n");
  ProcessResult r;
  const std::string quiet = "ASAN_OPTIONS=quarantine_size_mb=0:thread_local_quarantine_size_kb=0 ";
  const long start_up = testing::peak_rss_kib(quiet + "$T --version", dir.path(), r);
  ASSERT_GT(start_up, 0) << r.out;
  for (const char* flood : {"labelled", "empty"}) {
    testing::write_file(dir / flood / "sinfo", "#!/bin/sh\necho 'gpu01|idle'\necho 'gpu02|mixed'\n");
    for (const char* tool : {"sinfo", "srun"}) fs::permissions(dir / flood / tool, fs::perms::owner_all);
    const long peak =
        testing::peak_rss_kib(quiet + "PATH=$PWD/" + flood + ":$PATH $T fleet --slurm; echo rc=$?", dir.path(), r);
    EXPECT_NE(r.out.find("\nrc=1\npeak_kib="), std::string::npos) << flood << ": " << r.out << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << flood << ": " << r.err;
    for (const char* node : {"gpu01", "gpu02"}) {
      EXPECT_NE(r.out.find(std::string(node) + ": no answer from the node (srun printed more than 192 MiB)"),
                std::string::npos)
          << flood << ": " << r.out;
    }
    EXPECT_LT(peak - start_up, 400 * 1024) << "KiB over start-up of fleet --slurm on a " << flood << " flood";
  }
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
