// The resolver's NGC container candidate (core/resolver/resolver_container.cpp) on the
// real knowledge tables (recipes/, recipes/ngc-pytorch.toml): issue 11's
// done-means cases (an RTX 5070 Ti on R575 and on R560, the articles' 23.05
// image), its rank against the wheel fix, and that applying it diagnoses clean.

#include <gtest/gtest.h>

#include <algorithm>

#include "../support/repo_knowledge.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/diagnosis/ngc_findings.hpp"
#include "core/resolver/resolver.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return testing::repo_knowledge();
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Snapshot what_if(std::vector<std::string> gpus, std::string driver, std::optional<std::string> torch = {},
                 std::optional<std::string> machine = {}) {
  Snapshot s;
  WhatIf w;
  w.gpus = std::move(gpus);
  w.driver = std::move(driver);
  w.torch = std::move(torch);
  w.machine = std::move(machine);
  auto applied = apply_what_if(s, w, knowledge());
  if (!applied) throw std::runtime_error(applied.error().message);
  return s;
}

// The index of the first winner of `kind` in the doctor's checked winners, or -1.
int index_of(const RemedyReport& r, CandidateKind kind) {
  for (std::size_t i = 0; i < r.resolution.winners.size(); ++i) {
    if (r.resolution.winners[i].kind == kind) return static_cast<int>(i);
  }
  return -1;
}

const RemedyReport& torch_report(const Diagnosis& d) {
  for (const RemedyReport& r : d.remedies) {
    if (r.python) return r;
  }
  throw std::runtime_error("no remedy for a Python environment");
}

TEST(ResolverContainer, An5070TiOnR575GetsABlackwellImageBesideTheWheelFix) {
  const Snapshot s = what_if({"RTX 5070 Ti"}, "575.51.03", "2.6.0+cu124");
  const Diagnosis d = diagnose(s, knowledge());
  EXPECT_EQ(d.exit_code(), 1);
  const RemedyReport& r = torch_report(d);
  const int wheel = index_of(r, CandidateKind::wheel);
  const int image = index_of(r, CandidateKind::container);
  ASSERT_EQ(wheel, 0) << "the wheel fix changes less and comes first";
  ASSERT_GT(image, wheel);
  const Remedy& container = r.resolution.winners[static_cast<std::size_t>(image)];
  ASSERT_TRUE(container.container);
  const ContainerChange& c = *container.container;
  EXPECT_GE(c.release->tag_version, *Version::parse("25.01"));  // Blackwell images start at 25.01
  // The newest image whose CUDA R575 runs: GeForce gets no forward compatibility.
  EXPECT_EQ(c.release->tag, "25.06");
  EXPECT_EQ(c.run_line,
            "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it --rm "
            "nvcr.io/nvidia/pytorch:25.06-py3");
  ASSERT_TRUE(c.driver_needed);
  EXPECT_LE(*c.driver_needed, *Version::parse("575.51.03"));
  EXPECT_FALSE(c.compat);
  // The fix the user reads carries the run line and the host driver.
  const Fix& fix = r.fixes[static_cast<std::size_t>(image)];
  EXPECT_TRUE(has(fix.summary, "needs host driver " + c.driver_needed->str())) << fix.summary;
  ASSERT_EQ(fix.commands.size(), 1u);
  EXPECT_EQ(fix.commands.front(), c.run_line);
  // Applied (torch replaced by the image's torch and CUDA), it diagnoses clean.
  const Snapshot applied = apply_remedy(s, r.python, container, knowledge());
  EXPECT_EQ(applied.pythons[*r.python].torch->version, c.release->torch);
  EXPECT_EQ(applied.pythons[*r.python].torch->cuda, "12.9");
  EXPECT_EQ(diagnose(applied, knowledge()).exit_code(), 0);
}

TEST(ResolverContainer, An5070TiOnR560GetsTheR570DriverFixAndNoImage) {
  const Snapshot s = what_if({"RTX 5070 Ti"}, "560.35.03", "2.6.0+cu124");
  const Diagnosis d = diagnose(s, knowledge());
  EXPECT_EQ(d.exit_code(), 1);
  const RemedyReport& r = torch_report(d);
  EXPECT_EQ(index_of(r, CandidateKind::container), -1);
  for (const Finding& f : d.findings) {
    for (const Fix& fix : f.fixes) {
      for (const std::string& line : fix.commands) EXPECT_FALSE(has(line, "docker run")) << line;
    }
  }
  // The first fix is the driver, and it says Blackwell needs R570 or newer.
  ASSERT_FALSE(r.resolution.winners.empty());
  ASSERT_TRUE(r.resolution.winners.front().driver);
  EXPECT_GE(r.resolution.winners.front().driver->minimum.major(), 570);
  EXPECT_TRUE(has(r.fixes.front().summary, "No software-only fix")) << r.fixes.front().summary;
  EXPECT_TRUE(has(r.fixes.front().summary, "needs a driver >= 570.26")) << r.fixes.front().summary;
  // Among the alternatives, the smallest driver jump: R570 with a cu128
  // wheel (the same-index rows skipped on the way do not use up the tries).
  const bool r570 = std::ranges::any_of(r.resolution.winners, [](const Remedy& w) {
    return w.driver && w.driver->minimum.major() == 570 && w.wheel && w.wheel->wheel->variant == "cu128";
  });
  EXPECT_TRUE(r570) << r.fixes.back().summary;
  // The container lost, saying which image would run and the driver it needs.
  const auto lost = std::ranges::find_if(r.resolution.rejected,
                                         [](const Rejected& x) { return x.candidate == "an NGC PyTorch container"; });
  ASSERT_NE(lost, r.resolution.rejected.end());
  ASSERT_FALSE(lost->reasons.empty());
  EXPECT_TRUE(has(lost->reasons.front(), "nvcr.io/nvidia/pytorch:25.01-py3")) << lost->reasons.front();
  EXPECT_TRUE(has(lost->reasons.front(), "(R570) or newer")) << lost->reasons.front();
  EXPECT_TRUE(has(lost->reasons.front(), "no forward compatibility")) << lost->reasons.front();
}

TEST(ResolverContainer, The2305ImageOfTheArticlesAnswersNoForA120Gpu) {
  const Snapshot s = what_if({"RTX 5070 Ti"}, "575.51.03");
  auto f = container_finding(situate(s, knowledge()), knowledge(), knowledge().ngc,
                             *parse_ngc_image("nvcr.io/nvidia/pytorch:23.05-py3"));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->severity, Severity::problem);
  EXPECT_TRUE(has(f->title, "will not run here")) << f->title;
  bool predates = false;
  for (const std::string& line : f->details) predates = predates || has(line, "predates compute capability 12.0");
  EXPECT_TRUE(predates);
  // It names the image the resolver would offer.
  ASSERT_FALSE(f->fixes.empty());
  EXPECT_TRUE(has(f->fixes.front().commands.front(), "nvcr.io/nvidia/pytorch:25.06-py3"))
      << f->fixes.front().commands.front();
}

// Constraints as a value: a data-centre GPU on an older branch runs a newer
// image through forward compatibility; a GeForce of the same capability on
// the same driver gets an image its driver supports natively.
TEST(ResolverContainer, ForwardCompatibilityOnlyForDataCentreGpus) {
  Constraints c;
  c.gpus = {{9, 0}};
  c.drivers = {{Version::parse("535.104.05"), Version({12, 2})}};
  c.torch = InstalledTorch{Version({2, 11, 0}), "cpu", std::nullopt, {}};
  c.forward_compat = true;
  auto container = [](const Resolution& r) {
    const auto it = std::ranges::find_if(r.winners, [](const Remedy& w) { return w.container.has_value(); });
    return it == r.winners.end() ? std::optional<ContainerChange>() : it->container;
  };
  const auto datacentre = container(resolve(c, knowledge()));
  ASSERT_TRUE(datacentre);
  EXPECT_TRUE(datacentre->compat);
  EXPECT_GT(datacentre->release->cuda, Version({12, 2}));
  // A GeForce runs CUDA 12 images on R535 too, through minor-version
  // compatibility (any GPU); across the major (R470, CUDA 11.4) only the
  // data-centre GPU's forward compatibility does (an A100: R470 cannot
  // drive Hopper at all).
  c.forward_compat = false;
  const auto geforce = container(resolve(c, knowledge()));
  ASSERT_TRUE(geforce);
  EXPECT_TRUE(geforce->compat);
  EXPECT_EQ(geforce->release->cuda.major(), 12);
  c.gpus = {{8, 0}};
  c.drivers = {{Version::parse("470.256.02"), Version({11, 4})}};
  EXPECT_FALSE(container(resolve(c, knowledge())));
  c.forward_compat = true;
  const auto forward = container(resolve(c, knowledge()));
  ASSERT_TRUE(forward);
  EXPECT_TRUE(forward->compat);
  EXPECT_EQ(forward->release->cuda.major(), 12);
}

// Where no wheel runs (no official aarch64 wheel has sm_87), the Jetson
// -igpu image may come first, started with --runtime nvidia; the source build
// stays an alternative.
TEST(ResolverContainer, JetsonGetsTheIgpuImageWhenNoWheelRuns) {
  const Snapshot s = what_if({"Orin"}, "12.6", "2.11.0+cu130", "linux-aarch64");
  const Diagnosis d = diagnose(s, knowledge());
  const RemedyReport& r = torch_report(d);
  ASSERT_EQ(index_of(r, CandidateKind::container), 0);
  const ContainerChange& c = *r.resolution.winners.front().container;
  EXPECT_TRUE(c.image.ends_with("-py3-igpu")) << c.image;
  EXPECT_TRUE(c.run_line.starts_with("docker run --runtime nvidia ")) << c.run_line;
  EXPECT_EQ(diagnose(apply_remedy(s, r.python, r.resolution.winners.front(), knowledge()), knowledge()).exit_code(), 0);
}

}  // namespace
}  // namespace torchfix
