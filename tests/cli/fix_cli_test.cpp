// `torchfix fix` on real venvs with real pip, against a PEP 503 index the
// test serves on 127.0.0.1: fake torch wheels whose libtorch_cuda.so holds
// real nvcc kernels (sm_80 and sm_90, plus sm_120 in the one that fixes an
// RTX 5090), judged by the doctor as real wheels are.

#include <gtest/gtest.h>

#ifndef _WIN32
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#include <filesystem>
#include <thread>

#include "../support/fix_index.hpp"
#include "../support/linux_only.hpp"

#ifndef _WIN32  // every test below is Linux-only (TORCHFIX_LINUX_ONLY)

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::run;
using testing::start;
using testing::TempDir;
using testing::write_file;

// Venvs made by Python's venv module, with pip, on the shared index.
class FixCli : public testing::FixIndexTest {
 protected:
  std::string index(const std::string& tree, const std::string& variant) const { return m_index->url(tree, variant); }
  // A venv with torch 2.7.1+cu126 (sm_80, sm_90) installed from `tree`, whose pip.conf names that mirror.
  fs::path venv(const TempDir& tmp, const std::string& tree) const {
    const fs::path v = tmp / "venv";
    EXPECT_EQ(run(testing::k_python, {"-m", "venv", v.string()}, env(tmp)).exit_code, 0);
    write_file(v / "pip.conf", "[global]\nindex-url = " + index(tree, "cu126") + "\n");
    const auto r = run((v / "bin/python").string(), {"-m", "pip", "install", "torch==2.7.1"}, env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return v;
  }
  std::string freeze(const fs::path& v, const TempDir& tmp) const {
    return run((v / "bin/python").string(), {"-m", "pip", "freeze", "--all"}, env(tmp)).out;
  }
};

TEST_F(FixCli, DryRunPrintsTheMirrorFromPipConfAndChangesNothing) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "good");
  const std::string before = freeze(v, tmp);
  const auto r = torchfix({"fix", "--dry-run", "--gpu", "sm_120", "--python", (v / "bin/python").string()}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("--index-url " + index("good", "cu128")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the mirror configured in " + (v / "pip.conf").string() +
                       "; upstream: https://download.pytorch.org/whl/cu128"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("dry run: would record"), std::string::npos) << r.out;
  // What changes: the installed torch as the Situation read it.
  EXPECT_NE(r.out.find("changes: torch 2.7.1+cu126 (cu126) -> torch==2.7.1"), std::string::npos) << r.out;
  EXPECT_EQ(freeze(v, tmp), before);
}

// The mirror's torch page (PEP 503, fetched through the venv's own Python)
// lacks torch 2.7.1+cu128 for the venv's cpXY: the plan moves to the next
// candidate, on the same mirror, instead of printing an install that fails.
TEST_F(FixCli, AnIndexWithoutTheWheelForTheVenvsPythonMovesTheChoiceToTheNextCandidate) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "holes");
  const auto r = torchfix({"fix", "--dry-run", "--gpu", "sm_120", "--python", (v / "bin/python").string()}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("torch==2.7.1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(index("holes", "cu128")), std::string::npos) << r.out;
  const std::string mirror = "--index-url http://127.0.0.1:" + m_index->port() + "/holes/whl/";
  const auto at = r.out.find(mirror);
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string variant = r.out.substr(at + mirror.size(), r.out.find('\n', at) - at - mirror.size());
  EXPECT_TRUE(variant == "cu132" || variant == "cu130") << r.out;
  EXPECT_NE(r.out.find("(index: checked on " + index("holes", variant) + " (PEP 503 HTML))"), std::string::npos)
      << r.out;
  // --offline: the tables alone, as before the check.
  const auto offline =
      torchfix({"fix", "--dry-run", "--offline", "--gpu", "sm_120", "--python", (v / "bin/python").string()}, tmp);
  EXPECT_NE(offline.out.find("torch==2.7.1 --index-url " + index("holes", "cu128")), std::string::npos) << offline.out;
  EXPECT_EQ(offline.out.find("(index: "), std::string::npos) << offline.out;
}

// `doctor --check-index` asks what `fix` asks: the venv's mirror lacks
// torch 2.7.1+cu128 for its Python, so the doctor's fix moves to the next
// candidate and says which index answered; without the flag the tables decide.
TEST_F(FixCli, DoctorCheckIndexMovesTheFixOffAWheelTheMirrorLacks) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "holes");
  const std::string py = (v / "bin/python").string();
  const auto tables = torchfix({"doctor", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_NE(tables.out.find("torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128"), std::string::npos)
      << tables.out;
  EXPECT_EQ(tables.out.find("(index: "), std::string::npos) << tables.out;
  const auto r = torchfix({"doctor", "--check-index", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.find("torch==2.7.1 "), std::string::npos) << r.out;
  const std::string checked = "(index: checked on http://127.0.0.1:" + m_index->port() + "/holes/whl/cu13";
  EXPECT_NE(r.out.find(checked), std::string::npos) << r.out;
}

// The index check's Python child (templates/index_page.py) runs from the
// binary's embedded copy too: the binary copied alone into an empty folder
// checks the mirror and prints what the build tree's binary prints.
TEST_F(FixCli, TheBinaryAloneChecksTheIndexWithItsEmbeddedScript) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "fits");
  const TempDir alone;
  fs::copy_file(TORCHFIX_BINARY, alone / "torchfix");
  ASSERT_FALSE(fs::exists(alone / "templates"));
  const std::vector<std::string> args = {"fix",    "--dry-run", "--gpu",
                                         "sm_120", "--python",  (v / "bin/python").string()};
  const auto embedded = run((alone / "torchfix").string(), args, env(tmp));
  EXPECT_EQ(embedded.exit_code, 0) << embedded.out << embedded.err;
  EXPECT_NE(embedded.out.find("(index: checked on " + index("fits", "cu128") + " (PEP 503 HTML))"), std::string::npos)
      << embedded.out;
  // Another HOME: another index cache, so that this run asks the mirror too.
  const TempDir home;
  const auto folder = run(TORCHFIX_BINARY, args, env(home));
  EXPECT_EQ(embedded.out, folder.out);
}

TEST_F(FixCli, AnIndexWithTheWheelKeepsTheFirstChoiceAndAnUnreachableOneSaysItWasNotChecked) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "fits");
  const std::string py = (v / "bin/python").string();
  const auto r = torchfix({"fix", "--dry-run", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("torch==2.7.1 --index-url " + index("fits", "cu128")), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(index: checked on " + index("fits", "cu128") + " (PEP 503 HTML))"), std::string::npos)
      << r.out;
  // A mirror nothing listens on: one refused connection, the tables decide, the plan says so.
  write_file(v / "pip.conf", "[global]\nindex-url = http://127.0.0.1:9/whl/cu126\n");
  const auto down = torchfix({"fix", "--dry-run", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(down.exit_code, 0) << down.out << down.err;
  EXPECT_NE(down.out.find("torch==2.7.1 --index-url http://127.0.0.1:9/whl/cu128"), std::string::npos) << down.out;
  EXPECT_NE(down.out.find("(index: not checked: http://127.0.0.1:9/whl/cu128: "), std::string::npos) << down.out;
}

TEST_F(FixCli, WithoutATerminalOrYesItRefusesWithOneLine) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "good");
  const auto r = torchfix({"fix", "--gpu", "sm_120", "--python", (v / "bin/python").string()}, tmp);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("torchfix fix: no terminal to ask on; pass --yes"), std::string::npos) << r.err;
}

TEST_F(FixCli, YesInstallsTheWheelWithTheArchAndTheDoctorAgrees) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "good");
  const std::string py = (v / "bin/python").string();
  const auto r = torchfix({"fix", "--yes", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  expect_fixed_to_cu128(r, v, freeze(v, tmp), tmp);
}

TEST_F(FixCli, AWheelWithoutTheArchIsRolledBackToTheExactRecordedSet) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "bad");
  const std::string before = freeze(v, tmp);
  const auto r = torchfix({"fix", "--yes", "--gpu", "sm_120", "--python", (v / "bin/python").string()}, tmp);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("not fixed: the re-diagnosis still finds:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("restored: the environment holds exactly the recorded set again"), std::string::npos) << r.out;
  EXPECT_EQ(freeze(v, tmp), before);
}

TEST_F(FixCli, CtrlCDuringTheInstallRestoresTheOldSet) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "slow");
  const std::string before = freeze(v, tmp);
  const fs::path log = tmp / "fix.log";
  const pid_t pid = start({TORCHFIX_BINARY, "fix", "--yes", "--gpu", "sm_120", "--python", (v / "bin/python").string()},
                          env(tmp), log);
  // pip is blocked on the wheel download once its command line is printed.
  for (int i = 0; i < 1200 && read_file(log).find("[1/1]") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::string out = read_file(log);
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT) << out;
  EXPECT_NE(out.find("interrupted: the environment holds the old set"), std::string::npos) << out;
  EXPECT_EQ(freeze(v, tmp), before);
}

TEST_F(FixCli, AGuardMakesAnInstallThatWantsAnotherTorchFailAndTheDoctorSeesIt) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "guard");
  const std::string py = (v / "bin/python").string();
  const auto guard = torchfix({"env", "--guard", "--python", py}, tmp);
  ASSERT_EQ(guard.exit_code, 0) << guard.out << guard.err;
  EXPECT_NE(guard.out.find("  torch==2.7.1+cu126"), std::string::npos) << guard.out;
  const std::vector<std::string> install = {
      "-m", "pip", "install", "--index-url", index("guard", "cpu"), "needs-cpu-torch"};
  const auto refused = run(py, install, env(tmp));
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(freeze(v, tmp).find("torch==2.7.1+cu126"), std::string::npos) << freeze(v, tmp);
  EXPECT_NE(torchfix({"doctor", "--python", py}, tmp).out.find("a torchfix guard pins torch 2.7.1+cu126 here"),
            std::string::npos);
  // Installed around the guard (PIP_CONFIG_FILE=/dev/null reads no pip.conf): the doctor says so.
  Environment around = env(tmp);
  around["PIP_CONFIG_FILE"] = "/dev/null";
  EXPECT_EQ(run(py, install, around).exit_code, 0);
  EXPECT_NE(freeze(v, tmp).find("torch==2.7.1+cpu"), std::string::npos) << freeze(v, tmp);
  const auto bypassed = torchfix({"doctor", "--python", py}, tmp);
  EXPECT_NE(bypassed.out.find("the torchfix guard pins torch 2.7.1+cu126 but 2.7.1+cpu is installed"),
            std::string::npos)
      << bypassed.out;
  const auto removed = torchfix({"env", "--guard", "--uninstall", "--python", py}, tmp);
  EXPECT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(read_file(v / "pip.conf").find("constraint"), std::string::npos) << read_file(v / "pip.conf");
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
