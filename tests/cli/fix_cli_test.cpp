// `torchfix fix` on real venvs with real pip, against a PEP 503 index the
// test serves on 127.0.0.1: fake torch wheels whose libtorch_cuda.so holds
// real nvcc kernels (sm_80 and sm_90, plus sm_120 in the one that fixes an
// RTX 5090), judged by the doctor as real wheels are.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <thread>

#include "../build/test_support.hpp"
#include "../support/child.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::start;
using testing::TempDir;
using testing::write_file;

const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/fix/";
const std::string k_nvcc = "/usr/local/cuda/bin/nvcc";
const std::string k_python = "/usr/bin/python3";

ProcessResult run(const std::string& program, std::vector<std::string> args, Environment env,
                  std::chrono::seconds timeout = std::chrono::seconds(300)) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{program, std::move(args), std::move(env), {}, timeout});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

// The kernels, the wheels, the index and its server: built once for the suite.
class FixCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!fs::exists(k_nvcc) || !fs::exists(k_python)) return;
    s_root = new TempDir();
    const fs::path dir = s_root->path();
    write_file(dir / "k.cu", "__global__ void torchfix_fake_kernel(float* x) { x[threadIdx.x] *= 2.0f; }\n");
    const Environment env{{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}, {"HOME", dir.string()}};
    auto so = [&](const std::string& name, std::vector<std::string> archs) {
      std::vector<std::string> args = {
          "-shared", "-Xcompiler", "-fPIC", "-cudart", "none", (dir / "k.cu").string(), "-o", (dir / name).string()};
      for (const std::string& a : archs) args.insert(args.begin(), {"-gencode", "arch=compute_" + a + ",code=sm_" + a});
      const auto r = run(k_nvcc, args, env);
      EXPECT_EQ(r.exit_code, 0) << r.err;
    };
    so("old.so", {"80", "90"});
    so("new.so", {"80", "90", "120"});
    auto wheel = [&](const std::string& tree, const std::string& variant, const std::string& so_name) {
      const auto r = run(k_python,
                         {k_fixtures + "fake_wheel.py", (dir / "index" / tree / "whl").string(), variant, "torch",
                          "2.7.1+" + variant, "--so", (dir / so_name).string()},
                         env);
      EXPECT_EQ(r.exit_code, 0) << r.err;
    };
    // good: cu128 carries sm_120. bad: its cu128 wheel lacks it. slow: the cu128 download hangs.
    for (const std::string tree : {"good", "bad", "slow"}) wheel(tree, "cu126", "old.so");
    wheel("good", "cu128", "new.so");
    wheel("bad", "cu128", "old.so");
    wheel("slow", "cu128", "new.so");
    // guard: a package on the CPU index that needs the CPU torch.
    wheel("guard", "cu126", "old.so");
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"cpu", "torch", "2.7.1+cpu"}, {"cpu", "needs-cpu-torch", "1.0", "--requires", "torch==2.7.1+cpu"}}) {
      std::vector<std::string> argv = {k_fixtures + "fake_wheel.py", (dir / "index/guard/whl").string()};
      argv.insert(argv.end(), args.begin(), args.end());
      EXPECT_EQ(run(k_python, argv, env).exit_code, 0);
    }
    // holes: cu128 lists torch 2.7.1 only for another Python than the venv's; the
    // next candidate's index (cu132 today, cu130 after it) lists one for it. fits:
    // cu128 lists it for the venv's Python.
    s_cp = run(k_python, {"-c", "import sys; print('cp%d%d' % sys.version_info[:2], end='')"}, env).out;
    const std::string other = s_cp == "cp312" ? "cp313" : "cp312";
    for (const auto& [tree, variant, version, cp] :
         std::vector<std::array<std::string, 4>>{{"holes", "cu126", "2.7.1+cu126", ""},
                                                 {"holes", "cu128", "2.7.1+cu128", other},
                                                 {"holes", "cu130", "2.14.0+cu130", s_cp},
                                                 {"holes", "cu132", "2.15.0+cu132", s_cp},
                                                 {"fits", "cu126", "2.7.1+cu126", ""},
                                                 {"fits", "cu128", "2.7.1+cu128", s_cp}}) {
      std::vector<std::string> argv = {k_fixtures + "fake_wheel.py", (dir / "index" / tree / "whl").string(), variant,
                                       "torch", version};
      if (!cp.empty()) argv.insert(argv.end(), {"--tag", cp + "-" + cp + "-manylinux_2_28_x86_64"});
      EXPECT_EQ(run(k_python, argv, env).exit_code, 0);
    }
    s_server = start({k_python, k_fixtures + "index_server.py", (dir / "index").string(), (dir / "port").string()}, env,
                     dir / "server.log");
    for (int i = 0; i < 200 && !fs::exists(dir / "port"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    s_port = read_file(dir / "port");
  }
  static void TearDownTestSuite() {
    if (s_server > 0) {
      ::kill(s_server, SIGKILL);
      ::waitpid(s_server, nullptr, 0);
    }
    delete s_root;
  }
  void SetUp() override {
    if (!fs::exists(k_nvcc)) GTEST_SKIP() << "no nvcc at " << k_nvcc << " to build the fake torch's kernels";
    if (!fs::exists(k_python)) GTEST_SKIP() << "no " << k_python << " to make venvs with";
    ASSERT_FALSE(s_port.empty()) << "the index server did not start: " << read_file(s_root->path() / "server.log");
  }

  std::string index(const std::string& tree, const std::string& variant) const {
    return "http://127.0.0.1:" + s_port + "/" + tree + "/whl/" + variant;
  }
  // A venv with torch 2.7.1+cu126 (sm_80, sm_90) installed from `tree`, whose pip.conf names that mirror.
  fs::path venv(const TempDir& tmp, const std::string& tree) const {
    const fs::path v = tmp / "venv";
    EXPECT_EQ(run(k_python, {"-m", "venv", v.string()}, base_env(tmp)).exit_code, 0);
    write_file(v / "pip.conf", "[global]\nindex-url = " + index(tree, "cu126") + "\n");
    const auto r = run((v / "bin/python").string(), {"-m", "pip", "install", "torch==2.7.1"}, base_env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return v;
  }
  static Environment base_env(const TempDir& tmp) {
    return {{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"},
            {"HOME", tmp.path().string()},
            {"LANG", "C.UTF-8"},
            {"PIP_DISABLE_PIP_VERSION_CHECK", "1"},
            {"PIP_NO_INPUT", "1"}};
  }
  static std::string freeze(const fs::path& v, const TempDir& tmp) {
    return run((v / "bin/python").string(), {"-m", "pip", "freeze", "--all"}, base_env(tmp)).out;
  }
  static ProcessResult torchfix(std::vector<std::string> args, const TempDir& tmp) {
    return run(TORCHFIX_BINARY, std::move(args), base_env(tmp), std::chrono::seconds(600));
  }

  static inline TempDir* s_root = nullptr;
  static inline pid_t s_server = -1;
  static inline std::string s_port;
  static inline std::string s_cp;  // the venvs' Python tag, cp311
};

TEST_F(FixCli, DryRunPrintsTheMirrorFromPipConfAndChangesNothing) {
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
  TempDir tmp;
  const fs::path v = venv(tmp, "holes");
  const auto r = torchfix({"fix", "--dry-run", "--gpu", "sm_120", "--python", (v / "bin/python").string()}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("torch==2.7.1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(index("holes", "cu128")), std::string::npos) << r.out;
  const std::string mirror = "--index-url http://127.0.0.1:" + s_port + "/holes/whl/";
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

// The index check's Python child (templates/index_page.py) runs from the
// binary's embedded copy too: the binary copied alone into an empty folder
// checks the mirror and prints what the build tree's binary prints.
TEST_F(FixCli, TheBinaryAloneChecksTheIndexWithItsEmbeddedScript) {
  TempDir tmp;
  const fs::path v = venv(tmp, "fits");
  const TempDir alone;
  fs::copy_file(TORCHFIX_BINARY, alone / "torchfix");
  ASSERT_FALSE(fs::exists(alone / "templates"));
  const std::vector<std::string> args = {"fix",    "--dry-run", "--gpu",
                                         "sm_120", "--python",  (v / "bin/python").string()};
  const auto embedded = run((alone / "torchfix").string(), args, base_env(tmp));
  EXPECT_EQ(embedded.exit_code, 0) << embedded.out << embedded.err;
  EXPECT_NE(embedded.out.find("(index: checked on " + index("fits", "cu128") + " (PEP 503 HTML))"), std::string::npos)
      << embedded.out;
  // Another HOME: another index cache, so that this run asks the mirror too.
  const TempDir home;
  const auto folder = run(TORCHFIX_BINARY, args, base_env(home));
  EXPECT_EQ(embedded.out, folder.out);
}

TEST_F(FixCli, AnIndexWithTheWheelKeepsTheFirstChoiceAndAnUnreachableOneSaysItWasNotChecked) {
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
  TempDir tmp;
  const fs::path v = venv(tmp, "good");
  const auto r = torchfix({"fix", "--gpu", "sm_120", "--python", (v / "bin/python").string()}, tmp);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("torchfix fix: no terminal to ask on; pass --yes"), std::string::npos) << r.err;
}

TEST_F(FixCli, YesInstallsTheWheelWithTheArchAndTheDoctorAgrees) {
  TempDir tmp;
  const fs::path v = venv(tmp, "good");
  const std::string py = (v / "bin/python").string();
  const auto r = torchfix({"fix", "--yes", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fixed: the doctor finds no problem in " + py), std::string::npos) << r.out;
  EXPECT_NE(freeze(v, tmp).find("torch==2.7.1+cu128"), std::string::npos) << freeze(v, tmp);
  EXPECT_NE(read_file(v / ".torchfix/fix-before.txt").find("torch==2.7.1+cu126"), std::string::npos);
  const auto doctor = torchfix({"doctor", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_NE(doctor.out.find("torch 2.7.1+cu128 runs on GPU 0"), std::string::npos) << doctor.out;
}

TEST_F(FixCli, AWheelWithoutTheArchIsRolledBackToTheExactRecordedSet) {
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
  TempDir tmp;
  const fs::path v = venv(tmp, "slow");
  const std::string before = freeze(v, tmp);
  const fs::path log = tmp / "fix.log";
  const pid_t pid = start({TORCHFIX_BINARY, "fix", "--yes", "--gpu", "sm_120", "--python", (v / "bin/python").string()},
                          base_env(tmp), log);
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
  TempDir tmp;
  const fs::path v = venv(tmp, "guard");
  const std::string py = (v / "bin/python").string();
  const auto guard = torchfix({"env", "--guard", "--python", py}, tmp);
  ASSERT_EQ(guard.exit_code, 0) << guard.out << guard.err;
  EXPECT_NE(guard.out.find("  torch==2.7.1+cu126"), std::string::npos) << guard.out;
  const std::vector<std::string> install = {
      "-m", "pip", "install", "--index-url", index("guard", "cpu"), "needs-cpu-torch"};
  const auto refused = run(py, install, base_env(tmp));
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(freeze(v, tmp).find("torch==2.7.1+cu126"), std::string::npos) << freeze(v, tmp);
  EXPECT_NE(torchfix({"doctor", "--python", py}, tmp).out.find("a torchfix guard pins torch 2.7.1+cu126 here"),
            std::string::npos);
  // Installed around the guard (PIP_CONFIG_FILE=/dev/null reads no pip.conf): the doctor says so.
  Environment around = base_env(tmp);
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
