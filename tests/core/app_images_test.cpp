// Inside vLLM's image (recipes/app-images.toml on the real tables): the image
// is named with what its kernels are for, one that cannot run here is a
// problem whose fix is the tag that does, and pip fixes are marked as lost
// with the container.

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

TEST(AppImages, TheTableIsSortedAndEveryRowHasItsSourceAndArchs) {
  const auto& images = knowledge().app_images.images;
  ASSERT_GE(images.size(), 100u);
  for (const AppImage& i : images) {
    EXPECT_FALSE(i.source.empty()) << i.image();
    EXPECT_FALSE(i.images.empty()) << i.image();
  }
  EXPECT_TRUE(std::ranges::is_sorted(images, {}, &AppImage::order));
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
