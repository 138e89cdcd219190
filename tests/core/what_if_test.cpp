// What-if values applied to snapshots with the real knowledge tables: the
// situations users describe (platform, old drivers, torch without a variant,
// extensions, Python, old GPUs by name) and one clear error for absurd ones.
#include "core/situation/what_if.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "../support/repo_knowledge.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return torchfix::testing::repo_knowledge();
}

Expected<Snapshot> apply(WhatIf w, Snapshot s = {}) {
  if (auto r = apply_what_if(s, w, knowledge()); !r) return std::unexpected(r.error());
  return s;
}

TEST(WhatIf, DriversFromR384InBothForms) {
  // A driver version's CUDA is the tables' answer, looked up by situate().
  auto cuda_of = [](const Expected<Snapshot>& s) {
    const auto cuda = situate(*s, knowledge()).driver.cuda;
    return cuda ? cuda->str() : std::string("none");
  };
  auto s = apply({.driver = "470.82.01"});
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_FALSE(s->driver.cuda_version);
  EXPECT_EQ(cuda_of(s), "11.4");
  EXPECT_EQ(cuda_of(apply({.driver = "384.81"})), "9.0");
  EXPECT_EQ(apply({.driver = "11.4"})->driver.cuda_version->str(), "11.4");
  // A branch, in both spellings: its newest driver (R570 is CUDA 12.8).
  EXPECT_EQ(cuda_of(apply({.driver = "570"})), "12.8");
  EXPECT_EQ(cuda_of(apply({.driver = "R570"})), "12.8");
  EXPECT_FALSE(apply({.driver = "R12.8"}));
  auto old = apply({.driver = "375.26"});
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message.find("R384"), std::string::npos) << old.error().message;
  EXPECT_FALSE(apply({.driver = "99.9"}));
  EXPECT_FALSE(apply({.driver = "5.0"}));
}

TEST(WhatIf, ComputeCapabilitiesAreCheckedAgainstTheGpuTable) {
  for (const char* absurd : {"sm_999", "99.9", "4.2"}) {
    auto s = apply({.gpus = {absurd}});
    ASSERT_FALSE(s) << absurd;
    EXPECT_EQ(s.error().message.find('\n'), std::string::npos);
    EXPECT_NE(s.error().message.find("no NVIDIA GPU has compute capability"), std::string::npos) << s.error().message;
  }
  EXPECT_FALSE(apply({.gpus = {"sm_1200"}}));
  EXPECT_TRUE(apply({.gpus = {"sm_120"}}));
}

TEST(WhatIf, OldGpusByName) {
  auto k40 = apply({.gpus = {"K40c"}});
  ASSERT_TRUE(k40) << k40.error().message;
  EXPECT_EQ(k40->gpus[0].cc->str(), "3.5");
  auto gt710 = apply({.gpus = {"GT 710"}});
  ASSERT_TRUE(gt710) << gt710.error().message;
  EXPECT_EQ(gt710->gpus[0].cc->str(), "3.5");
  EXPECT_EQ(apply({.gpus = {"GTX 680"}})->gpus[0].cc->str(), "3.0");
  EXPECT_EQ(apply({.gpus = {"Quadro P2000"}})->gpus[0].cc->str(), "6.1");
}

TEST(WhatIf, Platforms) {
  auto windows = apply({.machine = "windows"});
  ASSERT_TRUE(windows);
  EXPECT_TRUE(windows->platform.windows);
  auto wsl = apply({.machine = "wsl2"});
  ASSERT_TRUE(wsl);
  EXPECT_TRUE(wsl->platform.wsl2);
  EXPECT_TRUE(wsl->platform.libcuda_loadable);
  EXPECT_EQ(apply({.machine = "linux-aarch64"})->platform.machine, "aarch64");
  EXPECT_EQ(apply({.machine = "aarch64"})->platform.machine, "aarch64");
  auto bad = apply({.machine = "macos"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("linux-x86_64, linux-aarch64, windows, wsl2"), std::string::npos);
  // WSL2 and Windows drivers are Windows numbers: 566.36 supports CUDA 12.7
  // there, 12.6 by the Linux table.
  auto host = apply({.driver = "566.36", .machine = "wsl2"});
  ASSERT_TRUE(host) << host.error().message;
  EXPECT_NE(host->driver.source.find("Windows"), std::string::npos);
  EXPECT_EQ(situate(*host, knowledge()).driver.cuda->str(), "12.7");
}

TEST(WhatIf, TorchWithoutVariantIsThePypiDefault) {
  auto s = apply({.torch = "2.6.0"});
  ASSERT_TRUE(s) << s.error().message;
  ASSERT_TRUE(s->pythons[0].torch);
  EXPECT_EQ(s->pythons[0].torch->version, "2.6.0+cu124");
  EXPECT_EQ(*s->pythons[0].torch->cuda, "12.4");
  EXPECT_EQ(apply({.torch = "2.8.0"})->pythons[0].torch->version, "2.8.0+cu128");
  EXPECT_EQ(apply({.torch = "2.6.0+cu126"})->pythons[0].torch->version, "2.6.0+cu126");
  EXPECT_FALSE(apply({.torch = "two"}));
}

// F7 as a what-if: flash-attn's wheel has sm_80 and sm_90 only; a Jetson Orin
// (Tegra 8.7) needs exactly sm_87.
TEST(WhatIf, WithAnExtensionCarriesItsWheelArchs) {
  auto s = apply({.gpus = {"Jetson AGX Orin"}, .torch = "2.5.1+cu124", .with = {"flash_attn==2.6.3"}});
  ASSERT_TRUE(s) << s.error().message;
  const PythonEnv& env = s->pythons[0];
  EXPECT_EQ(env.distributions.at("flash-attn"), "2.6.3");
  ASSERT_EQ(env.kernels.size(), 1u);
  const Diagnosis d = diagnose(*s, knowledge());
  const bool flash_fails = std::ranges::any_of(
      d.findings, [](const Finding& f) { return f.package == "flash-attn" && f.severity == Severity::problem; });
  EXPECT_TRUE(flash_fails);
  EXPECT_FALSE(apply({.with = {"flash-attn"}}));
  EXPECT_FALSE(apply({.with = {"flash-attn==abc"}}));
}

TEST(WhatIf, PythonVersion) {
  EXPECT_EQ(*apply({.python_version = "3.12"})->pythons[0].python_version, "3.12");
  EXPECT_FALSE(apply({.python_version = "12"}));
  EXPECT_FALSE(apply({.python_version = "2.7"}));
}

TEST(WhatIf, BorrowedFactsAreNamed) {
  Snapshot s;
  s.compilers = {{"/usr/bin/g++", "PATH", CompilerFamily::gcc, Version::parse("12.2.0")}};
  s.platform.container = true;
  WhatIf w{.gpus = {"V100"}};
  const std::string line = borrowed_facts(s, w, true);
  EXPECT_NE(line.find("toolkits and compilers"), std::string::npos) << line;
  EXPECT_NE(line.find("container state"), std::string::npos) << line;
  EXPECT_TRUE(borrowed_facts(s, w, false).empty());
  EXPECT_TRUE(borrowed_facts(s, WhatIf{}, true).empty());
}

}  // namespace
}  // namespace torchfix
