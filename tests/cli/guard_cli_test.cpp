// `torchfix env --guard` on a real uv project (PROJECT/.venv made by uv,
// PROJECT/pyproject.toml with a [tool.uv] table): the guard's
// [tool.uv.sources] and [[tool.uv.index]] entries steer the real `uv lock`
// to the CUDA torch's index on the local index of tests/support/fix_index.hpp,
// and removing the guard gives back the byte-identical pyproject.toml.

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

class GuardCli : public testing::FixIndexTest {
 protected:
  GuardCli() : FixIndexTest(UsesUv::yes) {}

  ProcessResult uv(std::vector<std::string> args, const TempDir& tmp) const {
    return run(m_uv_dir + "/uv", std::move(args), env(tmp));
  }
  // PROJECT/pyproject.toml (dependencies `deps`, the CPU index as its default) and
  // PROJECT/.venv made by uv with torch 2.7.1+cu126 in it, as a fix leaves it.
  fs::path project(const TempDir& tmp, const std::string& deps, const std::string& more = {}) const {
    const fs::path p = tmp / "project";
    write_file(p / "pyproject.toml",
               "[project]\nname = \"project\"\nversion = \"0.1.0\"\nrequires-python = \">=3.11\"\n"
               "dependencies = [" +
                   deps + "]\n\n[tool.uv]\npackage = false\n" + more + "\n[[tool.uv.index]]\nurl = \"" +
                   m_index->url("guard", "cpu") + "\"\ndefault = true\n");
    EXPECT_EQ(uv({"venv", "--python", testing::k_python, (p / ".venv").string()}, tmp).exit_code, 0);
    const auto r = uv({"pip", "install", "--python", (p / ".venv/bin/python").string(), "torch==2.7.1+cu126",
                       "--index-url", m_index->url("guard", "cu126")},
                      tmp);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return p;
  }
};

TEST_F(GuardCli, AUvProjectGuardSteersUvLockToTheCudaIndexAndIsRemovedByteForByte) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path p = project(tmp, "\"torch\"", "\n[tool.uv.sources]\nlocal-thing = { path = \"local-thing\" }\n");
  const std::string py = (p / ".venv/bin/python").string();
  const std::string before = read_file(p / "pyproject.toml");
  // Unguarded, the project's default index gives the CPU torch.
  ASSERT_EQ(uv({"lock", "--directory", p.string()}, tmp).exit_code, 0);
  EXPECT_NE(read_file(p / "uv.lock").find("version = \"2.7.1+cpu\""), std::string::npos) << read_file(p / "uv.lock");
  const auto guard = torchfix({"env", "--guard", "--python", py}, tmp);
  ASSERT_EQ(guard.exit_code, 0) << guard.out << guard.err;
  EXPECT_NE(guard.out.find("wrote the torchfix block in " + (p / "pyproject.toml").string()), std::string::npos)
      << guard.out;
  const std::string guarded = read_file(p / "pyproject.toml");
  // The mirror: the project's own index, with torch's variant.
  EXPECT_NE(guarded.find("[tool.uv.sources.torch]\nindex = \"torchfix-pytorch-cu126\"\n\n[[tool.uv.index]]\n"
                         "name = \"torchfix-pytorch-cu126\"\nurl = \"" +
                         m_index->url("guard", "cu126") + "\"\nexplicit = true\n"),
            std::string::npos)
      << guarded;
  // A second guard finds its own block, not a conflict, and changes nothing.
  const auto again = torchfix({"env", "--guard", "--python", py}, tmp);
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(read_file(p / "pyproject.toml"), guarded);
  const auto doctor = torchfix({"doctor", "--verbose", "--python", py}, tmp);
  EXPECT_NE(doctor.out.find("a torchfix guard pins torch 2.7.1+cu126 here"), std::string::npos) << doctor.out;
  EXPECT_NE(doctor.out.find("uv project: " + (p / "pyproject.toml").string() + " takes torch from the index"),
            std::string::npos)
      << doctor.out;
  const auto locked = uv({"lock", "--directory", p.string()}, tmp);
  ASSERT_EQ(locked.exit_code, 0) << locked.err;
  EXPECT_NE(read_file(p / "uv.lock").find("version = \"2.7.1+cu126\""), std::string::npos) << read_file(p / "uv.lock");
  // A dependency that needs the CPU torch cannot be added any more; uv leaves the file as it was.
  const auto added = uv({"add", "--directory", p.string(), "--no-sync", "needs-cpu-torch"}, tmp);
  EXPECT_NE(added.exit_code, 0) << added.err;
  EXPECT_NE(added.err.find("torch==2.7.1+cpu"), std::string::npos) << added.err;
  EXPECT_EQ(read_file(p / "pyproject.toml"), guarded);
  // Removed: the file the user had, byte for byte.
  const auto removed = torchfix({"env", "--guard", "--uninstall", "--python", py}, tmp);
  EXPECT_EQ(removed.exit_code, 0) << removed.out << removed.err;
  EXPECT_EQ(read_file(p / "pyproject.toml"), before);
}

TEST_F(GuardCli, AUvProjectWithItsOwnTorchSourceIsRefusedAndLeftAlone) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path p = project(tmp, "\"torch\"", "\n[tool.uv.sources]\ntorch = { index = \"mine\" }\n");
  const std::string before = read_file(p / "pyproject.toml");
  const auto guard = torchfix({"env", "--guard", "--python", (p / ".venv/bin/python").string()}, tmp);
  EXPECT_EQ(guard.exit_code, 2) << guard.out << guard.err;
  EXPECT_EQ(guard.err, "torchfix env: " + (p / "pyproject.toml").string() +
                           ": it already has a [tool.uv.sources] entry for torch; remove that entry, or pin torch's "
                           "index there yourself\n");
  EXPECT_EQ(read_file(p / "pyproject.toml"), before);
  EXPECT_FALSE(fs::exists(p / ".venv/.torchfix/constraints.txt"));
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
