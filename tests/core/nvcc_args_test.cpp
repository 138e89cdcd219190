// The nvcc arch-flag rewrite: every spelling a project or a front end
// writes, replaced by the plan's targets, and everything else kept in place.
#include <gtest/gtest.h>

#include "core/arch/arch_list.hpp"
#include "core/arch/nvcc_args.hpp"

namespace torchfix {
namespace {

using Args = std::vector<std::string>;

const Args k_targets = {"-gencode", "arch=compute_86,code=sm_86", "-gencode", "arch=compute_86,code=compute_86"};

TEST(NvccArgs, SeparateGencodesAreReplacedWhereTheFirstStood) {
  const Args in = {"-I/x",
                   "-c",
                   "a.cu",
                   "-gencode",
                   "arch=compute_75,code=sm_75",
                   "-O3",
                   "-gencode",
                   "arch=compute_90,code=[sm_90,compute_90]",
                   "-o",
                   "a.o"};
  const NvccRewrite r = rewrite_arch_flags(in, k_targets);
  EXPECT_EQ(r.args, (Args{"-I/x", "-c", "a.cu", "-gencode", "arch=compute_86,code=sm_86", "-gencode",
                          "arch=compute_86,code=compute_86", "-O3", "-o", "a.o"}));
  EXPECT_EQ(r.removed,
            (Args{"-gencode arch=compute_75,code=sm_75", "-gencode arch=compute_90,code=[sm_90,compute_90]"}));
  EXPECT_EQ(r.asked, (Args{"compute_75", "sm_75", "compute_90", "sm_90"}));
  EXPECT_TRUE(r.changed());
}

TEST(NvccArgs, EverySpellingIsAnArchFlag) {
  const Args in = {"-gencode=arch=compute_80,code=sm_80",
                   "--generate-code=arch=compute_100,code=[compute_100,sm_100]",
                   "--generate-code",
                   "arch=compute_121,code=sm_121",
                   "-arch=sm_70",
                   "-arch",
                   "sm_61",
                   "-code=sm_61,compute_61",
                   "-code",
                   "sm_52",
                   "--gpu-architecture=compute_87",
                   "--gpu-architecture",
                   "sm_72",
                   "--gpu-code=sm_72",
                   "--gpu-code",
                   "sm_53",
                   "-c",
                   "k.cu"};
  const NvccRewrite r = rewrite_arch_flags(in, k_targets);
  Args want = k_targets;
  want.insert(want.end(), {"-c", "k.cu"});
  EXPECT_EQ(r.args, want);
  EXPECT_EQ(r.removed.size(), 11u);
  EXPECT_EQ(summarise_images(r.asked), "sm_52, sm_53, ..., sm_121");
}

TEST(NvccArgs, LookalikesAndQueriesStayAsWritten) {
  // -Xcompiler -march, --list-gpu-arch, -arch-ls, a version query: no arch flag.
  const Args in = {"-Xcompiler", "-march=native", "--list-gpu-arch", "-arch-ls", "--version", "-codegen"};
  const NvccRewrite r = rewrite_arch_flags(in, k_targets);
  EXPECT_EQ(r.args, in);
  EXPECT_FALSE(r.changed());
  // A flag with its value missing is nvcc's error to report, not ours to hide.
  EXPECT_EQ(rewrite_arch_flags({"-c", "a.cu", "-arch"}, k_targets).args, (Args{"-c", "a.cu", "-arch"}));
}

TEST(NvccArgs, SingleImageOutputsKeepTheirArch) {
  const Args in = {"-ptx", "-arch=sm_80", "k.cu"};
  EXPECT_EQ(rewrite_arch_flags(in, k_targets).args, in);
  EXPECT_EQ(rewrite_arch_flags({"--cubin", "-arch", "sm_80", "k.cu"}, k_targets).args.size(), 4u);
}

TEST(NvccArgs, EnvironmentFlagsLoseOnlyTheirArchFlags) {
  const NvccRewrite r = strip_arch_flags("  -lineinfo -gencode arch=compute_87,code=sm_87\t--use_fast_math ");
  EXPECT_EQ(r.args, (Args{"-lineinfo", "--use_fast_math"}));
  EXPECT_EQ(r.asked, (Args{"compute_87", "sm_87"}));
  EXPECT_FALSE(strip_arch_flags("").changed());
}

TEST(NvccArgs, TargetsFromAnArchListRoundTrip) {
  // What the wrapper inserts is what gencode_args renders for the plan.
  const ArchList list = parse_arch_list("8.6;9.0+PTX").value();
  const NvccRewrite r = rewrite_arch_flags({"-arch=sm_75", "-c", "x.cu"}, gencode_args(list));
  EXPECT_EQ(r.args, (Args{"-gencode", "arch=compute_86,code=sm_86", "-gencode", "arch=compute_90,code=sm_90",
                          "-gencode", "arch=compute_90,code=compute_90", "-c", "x.cu"}));
  EXPECT_EQ(images_named("-arch=native all-major sm_90a compute_100f"),
            (Args{"all-major", "native", "sm_90a", "compute_100f"}));
}

}  // namespace
}  // namespace torchfix
