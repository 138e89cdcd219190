// `torchfix fix` for a torch that conda installed: a real .conda package of
// a fake torch (its libtorch_cuda.so holds the shared index's real nvcc
// kernels, sm_80 and sm_90), built by conda-package-handling, filed in a
// file:// channel indexed by py-rattler and installed by py-rattler into a
// real venv, which writes the conda-meta record conda writes. The GPU is the
// what-if RTX 5090 (sm_120); no conda program is on PATH.

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

// The Python with py-rattler and conda-package-handling (.ci/install-deps).
const std::string k_conda_tools = "/opt/torchfix-conda-tools/bin/python";

class FixCondaCli : public testing::FixIndexTest {
 protected:
  void SetUp() override {
    testing::FixIndexTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!fs::exists(k_conda_tools)) GTEST_SKIP() << "no " << k_conda_tools << " (.ci/install-deps makes it)";
  }
  // A venv whose torch 2.5.1 (CUDA 12.4, sm_80 and sm_90) is the conda
  // package pytorch BUILD from the file:// channel TMP/channel/CHANNEL.
  fs::path conda_venv(const TempDir& tmp, const std::string& channel, const std::string& build) const {
    const fs::path v = tmp / "venv";
    EXPECT_EQ(run(testing::k_python, {"-m", "venv", "--without-pip", v.string()}, env(tmp)).exit_code, 0);
    const std::string site = run((v / "bin/python").string(),
                                 {"-c", "import sysconfig; print(sysconfig.get_paths()['purelib'], end='')"}, env(tmp))
                                 .out;
    const auto r = run(k_conda_tools,
                       {testing::k_fix_fixtures + "fake_conda_env.py", tmp.path().string(), v.string(), channel, build,
                        "--site", site, "--so", m_index->library("old.so").string()},
                       env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return v;
  }
  std::string record(const fs::path& v, const std::string& build) const {
    return read_file(v / "conda-meta" / ("pytorch-2.5.1-" + build + ".json"));
  }
};

// conda-forge's CUDA build: the fix stays a conda install of a CUDA build
// from conda-forge, through the mirror ~/.condarc names for it; without a
// conda program the run is refused with one line and nothing changes.
TEST_F(FixCondaCli, ACondaForgeTorchGetsACondaInstallThroughTheCondarcMirrorAndNoCondaRefusesToApply) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const std::string build = "cuda124_py311h0000000_300";
  const fs::path v = conda_venv(tmp, "conda-forge", build);
  const std::string mirror = "file://" + (tmp / "channel").string();
  write_file(tmp / ".condarc", "channels:\n  - conda-forge\ncustom_channels:\n  conda-forge: " + mirror + "\n");
  const std::string py = (v / "bin/python").string();
  const auto r = torchfix({"fix", "--dry-run", "--offline", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(py + " (installs with conda: conda owns its torch)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("changes: pytorch 2.5.1 " + build + " (conda, conda-forge) -> pytorch >=2."), std::string::npos)
      << r.out;
  const std::string install =
      "conda install -p " + v.string() + " -y --override-channels -c " + mirror + "/conda-forge 'pytorch >=2.";
  EXPECT_NE(r.out.find(install), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" cuda*' 'cuda-version >=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(the mirror configured in " + (tmp / ".condarc").string() +
                       "; upstream: https://conda.anaconda.org/conda-forge)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("pip install"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dry run: would record the conda-meta records of " + v.string()), std::string::npos) << r.out;

  const std::string before = record(v, build);
  const auto yes = torchfix({"fix", "--yes", "--offline", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(yes.exit_code, 1) << yes.out << yes.err;
  EXPECT_NE(yes.out.find("torchfix fix: no conda program found (CONDA_EXE, conda on PATH)"), std::string::npos)
      << yes.out;
  EXPECT_EQ(record(v, build), before);
  EXPECT_FALSE(fs::exists(v / ".torchfix/fix-before.txt"));
}

// The pytorch channel published nothing after 2.5: the fix is the wheel,
// with the conda package removed first, and the plan says why.
TEST_F(FixCondaCli, APytorchChannelTorchNeedingANewerReleaseIsReplacedByTheWheelAfterTheCondaPackageGoes) {
  TORCHFIX_LINUX_ONLY("real venvs of Linux python3 with pip or uv, and a local index served by http.server");
  TempDir tmp;
  const fs::path v = conda_venv(tmp, "pytorch", "py3.11_cuda12.4_cudnn9.1.0_0");
  const std::string py = (v / "bin/python").string();
  const auto r = torchfix({"fix", "--dry-run", "--offline", "--gpu", "sm_120", "--python", py}, tmp);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string remove = "conda remove -p " + v.string() + " -y --force pytorch";
  const auto at = r.out.find(remove);
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find(py + " (installs with pip, after conda removes its torch)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no conda build fits: the pytorch channel published no torch after 2.5"), std::string::npos)
      << r.out;
  EXPECT_GT(r.out.find(py + " -m pip install --force-reinstall torch==", at), at) << r.out;
  EXPECT_NE(r.out.find("--index-url https://download.pytorch.org/whl/cu"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
