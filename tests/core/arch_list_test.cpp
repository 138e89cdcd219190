#include "core/arch/arch_list.hpp"

#include <gtest/gtest.h>

namespace torchfix {
namespace {

ArchList parse(std::string_view text) {
  auto list = parse_arch_list(text);
  EXPECT_TRUE(list) << text << ": " << (list ? "" : list.error().message);
  return list ? *list : ArchList{};
}

std::string torch(std::string_view text) {
  return render(parse(text), ArchFormat::torch);
}

std::string error_of(std::string_view text) {
  auto list = parse_arch_list(text);
  EXPECT_FALSE(list) << text << " parsed as " << (list ? render(*list, ArchFormat::torch) : "");
  return list ? std::string{} : list.error().message;
}

std::vector<std::string> names(const std::vector<Arch>& archs) {
  std::vector<std::string> out;
  for (const Arch& a : archs) out.push_back(a.name());
  return out;
}

TEST(ArchList, SeparatorsAreSemicolonOrWhitespace) {
  EXPECT_EQ(torch("8.6;12.0+PTX"), "8.6;12.0+PTX");
  EXPECT_EQ(torch("8.6 12.0+PTX"), "8.6;12.0+PTX");
  EXPECT_EQ(torch("  8.6 ;\t 12.0+PTX ; "), "8.6;12.0+PTX");
}

TEST(ArchList, NormalisesOrderAndDuplicatesKeepingPtx) {
  EXPECT_EQ(torch("12.0;8.6;8.6;9.0"), "8.6;9.0;12.0");
  EXPECT_EQ(torch("9.0;9.0+PTX;8.0"), "8.0;9.0+PTX");
  EXPECT_EQ(torch("10.0 7.5 10.0a"), "7.5;10.0;10.0a");
}

TEST(ArchList, VariantsAndVirtualArchs) {
  EXPECT_EQ(torch("9.0a"), "9.0a");
  EXPECT_EQ(torch("10.0f;12.0a+PTX"), "10.0f;12.0a+PTX");
  EXPECT_EQ(torch("5.2(5.0)"), "5.2(5.0)");
  EXPECT_EQ(torch("8.6(8.6)"), "8.6");  // a virtual arch equal to the real one says nothing
  ArchList list = parse("5.2(5.0)+PTX");
  ASSERT_EQ(list.targets.size(), 1u);
  EXPECT_EQ(list.targets[0].cc, (ComputeCapability{5, 2}));
  EXPECT_EQ(list.targets[0].virtual_cc, (ComputeCapability{5, 0}));
  EXPECT_TRUE(list.targets[0].ptx);
  EXPECT_EQ(render(list, ArchFormat::gencode),
            "-gencode arch=compute_50,code=sm_52 -gencode arch=compute_50,code=compute_50");
  EXPECT_EQ(render(list, ArchFormat::cmake), "52-real;50-virtual");
}

TEST(ArchList, NamesExpandLikeSelectComputeArch) {
  EXPECT_EQ(torch("Ampere"), "8.0;8.6");
  EXPECT_EQ(torch("Ampere+PTX"), "8.0+PTX;8.6+PTX");
  EXPECT_EQ(torch("Maxwell+PTX"), "5.0;5.2+PTX");  // arch_ptx is 5.2 only
  EXPECT_EQ(torch("Pascal"), "6.0;6.1");
  EXPECT_EQ(torch("Volta"), "7.0");
  EXPECT_EQ(torch("Turing Ada Hopper"), "7.5;8.9;9.0");
  EXPECT_EQ(torch("Blackwell"), "10.0;12.0");
  EXPECT_EQ(torch("Maxwell+Tegra"), "5.3");
  EXPECT_EQ(torch("Ampere+Tegra+PTX"), "8.7+PTX");
  EXPECT_EQ(torch("Blackwell+Tegra"), "10.1");
  EXPECT_EQ(torch("Kepler+Tesla"), "3.7");
  EXPECT_EQ(torch("hopper"), "9.0");  // names are matched without case
  EXPECT_EQ(torch("Ampere;8.6;Hopper+PTX"), "8.0;8.6;9.0+PTX");
}

TEST(ArchList, RefusesAutoAllCommonAndSaysWhatToUse) {
  for (const char* special : {"Auto", "All", "Common", "common", "8.6;All", "Auto+PTX"}) {
    std::string message = error_of(special);
    EXPECT_NE(message.find("refused"), std::string::npos) << message;
    EXPECT_NE(message.find("--arch auto"), std::string::npos) << message;
  }
  EXPECT_NE(error_of("All").find("8.6;9.0+PTX"), std::string::npos);
}

TEST(ArchList, RejectsMalformedEntriesNamingThem) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c :
       {Case{"", "empty"}, Case{" ; ", "empty"}, Case{"8.6,9.0", "not commas"}, Case{"sm_86", "write 8.6"},
        Case{"compute_90a", "write 9.0"}, Case{"8.0a", "from 9.0"}, Case{"9.0f", "from 10.0"},
        Case{"1.20", "one digit"}, Case{"8.6(9.0)", "not above"}, Case{"9.0(8.6)", "same major"},
        Case{"9.0a(9.0)", "cannot name"}, Case{"8.6(x)", "virtual arch"}, Case{"Fermi", "not a known"},
        Case{"86", "8.6"}, Case{"8.6+PTX+PTX", "8.6+PTX+PTX"}, Case{"8.", "8."}, Case{"0.0", "0.0"}}) {
    std::string message = error_of(c.text);
    EXPECT_NE(message.find(c.says), std::string::npos) << c.text << ": " << message;
  }
  EXPECT_NE(error_of("8.6;Fermi").find("'Fermi'"), std::string::npos);
}

TEST(ArchList, RendersEverySpelling) {
  ArchList list = parse("8.6;12.0+PTX");
  EXPECT_EQ(render(list, ArchFormat::torch), "8.6;12.0+PTX");
  EXPECT_EQ(render(list, ArchFormat::cmake), "86-real;120");
  EXPECT_EQ(render(list, ArchFormat::gencode),
            "-gencode arch=compute_86,code=sm_86 -gencode arch=compute_120,code=sm_120 "
            "-gencode arch=compute_120,code=compute_120");
  EXPECT_EQ(render(list, ArchFormat::flash_attn), "86;120");
  ArchList specific = parse("9.0a+PTX;10.0f");
  EXPECT_EQ(render(specific, ArchFormat::cmake), "90a;100f-real");
  EXPECT_EQ(render(specific, ArchFormat::gencode),
            "-gencode arch=compute_90a,code=sm_90a -gencode arch=compute_100f,code=sm_100f "
            "-gencode arch=compute_90a,code=compute_90a");
  EXPECT_EQ(render(parse("9.0;9.0a;10.0f"), ArchFormat::flash_attn), "90;100");
  EXPECT_EQ(gencode_args(list).size(), 6u);
  EXPECT_EQ(gencode_args(list)[0], "-gencode");
  EXPECT_EQ(gencode_args(list)[1], "arch=compute_86,code=sm_86");
}

TEST(ArchList, RoundTripsThroughTorchSpelling) {
  for (const char* text : {"8.6;12.0+PTX", "5.2(5.0)+PTX;9.0a", "7.5;8.0;8.6;8.9;9.0;10.0;12.0+PTX", "10.0f"}) {
    ArchList list = parse(text);
    EXPECT_EQ(parse(render(list, ArchFormat::torch)), list) << text;
  }
}

TEST(ArchList, ImagesListSassAndPtx) {
  EXPECT_EQ(names(images(parse("8.6;12.0+PTX"))), (std::vector<std::string>{"sm_86", "sm_120", "compute_120"}));
  EXPECT_EQ(names(images(parse("9.0a+PTX"))), (std::vector<std::string>{"sm_90a", "compute_90a"}));
  EXPECT_EQ(names(images(parse("8.6(8.0)+PTX"))), (std::vector<std::string>{"sm_86", "compute_80"}));
  // Images are what Arch reach rules reason about: 12.0+PTX JITs onto 12.1? no, same major SASS runs.
  EXPECT_EQ(best_reach(images(parse("8.6;12.0+PTX")), ComputeCapability{12, 1}), Reach::native);
  EXPECT_EQ(best_reach(images(parse("8.6;9.0+PTX")), ComputeCapability{10, 0}), Reach::ptx_jit);
  EXPECT_EQ(best_reach(images(parse("8.6;9.0")), ComputeCapability{10, 0}), Reach::none);
}

TEST(ArchList, FromGpusDeduplicatesAndPlacesPtx) {
  std::vector<ComputeCapability> gpus = {{12, 0}, {8, 6}, {8, 6}, {9, 0}};
  EXPECT_EQ(render(arch_list_for_gpus(gpus, PtxPolicy::newest), ArchFormat::torch), "8.6;9.0;12.0+PTX");
  EXPECT_EQ(render(arch_list_for_gpus(gpus, PtxPolicy::none), ArchFormat::torch), "8.6;9.0;12.0");
  EXPECT_EQ(render(arch_list_for_gpus(gpus, PtxPolicy::all), ArchFormat::torch), "8.6+PTX;9.0+PTX;12.0+PTX");
  EXPECT_TRUE(arch_list_for_gpus({}, PtxPolicy::newest).empty());
  EXPECT_EQ(newest(arch_list_for_gpus(gpus, PtxPolicy::none)), (ComputeCapability{12, 0}));
  EXPECT_FALSE(newest(ArchList{}));
}

TEST(ArchList, PtxPolicyNames) {
  EXPECT_EQ(parse_ptx_policy("none").value(), PtxPolicy::none);
  EXPECT_EQ(to_string(PtxPolicy::all), "all");
  EXPECT_FALSE(parse_ptx_policy("some"));
}

}  // namespace
}  // namespace torchfix
