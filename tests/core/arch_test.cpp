#include "core/arch/arch.hpp"

#include <gtest/gtest.h>

namespace torchfix {
namespace {

Arch arch(const char* name) {
  return Arch::parse(name).value();
}
ComputeCapability cc(const char* text) {
  return ComputeCapability::parse(text).value();
}

TEST(ComputeCapability, ParsesEverySpelling) {
  EXPECT_EQ(cc("12.0"), (ComputeCapability{12, 0}));
  EXPECT_EQ(cc("120"), (ComputeCapability{12, 0}));
  EXPECT_EQ(cc("sm_86"), (ComputeCapability{8, 6}));
  EXPECT_EQ(cc("compute_90a"), (ComputeCapability{9, 0}));
  EXPECT_EQ(cc("7.5").number(), 75);
  EXPECT_EQ(cc("121").str(), "12.1");
}

TEST(ComputeCapability, RejectsGarbageWithTheValueInTheMessage) {
  for (const char* bad : {"", "12", "1.20", "x.y", "sm_", "12.0.1", "-8.6", "5"}) {
    auto r = ComputeCapability::parse(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find(std::string("'") + bad + "'"), std::string::npos) << r.error().message;
  }
}

TEST(Arch, RoundTripsNames) {
  for (const char* name : {"sm_80", "sm_90a", "sm_100f", "compute_120", "compute_90a", "sm_121a"}) {
    EXPECT_EQ(arch(name).name(), name);
  }
  EXPECT_EQ(arch("compute_120").kind, ImageKind::ptx);
  EXPECT_EQ(arch("sm_120a").variant, ArchVariant::specific);
  EXPECT_FALSE(Arch::parse("12.0"));
  EXPECT_FALSE(Arch::parse("sm_12x"));
}

TEST(SassRule, SameMajorAtOrAboveMinor) {
  EXPECT_TRUE(sass_runs_on(arch("sm_80"), cc("8.6")));
  EXPECT_TRUE(sass_runs_on(arch("sm_86"), cc("8.9")));  // Ada runs 8.6 SASS
  EXPECT_FALSE(sass_runs_on(arch("sm_86"), cc("8.0")));
  EXPECT_FALSE(sass_runs_on(arch("sm_90"), cc("10.0")));  // never across majors
  EXPECT_TRUE(sass_runs_on(arch("sm_60"), cc("6.1")));    // GTX 1080 Ti on sm_60
  EXPECT_TRUE(sass_runs_on(arch("sm_120"), cc("12.1")));  // GB10 runs sm_120
}

TEST(SassRule, ArchSpecificOnlyOnExactCapability) {
  EXPECT_TRUE(sass_runs_on(arch("sm_90a"), cc("9.0")));
  EXPECT_FALSE(sass_runs_on(arch("sm_90a"), cc("10.0")));
  EXPECT_FALSE(sass_runs_on(arch("sm_120a"), cc("12.1")));
  EXPECT_TRUE(sass_runs_on(arch("sm_100f"), cc("10.3")));
  EXPECT_FALSE(sass_runs_on(arch("sm_100f"), cc("12.0")));
}

TEST(SassRule, TegraNeedsItsExactCubin) {
  EXPECT_FALSE(sass_runs_on(arch("sm_80"), cc("8.7")));  // Jetson Orin (field case F7)
  EXPECT_TRUE(sass_runs_on(arch("sm_87"), cc("8.7")));
  EXPECT_FALSE(sass_runs_on(arch("sm_87"), cc("8.9")));
  EXPECT_TRUE(sass_runs_on(arch("sm_101"), cc("11.0")));  // Thor renamed under CUDA 13
  EXPECT_TRUE(sass_runs_on(arch("sm_110"), cc("11.0")));
  EXPECT_FALSE(sass_runs_on(arch("sm_100"), cc("10.1")));
}

TEST(PtxRule, JitForwardAcrossMajors) {
  EXPECT_TRUE(ptx_runs_on(arch("compute_90"), cc("12.0")));
  EXPECT_TRUE(ptx_runs_on(arch("compute_80"), cc("8.7")));
  EXPECT_FALSE(ptx_runs_on(arch("compute_90"), cc("8.9")));
  EXPECT_FALSE(ptx_runs_on(arch("compute_90a"), cc("10.0")));
  EXPECT_TRUE(ptx_runs_on(arch("compute_90a"), cc("9.0")));
}

TEST(BestReach, PrefersSassThenPtx) {
  EXPECT_EQ(best_reach({arch("sm_80"), arch("compute_90")}, cc("8.6")), Reach::native);
  EXPECT_EQ(best_reach({arch("sm_80"), arch("compute_90")}, cc("12.0")), Reach::ptx_jit);
  EXPECT_EQ(best_reach({arch("sm_80"), arch("sm_90")}, cc("12.0")), Reach::none);
  EXPECT_EQ(best_reach({}, cc("12.0")), Reach::none);
}

}  // namespace
}  // namespace torchfix
