// Inside vLLM's or SGLang's image (recipes/app-images.toml on the real
// tables): the image is named with what its kernels are for, one that cannot
// run here is a problem whose fix is the tag that does (or the driver its tag
// needs), and pip fixes are marked as lost with the container.

#include "core/diagnosis/app_images.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "../support/repo_knowledge.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return testing::repo_knowledge();
}

// A machine inside vLLM's image (the variable its Dockerfile sets) with vllm
// `vllm` installed, one GPU and a Linux driver.
Snapshot inside(const std::string& vllm, const std::string& gpu, const std::string& cc, const std::string& driver,
                std::string machine = "x86_64") {
  Snapshot s;
  s.platform.machine = std::move(machine);
  s.platform.container = true;
  s.environment["VLLM_USAGE_SOURCE"] = "production-docker-image";
  Gpu g;
  g.name = gpu;
  g.cc = *ComputeCapability::parse(cc);
  s.gpus.push_back(g);
  s.driver.version = *Version::parse(driver);
  s.driver.cuda_version = knowledge().cuda_for_driver(*s.driver.version);
  PythonEnv env;
  env.interpreter = "/opt/venv/bin/python3";
  env.distributions["vllm"] = vllm;
  s.pythons.push_back(env);
  return s;
}

// Adds the notes on `s`, judged on its Situation as the doctor judges it.
void add_notes(Diagnosis& d, const Snapshot& s) {
  add_inside_app_image_notes(d, situate(s, knowledge()), knowledge());
}

// Another finding's fix: a pip install inside the container.
Finding pip_finding() {
  Finding f;
  f.id = "package.arch";
  f.title = "vllm cannot run";
  f.fixes.push_back({"Rebuild vllm", {"pip install vllm"}});
  return f;
}

const Finding* app_finding(const Diagnosis& d) {
  const auto it = std::ranges::find(d.findings, std::string("container.app"), &Finding::id);
  return it == d.findings.end() ? nullptr : &*it;
}

// A machine inside SGLang's image: sglang installed editable from the
// checkout its Dockerfile clones (direct_url.json's url), sgl-kernel beside it.
Snapshot inside_sglang(const std::string& sglang, const std::string& gpu, const std::string& cc,
                       const std::string& driver, std::string machine = "x86_64") {
  Snapshot s = inside("0", gpu, cc, driver, std::move(machine));
  s.environment.clear();
  PythonEnv& env = s.pythons.front();
  env.distributions = {{"sglang", sglang}, {"sgl-kernel", "0.3.16.post5"}};
  env.editable_urls["sglang"] = "file:///sgl-workspace/sglang/python";
  return s;
}

TEST(AppImages, TheTableIsSortedAndEveryRowHasItsSourceArchsAndProject) {
  const AppImageTable& table = knowledge().app_images;
  ASSERT_GE(table.images.size(), 100u);
  for (const std::string_view project : {"vllm", "sglang"}) {
    std::vector<const AppImage*> rows;
    for (const AppImage& i : table.images) {
      if (i.project == project) rows.push_back(&i);
    }
    EXPECT_GE(rows.size(), 3u) << project;
    EXPECT_TRUE(std::ranges::is_sorted(rows, {}, [](const AppImage* i) { return i->order; })) << project;
  }
  for (const AppImage& i : table.images) {
    EXPECT_FALSE(i.source.empty()) << i.image();
    EXPECT_FALSE(i.images.empty()) << i.image();
    EXPECT_NE(std::ranges::find(table.projects, i.project, &AppProject::name), table.projects.end()) << i.image();
  }
}

TEST(AppImages, AProjectNeedsOneMarkerAndAnImageAProjectListedAbove) {
  const std::string project = "[[project]]\nname = \"x\"\ntitle = \"X\"\nrepository = \"r/x\"\nkernels = \"x\"\n";
  const std::string image =
      "[[image]]\nrepository = \"r/x\"\ntag = \"v1\"\nproject = \"x\"\nproject_version = \"1.0\"\n"
      "torch = \"2.8.0\"\ncuda = \"12.9\"\nplatforms = [\"x86_64\"]\narchs = [\"9.0a\"]\nsource = \"s\"\n";
  const auto none = parse_app_image_table(project + "source = \"s\"\n", "t.toml");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("give one marker"), std::string::npos) << none.error().message;
  const auto two = parse_app_image_table(
      project + "marker_editable = \"/w\"\nmarker_variable = \"V\"\nmarker_value = \"1\"\nsource = \"s\"\n", "t.toml");
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("t.toml:"), std::string::npos) << two.error().message;
  const auto orphan = parse_app_image_table(image, "t.toml");
  ASSERT_FALSE(orphan);
  EXPECT_NE(orphan.error().message.find("no [[project]] row"), std::string::npos) << orphan.error().message;
  const auto good = parse_app_image_table(project + "marker_editable = \"/w\"\nsource = \"s\"\n" + image, "t.toml");
  ASSERT_TRUE(good) << good.error().message;
  ASSERT_EQ(good->images.size(), 1u);
  EXPECT_EQ(good->images.front().images.front().name(), "sm_90a");
}

TEST(AppImages, SglangsKernelsMissingTheGpuIsAProblemWithNoTagToPull) {
  // sgl-kernel 0.3.16.post5 and 0.3.18.post2 hold sm_80 and up (their PyPI
  // wheels, read by torchfix inspect): a Tesla T4 (7.5) has no SGLang tag.
  Diagnosis d;
  d.findings.push_back(pip_finding());
  add_notes(d, inside_sglang("0.5.5", "Tesla T4", "7.5", "580.95.05"));
  const Finding* f = app_finding(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::problem) << f->title;
  EXPECT_NE(f->title.find("SGLang's image lmsysorg/sglang:v0.5.5-cu129-amd64 cannot run"), std::string::npos)
      << f->title;
  ASSERT_EQ(f->fixes.size(), 1u) << f->title;
  EXPECT_TRUE(f->fixes.front().commands.empty()) << f->fixes.front().commands.front();
  EXPECT_NE(f->fixes.front().summary.find("None in SGLang's images: no tag in recipes/app-images.toml has "
                                          "sgl-kernel kernels for every GPU here"),
            std::string::npos)
      << f->fixes.front().summary;
  EXPECT_NE(d.findings.front().fixes.front().summary.find("inside SGLang's image"), std::string::npos);
}

TEST(AppImages, WhenOnlyTheDriverStandsInTheWayTheFixIsTheDriverTheTagNeeds) {
  // sgl-kernel has sm_80 for an A100, but an R460 driver (CUDA 11.2) runs no
  // CUDA 12 image, natively or through forward compatibility (from R470).
  Diagnosis d;
  add_notes(d, inside_sglang("0.5.5", "NVIDIA A100-SXM4-80GB", "8.0", "460.106.00"));
  const Finding* f = app_finding(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::problem) << f->title;
  ASSERT_FALSE(f->fixes.empty()) << f->title;
  EXPECT_EQ(f->fixes.front().summary,
            "On the host, upgrade the driver to 575.51.03 (R575) or newer: lmsysorg/sglang:v0.5.5-cu129-amd64 then "
            "runs as it is");
}

TEST(AppImages, SglangOnAnArmHostIsJudgedOnItsArmRowAndAUsersOwnSglangIsNotTheImage) {
  Diagnosis arm;
  add_notes(arm, inside_sglang("0.5.5", "NVIDIA GH200 480GB", "9.0", "580.95.05", "aarch64"));
  const Finding* f = app_finding(arm);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::note) << f->title;
  EXPECT_NE(f->details.front().find("lmsysorg/sglang:v0.5.5-cu129-arm64: torch 2.8.0, CUDA 12.9.1, sgl-kernel "
                                    "0.3.16.post5 kernels for 9.0;9.0a;10.0a;10.1a;12.0a"),
            std::string::npos)
      << f->details.front();
  // sglang installed editable from the user's own checkout is not SGLang's image.
  Snapshot own = inside_sglang("0.5.5", "Tesla T4", "7.5", "580.95.05");
  own.pythons.front().editable_urls["sglang"] = "file:///home/me/sglang/python";
  Diagnosis none;
  add_notes(none, own);
  EXPECT_TRUE(none.findings.empty());
}

TEST(AppImages, AGpuTheImageDroppedIsAProblemAndTheFixIsTheNewestTagThatStillRunsIt) {
  // From v0.20.0 vLLM's x86_64 kernels start at 7.5 (no V100); v0.19.1 still has 7.0
  // (vllm-project/vllm release pipeline at those tags, recipes/app-images.toml).
  Diagnosis d;
  d.findings.push_back(pip_finding());
  add_notes(d, inside("0.20.0", "Tesla V100-SXM2-32GB", "7.0", "580.95.05"));
  const Finding* f = app_finding(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::problem) << f->title;
  ASSERT_EQ(f->fixes.size(), 1u) << f->title;
  EXPECT_EQ(f->fixes.front().commands, std::vector<std::string>{"docker pull vllm/vllm-openai:v0.19.1"});
  EXPECT_NE(d.findings.front().fixes.front().summary.find("lost when the container is recreated"), std::string::npos);
  // The pip install is kept as words, not as a command to run in the container.
  EXPECT_TRUE(d.findings.front().fixes.front().commands.empty());
  EXPECT_EQ(d.findings.front().details.back(), "not run inside vLLM's image: pip install vllm");
}

TEST(AppImages, AnImageThatRunsIsANoteAndOutsideAnImageNothingIsSaid) {
  Diagnosis d;
  add_notes(d, inside("0.11.0", "NVIDIA H200", "9.0", "580.95.05"));
  const Finding* f = app_finding(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::note) << f->title;
  EXPECT_NE(f->details.front().find("vllm/vllm-openai:v0.11.0: torch 2.8.0"), std::string::npos) << f->details.front();
  Snapshot outside = inside("0.11.0", "NVIDIA H200", "9.0", "580.95.05");
  outside.environment.clear();
  Diagnosis none;
  add_notes(none, outside);
  EXPECT_TRUE(none.findings.empty());
}

TEST(AppImages, AnOldDriverNeedsTheTagWhoseCudaItRunsAndArmHostsTheirOwnRows) {
  // v0.20.0's default tag is CUDA 13.0 (the -cu129 variant 12.9): an R570 driver (CUDA 12.8) runs neither natively.
  Diagnosis d;
  add_notes(d, inside("0.20.0", "NVIDIA H100 80GB HBM3", "9.0", "535.230.02"));
  const Finding* f = app_finding(d);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::problem) << f->title;
  ASSERT_FALSE(f->fixes.empty()) << f->title;
  // A data-centre GPU runs CUDA 12.9 on R535 through minor-version compatibility.
  EXPECT_EQ(f->fixes.front().commands, std::vector<std::string>{"docker pull vllm/vllm-openai:v0.20.0-cu129"});
  Diagnosis arm;
  add_notes(arm, inside("0.11.0", "NVIDIA GH200 480GB", "9.0", "580.95.05", "aarch64"));
  ASSERT_NE(app_finding(arm), nullptr);
  EXPECT_NE(app_finding(arm)->details.front().find("v0.11.0-aarch64"), std::string::npos)
      << app_finding(arm)->details.front();
}

}  // namespace
}  // namespace torchfix
