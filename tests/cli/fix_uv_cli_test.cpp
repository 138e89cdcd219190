// `torchfix fix` and `torchfix env --guard` on venvs made by the real uv
// (`uv venv`: pyvenv.cfg has a `uv = VERSION` line, no pip inside), which
// torchfix installs into with `uv pip ... --python PY`, against the local
// index of tests/support/fix_index.hpp. The mirror is configured where uv
// reads it: ~/.config/uv/uv.toml.

#include <gtest/gtest.h>

#include <filesystem>

#include "../support/fix_index.hpp"
#include "../support/linux_only.hpp"

#ifndef _WIN32  // every test below is Linux-only (TORCHFIX_LINUX_ONLY)

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::run;
using testing::TempDir;
using testing::write_file;

class FixUvCli : public testing::FixIndexTest {
 protected:
  FixUvCli() : FixIndexTest(UsesUv::yes) {}

  std::string uv() const { return m_uv_dir + "/uv"; }
  // A uv venv with torch 2.7.1+cu126 (sm_80, sm_90) from `tree`, uv.toml naming that mirror.
  fs::path venv(const TempDir& tmp, const std::string& tree, const std::string& folder = "venv") const {
    const fs::path v = tmp / folder;
    write_file(tmp / ".config/uv/uv.toml", "index-url = \"" + m_index->url(tree, "cu126") + "\"\n");
    auto r = run(uv(), {"venv", "--python", testing::k_python, v.string()}, env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    r = run(uv(), {"pip", "install", "--python", (v / "bin/python").string(), "torch==2.7.1"}, env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return v;
  }
  std::string freeze(const fs::path& v, const TempDir& tmp) const {
    return run(uv(), {"pip", "freeze", "--python", (v / "bin/python").string()}, env(tmp)).out;
  }
};

TEST_F(FixUvCli, YesInstallsWithUvAndTheDoctorAgrees) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "good");
  const std::string py = (v / "bin/python").string();
  ASSERT_NE(read_file(v / "pyvenv.cfg").find("\nuv = "), std::string::npos) << read_file(v / "pyvenv.cfg");
  ASSERT_FALSE(fs::exists(v / "bin/pip")) << "uv venv makes no pip; the test would not show uv doing the work";
  const auto r = torchfix({"fix", "--yes", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("torchfix fix: " + py + " (installs with uv)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1/1] " + uv() + " pip install --python " + py + " --reinstall torch==2.7.1 --index-url " +
                       m_index->url("good", "cu128")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("the mirror configured in " + (tmp / ".config/uv/uv.toml").string()), std::string::npos)
      << r.out;
  expect_fixed_to_cu128(r, v, freeze(v, tmp), tmp);
}

TEST_F(FixUvCli, AWheelWithoutTheArchIsRolledBackWithUvToTheExactRecordedSet) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "bad");
  const std::string py = (v / "bin/python").string();
  const std::string before = freeze(v, tmp);
  const auto r = torchfix({"fix", "--yes", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("not fixed: the re-diagnosis still finds:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1/1] " + uv() + " pip install --python " + py +
                       " --no-deps --reinstall torch==2.7.1+cu126 --index-url " + m_index->url("bad", "cu126")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("restored: the environment holds exactly the recorded set again"), std::string::npos) << r.out;
  EXPECT_EQ(freeze(v, tmp), before);
}

// A uv venv has no pip: without uv on PATH there is nothing to install with.
TEST_F(FixUvCli, AUvVenvWithoutUvOnPathIsRefusedWithOneLine) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "good");
  const std::string py = (v / "bin/python").string();
  const std::string line = "uv made " + v.string() + ", which has no pip, and there is no uv on PATH; put uv on PATH\n";
  const auto fix = run(TORCHFIX_BINARY, {"fix", "--dry-run", "--gpu", "sm_120", "--python", py}, testing::fix_env(tmp));
  EXPECT_EQ(fix.exit_code, 2) << fix.out << fix.err;
  EXPECT_EQ(fix.err, "torchfix fix: " + line);
  const auto guard = run(TORCHFIX_BINARY, {"env", "--guard", "--python", py}, testing::fix_env(tmp));
  EXPECT_EQ(guard.exit_code, 2) << guard.out << guard.err;
  EXPECT_EQ(guard.err, "torchfix env: " + line);
}

// The guard's lines in bin/activate are quoted as every printed command is
// (core/base/quote.hpp): a venv folder with a single quote in its name gets
// PIP_CONSTRAINT and UV_CONSTRAINT set to exactly the constraints file.
TEST_F(FixUvCli, TheGuardLinesInActivateHoldAPathWithASingleQuote) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "guard", "it's venv");
  const auto guard = torchfix({"env", "--guard", "--python", (v / "bin/python").string()}, tmp);
  ASSERT_EQ(guard.exit_code, 0) << guard.out << guard.err;
  const std::string activate = read_file(v / "bin/activate");
  std::string lines;
  for (std::size_t at = activate.find("export "); at != std::string::npos; at = activate.find("export ", at + 1)) {
    const std::string line = activate.substr(at, activate.find('\n', at) - at);
    if (line.find("_CONSTRAINT=") != std::string::npos) lines += line + "\n";
  }
  ASSERT_NE(lines, "") << activate;
  const auto set = run("/bin/bash", {"-c", lines + "printf '%s|%s' \"$PIP_CONSTRAINT\" \"$UV_CONSTRAINT\""}, env(tmp));
  const std::string file = (v / ".torchfix/constraints.txt").string();
  EXPECT_EQ(set.out, file + "|" + file) << lines << set.err;
}

// uv reads no per-environment file (no pip.conf): the guard holds for uv in
// a shell that activated the venv (UV_CONSTRAINT in bin/activate).
TEST_F(FixUvCli, AGuardMakesAUvInstallThatWantsAnotherTorchFailInTheActivatedVenv) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = venv(tmp, "guard");
  const std::string py = (v / "bin/python").string();
  const auto guard = torchfix({"env", "--guard", "--python", py}, tmp);
  ASSERT_EQ(guard.exit_code, 0) << guard.out << guard.err;
  EXPECT_NE(guard.out.find("  torch==2.7.1+cu126"), std::string::npos) << guard.out;
  const std::string install = "uv pip install --index-url " + m_index->url("guard", "cpu") + " needs-cpu-torch";
  const auto refused = run("/bin/bash", {"-c", ". '" + (v / "bin/activate").string() + "' && " + install}, env(tmp));
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("torch==2.7.1+cu126"), std::string::npos) << refused.err;
  EXPECT_NE(freeze(v, tmp).find("torch==2.7.1+cu126"), std::string::npos) << freeze(v, tmp);
  EXPECT_NE(torchfix({"doctor", "--python", py}, tmp).out.find("a torchfix guard pins torch 2.7.1+cu126 here"),
            std::string::npos);
  // Without the guard the same install replaces the CUDA torch: the refusal above was the guard's.
  ASSERT_EQ(torchfix({"env", "--guard", "--uninstall", "--python", py}, tmp).exit_code, 0);
  EXPECT_EQ(read_file(v / "bin/activate").find("UV_CONSTRAINT"), std::string::npos);
  const auto replaced = run("/bin/bash", {"-c", ". '" + (v / "bin/activate").string() + "' && " + install}, env(tmp));
  EXPECT_EQ(replaced.exit_code, 0) << replaced.out << replaced.err;
  EXPECT_NE(freeze(v, tmp).find("torch==2.7.1+cpu"), std::string::npos) << freeze(v, tmp);
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
