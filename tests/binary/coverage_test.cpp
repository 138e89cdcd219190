// Verdicts per GPU from kernels read out of nvcc-compiled fixtures, and the
// coverage arithmetic on hand-made module groups.
#include "core/situation/coverage.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "binary/reader.hpp"
#include "fixtures.hpp"

namespace torchfix {
namespace {

ComputeCapability cc(const char* text) {
  return *ComputeCapability::parse(text);
}

Reach verdict(const std::string& name, const char* gpu) {
  auto path = test::fixture(name);
  if (!path) {
    ADD_FAILURE() << path.error().message;
    return Reach::none;
  }
  const auto file = binary::read_kernels_file(*path);
  EXPECT_EQ(file.error, "");
  return worst_reach(coverage_on(binary::summarise(file), cc(gpu)));
}

TEST(Coverage, Sm80OnlyCannotRunOnJetsonOrin) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(verdict("sm80.o", "8.7"), Reach::none);  // Tegra needs its exact cubin
  EXPECT_EQ(verdict("sm80.o", "8.6"), Reach::native);
  EXPECT_EQ(verdict("sm80.o", "8.0"), Reach::native);
  EXPECT_EQ(verdict("sm80.o", "9.0"), Reach::none);
}

TEST(Coverage, Compute90PtxRunsThroughJitOnBlackwell) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(verdict("ptx90.o", "12.0"), Reach::ptx_jit);
  EXPECT_EQ(verdict("ptx90.o", "9.0"), Reach::ptx_jit);
  EXPECT_EQ(verdict("ptx90.o", "8.9"), Reach::none);
}

TEST(Coverage, Sm90aRunsOnlyOnHopper) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(verdict("sm90a.o", "9.0"), Reach::native);
  EXPECT_EQ(verdict("sm90a.o", "10.0"), Reach::none);
  EXPECT_EQ(verdict("sm90a.cubin", "9.0"), Reach::native);
  EXPECT_EQ(verdict("sm90a.cubin", "10.0"), Reach::none);
}

TEST(Coverage, Sm100fRunsOnTheFamily) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(verdict("sm100f.o", "10.0"), Reach::native);
  EXPECT_EQ(verdict("sm100f.o", "10.3"), Reach::native);
  EXPECT_EQ(verdict("sm100f.o", "12.0"), Reach::none);
}

TEST(Coverage, PtxOnly120JitsOnBlackwellAndNewer) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(verdict("ptx120.o", "12.0"), Reach::ptx_jit);
  EXPECT_EQ(verdict("ptx120.o", "12.1"), Reach::ptx_jit);
  EXPECT_EQ(verdict("ptx120.o", "10.0"), Reach::none);
  EXPECT_EQ(verdict("sm120_ptx.o", "12.0"), Reach::native);
  EXPECT_EQ(verdict("sm120_ptx.o", "12.1"), Reach::native);
}

TEST(Coverage, DeviceLinkStubDoesNotBlockAnyGpu) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(verdict("stub.so", "8.0"), Reach::native);  // the stub is sm_75 only
}

TEST(Coverage, RelocatableObjectVerdictFollowsItsImages) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  EXPECT_EQ(verdict("rdc.o", "8.6"), Reach::native);
  EXPECT_EQ(verdict("rdc.o", "12.0"), Reach::ptx_jit);
}

TEST(Coverage, PartialLibraryCountsModulesPerReach) {
  TORCHFIX_LINUX_ONLY("builds its fixture with the Linux nvcc");
  TORCHFIX_REQUIRE_NVCC();
  TORCHFIX_FIXTURE(path, test::fixture("partial.so"));
  const auto summary = binary::summarise(binary::read_kernels_file(path));
  const Coverage blackwell = coverage_on(summary, cc("12.0"));
  EXPECT_EQ(blackwell.modules, 4);
  EXPECT_EQ(blackwell.native, 2);
  EXPECT_EQ(blackwell.ptx_jit, 1);
  EXPECT_EQ(blackwell.none, 1);
  EXPECT_EQ(worst_reach(blackwell), Reach::none);
  const Coverage ampere = coverage_on(summary, cc("8.6"));
  EXPECT_EQ(ampere.native, 3);
  EXPECT_EQ(ampere.none, 1);  // compute_90 PTX does not JIT down to 8.6
  const Coverage hopper = coverage_on(summary, cc("9.0"));
  EXPECT_EQ(hopper.native, 0);
  EXPECT_EQ(hopper.ptx_jit, 1);
  EXPECT_EQ(hopper.none, 3);
}

TEST(Coverage, WorstReachOrdersNoneOverJitOverNative) {
  EXPECT_EQ(worst_reach({.modules = 3, .native = 3}), Reach::native);
  EXPECT_EQ(worst_reach({.modules = 3, .native = 2, .ptx_jit = 1}), Reach::ptx_jit);
  EXPECT_EQ(worst_reach({.modules = 3, .native = 1, .ptx_jit = 1, .none = 1}), Reach::none);
  EXPECT_EQ(worst_reach({}), Reach::native);
}

TEST(Coverage, GroupsWithoutImagesAreNotModules) {
  BinaryKernels binary;
  binary.groups.push_back({{}, 5});
  binary.groups.push_back({{*Arch::parse("sm_80")}, 2});
  const Coverage c = coverage_on(binary, cc("8.0"));
  EXPECT_EQ(c.modules, 2);
  EXPECT_EQ(c.native, 2);
  EXPECT_EQ(kernel_modules(binary), 2);
}

TEST(Coverage, ArchSharesCountModulesOncePerArch) {
  BinaryKernels binary;
  const Arch sm80 = *Arch::parse("sm_80");
  const Arch sm120 = *Arch::parse("sm_120");
  binary.groups.push_back({{sm80, sm120, sm80}, 3});
  binary.groups.push_back({{sm80}, 1});
  const auto shares = arch_shares(binary);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_EQ(shares[0].arch, sm80);
  EXPECT_EQ(shares[0].modules, 4);
  EXPECT_EQ(shares[1].arch, sm120);
  EXPECT_EQ(shares[1].modules, 3);
}

}  // namespace
}  // namespace torchfix
