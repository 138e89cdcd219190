// Extensions whose binaries live on their project's own pages, beyond PyG and
// OpenMMLab (recipes/extensions.toml [[project_index]], [[project_source]]):
// detectron2 (pages for torch 1.8 to 1.10 only), pytorch3d (one page per
// Python, CUDA and exact torch release, the last for 2.0.1) and kaolin (one
// page per exact torch release and CUDA). Each is a g++-built library linking
// libc10, installed into a real venv as pip leaves a wheel, and judged on an
// RTX 5090 through the real binary; the test reads the printed first fix.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/extension_venv.hpp"
#include "../support/linux_only.hpp"
#include "../support/repo_knowledge.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;
using namespace testing;  // tests/support/extension_venv.hpp

// Makes a venv in `dir` (its torch 2.6.0+cu126, or `torch_version` py
// file text) holding `name` `version` (its METADATA's spelling) as a
// torch-linked C++ extension (a g++ library with DT_NEEDED libc10.so), runs
// the doctor on it with an RTX 5090 and returns the first fix that installs a
// torch wheel, failing the test when there is none.
std::string first_fix_of(const fs::path& dir, const std::string& name, const std::string& version,
                         const std::string& torch_version = "") {
  auto v = make_venv(dir);
  EXPECT_TRUE(v);
  if (!v) return "";
  if (!torch_version.empty()) write_file(v->site / "torch/version.py", torch_version);
  const fs::path op = build_torch_linked(dir, name + "_C.so", "int op(int x) { return x + 1; }\n");
  install_as_wheel(*v, name, {{"_C.so", op}});
  write_file(v->site / (name + "-0.1.dist-info/METADATA"),
             "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n\n");
  auto r = doctor(*v, {}, "RTX 5090");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string fix = fix_block(r.out, "      fix: Install torch 2.");
  EXPECT_FALSE(fix.empty()) << r.out;
  return fix;
}

// The CUDA variant of the torch index the fix installs from ("cu128").
std::string fix_variant(const std::string& fix) {
  const auto at = fix.find("https://download.pytorch.org/whl/cu");
  if (at == std::string::npos) return "";
  return fix.substr(at + 33, fix.find_first_of(" \n'", at + 33) - at - 33);
}

// detectron2 0.6 has wheels for torch 1.8 to 1.10 only; a fix to a current
// torch says so and rebuilds it from its repository at tag v0.6 (PyPI has no
// detectron2 of facebookresearch's), never `pip --no-binary detectron2
// detectron2==0.6` and never the shown-only "# rebuild" line.
TEST(ProjectIndexCli, Detectron2HasNoWheelForANewTorchAndBuildsFromItsTag) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  const std::string fix = first_fix_of(dir.path(), "detectron2", "0.6+cu113");
  ASSERT_FALSE(fix.empty());
  const std::string variant = fix_variant(fix);
  ASSERT_FALSE(variant.empty()) << fix;
  EXPECT_NE(fix.find("detectron2 0.6+cu113 has no wheel for torch 2."), std::string::npos) << fix;
  EXPECT_NE(fix.find("(none exists: recipes/extensions.toml [[project_index]] has pages of its index for torch 1.8 to "
                     "1.10): build it from https://github.com/facebookresearch/detectron2.git at tag v0.6 against the "
                     "new torch"),
            std::string::npos)
      << fix;
  EXPECT_NE(
      fix.find("$ torchfix build --repo https://github.com/facebookresearch/detectron2.git --ref v0.6 --arch 12.0"),
      std::string::npos)
      << fix;
  EXPECT_NE(fix.find("TORCH_CUDA_ARCH_LIST=12.0 " + (dir / "venv/bin/python").string() +
                     " -m pip install --no-build-isolation --no-binary detectron2 --no-deps --force-reinstall "
                     "'detectron2 @ git+https://github.com/facebookresearch/detectron2.git@v0.6'"),
            std::string::npos)
      << fix;
  EXPECT_EQ(fix.find("detectron2==0.6"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("# rebuild"), std::string::npos) << fix;
}

// pytorch3d's pages name the Python and the exact torch (py39_cu113_pyt1110)
// and stop at torch 2.0.1: a fix to a current torch rebuilds 0.7.8 from its
// tag, which upstream spells V0.7.8.
TEST(ProjectIndexCli, Pytorch3dBuildsFromItsOddlySpelledTag) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  const std::string fix = first_fix_of(dir.path(), "pytorch3d", "0.7.8");
  ASSERT_FALSE(fix.empty());
  EXPECT_NE(fix.find("pytorch3d 0.7.8 has no wheel for torch 2."), std::string::npos) << fix;
  EXPECT_NE(fix.find("[[project_index]] has pages of its index for torch 1.8.0 to 2.0.1"), std::string::npos) << fix;
  EXPECT_NE(fix.find("$ torchfix build --repo https://github.com/facebookresearch/pytorch3d.git --ref V0.7.8"),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("'pytorch3d @ git+https://github.com/facebookresearch/pytorch3d.git@V0.7.8'"), std::string::npos)
      << fix;
  EXPECT_EQ(fix.find("pytorch3d==0.7.8"), std::string::npos) << fix;
}

// kaolin's pages name the exact torch release (torch-2.7.1_cu128.html). With
// torch 2.7.1+cu118 on an RTX 5090 (cu118 has no sm_120), the first fix keeps
// torch 2.7.1 from the cu128 index, the one release for which kaolin has a
// page there, and moves kaolin to that page; a newer torch ("2.8.*", whose
// patch pip picks) would leave kaolin to a source build.
TEST(ProjectIndexCli, KaolinMovesToThePageOfTheExactRelease) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  const std::string fix = first_fix_of(
      dir.path(), "kaolin", "0.18.0",
      "from typing import Optional\n__version__ = '2.7.1+cu118'\ndebug = False\ncuda: Optional[str] = '11.8'\n");
  ASSERT_FALSE(fix.empty());
  EXPECT_EQ(fix_variant(fix), "cu128") << fix;
  EXPECT_NE(fix.find("torch==2.7.1 "), std::string::npos) << fix;
  const std::string page = "https://nvidia-kaolin.s3.us-east-2.amazonaws.com/torch-2.7.1_cu128.html";
  EXPECT_EQ(testing::repo_knowledge().project_page("kaolin", Version({2, 7, 1}), "cu128"), page);
  EXPECT_NE(fix.find("kaolin 0.18.0 moves to its wheel for torch 2.7+cu128 from " + page), std::string::npos) << fix;
  EXPECT_NE(fix.find("-m pip install --force-reinstall --no-deps --only-binary kaolin kaolin -f " + page),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("not a newer torch: kaolin 0.18.0 has no release for torch 2."), std::string::npos) << fix;
  EXPECT_NE(fix.find(" (recipes/extensions.toml [[project_index]]);"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("git+"), std::string::npos) << fix;
}

// kaolin's setup.py refuses a torch outside TORCH_MIN_VER..TORCH_MAX_VER
// unless IGNORE_TORCH_VER is set, which it warns against ([[source_torch_cap]]:
// v0.18.0 accepts 1.6.0 to 2.8.0). Beside torch 2.6.0+cu126 on an RTX 5090 no
// kaolin page serves a torch==X.Y.* fix, so kaolin is built from its tag: the
// first fix is a torch that v0.18.0 accepts (2.7, not 2.15, which no release
// accepts), and never sets the override. A kaolin 0.12.0 (cap 1.12.1) is built
// at the newest release whose setup.py accepts the new torch, v0.18.0.
TEST(ProjectIndexCli, KaolinIsBuiltOnlyForATorchItsSetupPyAccepts) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  fs::create_directories(dir.path() / "a");
  fs::create_directories(dir.path() / "b");
  const std::string fix = first_fix_of(dir.path() / "a", "kaolin", "0.18.0");
  ASSERT_FALSE(fix.empty());
  EXPECT_NE(fix.find("'torch==2.7.*'"), std::string::npos) << fix;
  EXPECT_NE(fix.find("'kaolin @ git+https://github.com/NVIDIAGameWorks/kaolin.git@v0.18.0'"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("IGNORE_TORCH_VER"), std::string::npos) << fix;
  const std::string old = first_fix_of(dir.path() / "b", "kaolin", "0.12.0");
  ASSERT_FALSE(old.empty());
  EXPECT_NE(old.find("kaolin 0.12.0's setup.py accepts torch 1.5.0 to 1.12.1 only (NVIDIAGameWorks/kaolin setup.py at "
                     "v0.12.0"),
            std::string::npos)
      << old;
  EXPECT_NE(old.find("release 0.18.0 accepts torch 1.6.0 to 2.8.0"), std::string::npos) << old;
  EXPECT_NE(old.find("$ torchfix build --repo https://github.com/NVIDIAGameWorks/kaolin.git --ref v0.18.0"),
            std::string::npos)
      << old;
  EXPECT_EQ(old.find("git@v0.12.0"), std::string::npos) << old;
  EXPECT_EQ(old.find("IGNORE_TORCH_VER"), std::string::npos) << old;
}

// pytorch3d installs from its pages alone (INSTALL.md: `pip install
// --no-index --no-cache-dir pytorch3d -f PAGE`): a PyPI pytorch3d of the same
// version must not be picked instead. On an H100 beside torch 2.0.1+cu117 (no
// sm_90), the fix keeps 2.0.1 from cu118 and moves pytorch3d to its cu118
// page with --no-index; PyG's moves keep --only-binary (ExtensionsCli).
TEST(ProjectIndexCli, Pytorch3dMovesFromItsPageAloneWithNoIndex) {
  const ProcessResult r = doctor_snapshot("h100-torch201-cu117-pytorch3d074.json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string fix = fix_block(r.out, "      fix: Install torch 2.0.1");
  ASSERT_FALSE(fix.empty()) << r.out;
  EXPECT_NE(fix.find("/home/u/venv/bin/python -m pip install --force-reinstall --no-deps --no-index pytorch3d -f "
                     "https://dl.fbaipublicfiles.com/pytorch3d/packaging/wheels/py310_cu118_pyt201/download.html"),
            std::string::npos)
      << fix;
  EXPECT_EQ(fix.find("--only-binary pytorch3d"), std::string::npos) << fix;
}

}  // namespace
}  // namespace torchfix
