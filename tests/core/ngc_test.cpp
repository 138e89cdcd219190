// The NGC container table against its facts file, and the container choice
// (core/ngc) on field situations: the articles' 23.05 on an RTX 5070 Ti, a
// GeForce on an old driver, data-centre GPUs through compatibility, Jetson.

#include "core/situation/ngc.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "../support/repo_knowledge.hpp"

namespace torchfix {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const Knowledge& knowledge() {
  return testing::repo_knowledge();
}

const NgcTable& table() {
  static const NgcTable t = [] {
    const std::string file = std::string(TORCHFIX_SOURCE_DIR) + "/recipes/ngc-pytorch.toml";
    auto parsed = parse_ngc_table(read_text(file), file);
    if (!parsed) throw std::runtime_error(parsed.error().message);
    return *parsed;
  }();
  return t;
}

Snapshot machine(std::vector<std::pair<std::string, std::string>> gpus, std::string driver,
                 std::string arch = "x86_64") {
  Snapshot s;
  s.platform.machine = arch;
  for (const auto& [name, cc] : gpus) {
    Gpu g;
    g.index = static_cast<int>(s.gpus.size());
    g.name = name;
    g.cc = *ComputeCapability::parse(cc);
    s.gpus.push_back(g);
  }
  auto v = *Version::parse(driver);
  if (v.major() >= 100) {
    s.driver.version = v;
    s.driver.cuda_version = knowledge().cuda_for_driver(v);
  } else {
    s.driver.cuda_version = v;
  }
  return s;
}

TEST(NgcTable, EveryFactsRowIsInTheTableWithTheSameTorchAndCuda) {
  const std::string facts = read_text(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/facts/ngc-containers-1a.md");
  static const std::regex row(R"(^\| (\d\d\.\d\d) \| ([^|]+?) \| ([^|]*?) \|)");
  int rows = 0;
  std::istringstream lines(facts);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, row)) continue;
    ++rows;
    const std::string tag = m[1];
    SCOPED_TRACE(line);
    const NgcRelease* release = table().release(tag);
    ASSERT_NE(release, nullptr) << tag << " is in the facts file but not in recipes/ngc-pytorch.toml";
    // "2.6.0a0+ecf3bae40a (nv25.1)": the table holds the part before " (".
    std::string torch = m[2];
    torch = torch.substr(0, torch.find(" ("));
    EXPECT_EQ(release->torch, torch);
    const auto cuda = Version::parse(m[3].str());
    ASSERT_TRUE(cuda) << "facts CUDA column";
    EXPECT_EQ(release->cuda.major_minor(), cuda->major_minor());
    const bool doubtful_fact =
        m[3].str().find("[recall]") != std::string::npos || m[3].str().find("[inferred]") != std::string::npos;
    if (doubtful_fact) {
      EXPECT_TRUE(release->doubtful) << tag << " is marked [recall]/[inferred] in the facts";
    }
    EXPECT_FALSE(release->source.empty());
  }
  EXPECT_EQ(rows, static_cast<int>(table().releases.size())) << "rows in the facts file vs the table";
  EXPECT_GE(rows, 25);
}

TEST(NgcTable, TagsAreSortedAndEveryPublishedPlatformHasAnArchList) {
  for (std::size_t i = 1; i < table().releases.size(); ++i)
    EXPECT_LT(table().releases[i - 1].tag_version, table().releases[i].tag_version);
  for (const NgcRelease& r : table().releases) {
    for (const std::string& p : r.platforms) EXPECT_NE(table().arch_list(r, p), nullptr) << r.tag << " " << p;
    // Every CUDA version must give a derivable minimum driver, or the row is
    // beyond recipes/toolkits.toml and the choice says "a driver for CUDA X".
    if (r.cuda < Version({13, 3})) {
      EXPECT_NE(knowledge().driver_floor(r.cuda), nullptr) << r.tag;
    }
  }
}

TEST(NgcTable, RejectsRowsWithoutSourceOrDoubtOrWithUnknownPlatforms) {
  const std::string ok_list =
      "[[arch_list]]\nfirst = \"25.01\"\nlast = \"25.01\"\nplatforms = [\"x86_64\"]\narch_list = \"9.0\"\n"
      "source = \"s\"\n";
  const std::string release = "[[release]]\ntag = \"25.01\"\ntorch = \"2.6\"\ncuda = \"12.8\"\n";
  auto no_source = parse_ngc_table(release + "platforms = [\"x86_64\"]\n" + ok_list, "t.toml");
  ASSERT_FALSE(no_source);
  EXPECT_NE(no_source.error().message.find("t.toml:1"), std::string::npos) << no_source.error().message;
  EXPECT_NE(no_source.error().message.find("source"), std::string::npos);
  auto no_doubt =
      parse_ngc_table(release + "platforms = [\"x86_64\"]\ndoubtful = true\nsource = \"s\"\n" + ok_list, "t");
  ASSERT_FALSE(no_doubt);
  EXPECT_NE(no_doubt.error().message.find("doubt"), std::string::npos);
  auto platform = parse_ngc_table(release + "platforms = [\"ppc64le\"]\nsource = \"s\"\n" + ok_list, "t");
  ASSERT_FALSE(platform);
  EXPECT_NE(platform.error().message.find("ppc64le"), std::string::npos);
  auto no_list = parse_ngc_table(release + "platforms = [\"arm64-sbsa\"]\nsource = \"s\"\n" + ok_list, "t");
  ASSERT_FALSE(no_list);
  EXPECT_NE(no_list.error().message.find("arch_list"), std::string::npos);
  EXPECT_TRUE(parse_ngc_table(release + "platforms = [\"x86_64\"]\nsource = \"s\"\n" + ok_list, "t"));
}

TEST(NgcImage, ParsesTheFormsUsersType) {
  EXPECT_EQ(parse_ngc_image("nvcr.io/nvidia/pytorch:23.05-py3")->tag, "23.05");
  EXPECT_EQ(parse_ngc_image("pytorch:24.05-py3-igpu")->platform, "igpu");
  EXPECT_EQ(parse_ngc_image("25.01")->tag, "25.01");
  auto bad = parse_ngc_image("pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("nvcr.io/nvidia/pytorch:YY.MM-py3"), std::string::npos);
}

TEST(NgcChoice, The2305ImageOfTheArticlesCannotRunAn5070Ti) {
  const Snapshot s = machine({{"NVIDIA GeForce RTX 5070 Ti", "12.0"}}, "575.51.03");
  const NgcVerdict v = judge_ngc_image(situate(s, knowledge()), knowledge(), table(), *table().release("23.05"));
  EXPECT_FALSE(v.runs);
  ASSERT_EQ(v.gpus.size(), 1u);
  EXPECT_FALSE(v.gpus[0].covered);
  EXPECT_NE(v.gpus[0].why.find("predates compute capability 12.0"), std::string::npos) << v.gpus[0].why;
}

TEST(NgcChoice, An5070TiOnR575GetsABlackwellImageWithTheRecommendedRunLine) {
  const Snapshot s = machine({{"RTX 5070 Ti", "12.0"}}, "575.51.03");
  const NgcAdvice a = choose_ngc_image(situate(s, knowledge()), knowledge(), table());
  ASSERT_TRUE(a.image);
  EXPECT_GE(a.image->release->tag_version, *Version::parse("25.01"));
  EXPECT_EQ(a.image->release->tag, "25.06");  // newest with CUDA <= 12.9: GeForce has no forward compat
  EXPECT_EQ(a.image->run_line,
            "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it --rm "
            "nvcr.io/nvidia/pytorch:25.06-py3");
  ASSERT_TRUE(a.with_driver);  // newer images need a newer driver
  EXPECT_EQ(a.with_driver->release->tag, table().releases.back().tag);
  // 26.09's CUDA 13.4 is beyond recipes/toolkits.toml: no invented floor.
  EXPECT_FALSE(a.with_driver->driver_needed);
  const NgcVerdict v2603 = judge_ngc_image(situate(s, knowledge()), knowledge(), table(), *table().release("26.03"));
  ASSERT_TRUE(v2603.driver_needed);
  EXPECT_EQ(v2603.driver_needed->str(), "595.45.04");
}

TEST(NgcChoice, An5070TiOnR560GetsTheDriverFixNotAnImage) {
  const Snapshot s = machine({{"RTX 5070 Ti", "12.0"}}, "560.35.03");
  const NgcAdvice a = choose_ngc_image(situate(s, knowledge()), knowledge(), table());
  EXPECT_FALSE(a.image);
  ASSERT_TRUE(a.oldest);
  EXPECT_EQ(a.oldest->release->tag, "25.01");
  ASSERT_TRUE(a.oldest->driver_needed);
  EXPECT_EQ(a.oldest->driver_needed->major(), 570);
  EXPECT_EQ(a.oldest->gpus[0].driver, DriverPath::too_old);
  EXPECT_NE(a.oldest->gpus[0].why.find("data-centre GPUs and Jetson only"), std::string::npos);
}

TEST(NgcChoice, DataCentreGpusRunNewerImagesThroughCompatibility) {
  const Snapshot h200 = machine({{"NVIDIA H200", "9.0"}}, "580.159.04");
  const NgcAdvice a = choose_ngc_image(situate(h200, knowledge()), knowledge(), table());
  ASSERT_TRUE(a.image);
  EXPECT_EQ(a.image->release->tag, table().releases.back().tag);
  EXPECT_EQ(a.image->gpus[0].driver, DriverPath::minor_compat);
  // A GeForce of the same driver runs them too: minor-version compatibility
  // holds on any GPU (the Situation's cuda_on_driver, the torch check's rule;
  // the NGC entrypoint falls back to it where forward compatibility fails
  // with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE).
  const Snapshot rtx4090 = machine({{"NVIDIA GeForce RTX 4090", "8.9"}}, "580.159.04");
  const NgcAdvice g = choose_ngc_image(situate(rtx4090, knowledge()), knowledge(), table());
  ASSERT_TRUE(g.image);
  EXPECT_EQ(g.image->release->tag, table().releases.back().tag);
  EXPECT_EQ(g.image->gpus[0].driver, DriverPath::minor_compat);
  // Across the major only the forward-compatibility package helps, and
  // GeForce cards have none: R470 (CUDA 11.4) runs no CUDA 12 image there.
  const Snapshot old_geforce = machine({{"NVIDIA GeForce RTX 3090", "8.6"}}, "470.256.02");
  EXPECT_FALSE(choose_ngc_image(situate(old_geforce, knowledge()), knowledge(), table()).image);
  // R535 runs CUDA 12 images on an A100 (forward compat branch list), but
  // no CUDA 13 image.
  const Snapshot a100 = machine({{"NVIDIA A100-SXM4-80GB", "8.0"}}, "535.104.05");
  const NgcAdvice d = choose_ngc_image(situate(a100, knowledge()), knowledge(), table());
  ASSERT_TRUE(d.image);
  EXPECT_EQ(d.image->release->cuda.major(), 12);
  EXPECT_EQ(d.image->release->tag, "25.06");
}

TEST(NgcChoice, NoCompatibilityPackageMakesAnOldDriverKnowBlackwell) {
  const Snapshot b200 = machine({{"NVIDIA B200", "10.0"}}, "535.104.05");
  const NgcAdvice a = choose_ngc_image(situate(b200, knowledge()), knowledge(), table());
  EXPECT_FALSE(a.image);
  ASSERT_TRUE(a.oldest);
  EXPECT_EQ(a.oldest->driver_needed->major(), 570);
}

TEST(NgcChoice, EveryGpuMustBeCoveredAndTegraUsesTheRuntimeFlag) {
  // Volta left the images with CUDA 13 (25.08); a mixed V100 + H100 box stays on 25.06.
  const Snapshot mixed = machine({{"Tesla V100-SXM2-32GB", "7.0"}, {"NVIDIA H100", "9.0"}}, "580.65.06");
  const NgcAdvice a = choose_ngc_image(situate(mixed, knowledge()), knowledge(), table());
  ASSERT_TRUE(a.image);
  EXPECT_EQ(a.image->release->tag, "25.06");
  const Snapshot orin = machine({{"Orin", "8.7"}}, "12.6", "aarch64");
  const NgcAdvice o = choose_ngc_image(situate(orin, knowledge()), knowledge(), table());
  ASSERT_TRUE(o.image);
  EXPECT_EQ(o.image->platform, "igpu");
  EXPECT_NE(o.image->image.find("-py3-igpu"), std::string::npos);
  EXPECT_TRUE(o.image->run_line.starts_with("docker run --runtime nvidia "));
  const Snapshot thor = machine({{"NVIDIA Thor", "11.0"}}, "580.65.06", "aarch64");
  const NgcAdvice t = choose_ngc_image(situate(thor, knowledge()), knowledge(), table());
  ASSERT_TRUE(t.image);
  EXPECT_EQ(t.image->platform, "arm64-sbsa");
  EXPECT_GE(t.image->release->tag_version, *Version::parse("25.08"));
}

TEST(NgcChoice, ForwardCompatibilityIsForDataCentreAndJetsonOnly) {
  auto gpu = [](std::string name, std::string cc) {
    Gpu g;
    g.name = std::move(name);
    g.cc = *ComputeCapability::parse(cc);
    return g;
  };
  EXPECT_FALSE(forward_compat_allowed(gpu("NVIDIA GeForce RTX 5090", "12.0")));
  EXPECT_FALSE(forward_compat_allowed(gpu("RTX 5070 Ti", "12.0")));
  EXPECT_FALSE(forward_compat_allowed(gpu("NVIDIA RTX A6000", "8.6")));
  EXPECT_FALSE(forward_compat_allowed(gpu("NVIDIA TITAN V", "7.0")));
  EXPECT_FALSE(forward_compat_allowed(gpu("", "9.0")));
  EXPECT_TRUE(forward_compat_allowed(gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0")));
  EXPECT_TRUE(forward_compat_allowed(gpu("NVIDIA H200", "9.0")));
  EXPECT_TRUE(forward_compat_allowed(gpu("Tesla T4", "7.5")));
  EXPECT_TRUE(forward_compat_allowed(gpu("", "8.7")));  // Jetson Orin
}

}  // namespace
}  // namespace torchfix
