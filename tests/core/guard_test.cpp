// The guard's pure part (core/diagnosis/guard.hpp): which pyproject.toml texts are uv
// projects, what the uv-project guard writes, and what keeps it out.

#include "core/diagnosis/guard.hpp"

#include <gtest/gtest.h>

#include "core/diagnosis/fix_plan.hpp"

namespace torchfix {
namespace {

UvProjectGuard cu128() {
  return *uv_project_guard(parse_freeze("torch==2.7.1+cu128\ntorchvision==0.22.1+cu128\ntorchaudio==2.7.1\n"), "cu128",
                           "https://mirror.example/whl/cu128");
}

TEST(Guard, AUvProjectHasAToolUvTableOrALockFile) {
  EXPECT_TRUE(is_uv_project("[project]\nname = \"p\"\n[tool.uv]\npackage = false\n", false));
  EXPECT_TRUE(is_uv_project("[ tool.uv.sources ]\nx = { path = \"x\" }\n", false));
  EXPECT_TRUE(is_uv_project("[[tool.uv.index]]\nurl = \"u\"\n", false));
  EXPECT_TRUE(is_uv_project("[project]\nname = \"p\"\n", true));
  EXPECT_FALSE(is_uv_project("[project]\nname = \"p\"\n[tool.uvicorn]\nx = 1\n[tool.poetry]\n", false));
}

TEST(Guard, TheBlockPinsTorchAndCompanionsOfTheSameVariantToOneExplicitIndex) {
  const UvProjectGuard g = cu128();
  EXPECT_EQ(g.packages, (std::vector<std::string>{"torch", "torchvision"}));  // torchaudio has no +cu128
  EXPECT_EQ(uv_project_block(g),
            "[tool.uv.sources.torch]\nindex = \"torchfix-pytorch-cu128\"\n\n"
            "[tool.uv.sources.torchvision]\nindex = \"torchfix-pytorch-cu128\"\n\n"
            "[[tool.uv.index]]\nname = \"torchfix-pytorch-cu128\"\nurl = \"https://mirror.example/whl/cu128\"\n"
            "explicit = true\n");
  EXPECT_FALSE(uv_project_guard(parse_freeze("numpy==2.0\n"), "cu128", "u"));
}

TEST(Guard, ItsOwnSourcesAndIndexesKeepTheGuardOut) {
  const UvProjectGuard g = cu128();
  EXPECT_EQ(uv_project_conflict("[tool.uv]\npackage = false\n[tool.uv.sources]\nlocal = { path = \"l\" }\n"
                                "[[tool.uv.index]]\nname = \"mine\"\nurl = \"u\"\n",
                                g),
            std::nullopt);
  EXPECT_EQ(uv_project_conflict("[tool.uv.sources]\n torch = { index = \"mine\" }\n", g),
            "it already has a [tool.uv.sources] entry for torch");
  EXPECT_EQ(uv_project_conflict("[tool.uv.sources.\"torchvision\"]\nindex = \"mine\"\n", g),
            "it already has a [tool.uv.sources] entry for torchvision");
  EXPECT_EQ(uv_project_conflict("[tool.uv]\nsources.torch = { index = \"mine\" }\n", g),
            "it already has a [tool.uv.sources] entry for torch");
  EXPECT_EQ(uv_project_conflict("[[tool.uv.index]]\nname = \"torchfix-pytorch-cu128\"\nurl = \"u\"\n", g),
            "it already has an index named torchfix-pytorch-cu128 that torchfix did not write");
  EXPECT_NE(uv_project_conflict("[tool.uv]\nsources = { local = { path = \"l\" } }\n", g), std::nullopt);
  EXPECT_NE(uv_project_conflict("[tool.uv]\nindex = [{ name = \"a\", url = \"u\" }]\n", g), std::nullopt);
  // Comments and a [project] name are no entries.
  EXPECT_EQ(uv_project_conflict("# [tool.uv.sources.torch]\n[project]\nname = \"torchfix-pytorch-cu128\"\n", g),
            std::nullopt);
}

}  // namespace
}  // namespace torchfix
