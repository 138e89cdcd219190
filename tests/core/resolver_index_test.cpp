// The resolver reading index truth from the snapshot (pythons[].index_pages,
// core/resolver/wheel_index.hpp): a wheel the probed page lacks for the environment's
// Python is rejected and the next candidate comes first; a page that gave no
// answer changes nothing.

#include <gtest/gtest.h>

#include <algorithm>

#include "../support/repo_knowledge.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/resolver/resolver.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix {
namespace {

const std::string k_cu128 = "https://download.pytorch.org/whl/cu128";

// An RTX 5090 with torch 2.7.1+cu126 in Python 3.11: the tables' first fix is torch==2.7.1 from cu128.
Snapshot machine(std::vector<IndexPage> pages) {
  Snapshot s;
  WhatIf w;
  w.gpus = {"RTX 5090"};
  w.torch = "2.7.1+cu126";
  w.python_version = "3.11.7";
  w.driver = "580.65.06";
  EXPECT_TRUE(apply_what_if(s, w, testing::repo_knowledge()));
  EXPECT_EQ(s.pythons.size(), 1u);
  if (!s.pythons.empty()) s.pythons[0].index_pages = std::move(pages);
  return s;
}

IndexPage cu128_page(std::vector<std::string> files) {
  IndexPage page;
  page.upstream = k_cu128;
  page.url = "https://mirror.example/whl/cu128";
  page.answer = IndexAnswer::listed;
  page.format = "PEP 691 JSON";
  page.files = std::move(files);
  return page;
}

std::string first_install(const Diagnosis& d) {
  for (const Finding& f : d.findings) {
    if (f.severity == Severity::problem && !f.fixes.empty() && !f.fixes.front().commands.empty())
      return f.fixes.front().commands.front();
  }
  return {};
}

TEST(ResolverIndex, TheTablesFirstChoiceStandsWhenTheIndexListsItsWheel) {
  const auto& k = testing::repo_knowledge();
  const std::string tables = first_install(diagnose(machine({}), k));
  ASSERT_NE(tables.find("torch==2.7.1 --index-url " + k_cu128), std::string::npos) << tables;
  const auto listed = cu128_page({"torch-2.7.1+cu128-cp311-cp311-manylinux_2_28_x86_64.whl"});
  EXPECT_EQ(first_install(diagnose(machine({listed}), k)), tables);
  IndexPage down = cu128_page({});
  down.answer = IndexAnswer::unreachable;
  down.error = "timed out after 3 s";
  EXPECT_EQ(first_install(diagnose(machine({down}), k)), tables);
}

TEST(ResolverIndex, AWheelTheIndexLacksForThisPythonMovesTheChoiceOn) {
  const auto& k = testing::repo_knowledge();
  const auto holes = cu128_page({"torch-2.7.1+cu128-cp312-cp312-manylinux_2_28_x86_64.whl",
                                 "torch-2.7.1+cu128-cp311-cp311-manylinux_2_28_aarch64.whl"});
  const Diagnosis d = diagnose(machine({holes}), k);
  const std::string first = first_install(d);
  EXPECT_EQ(first.find("torch==2.7.1 "), std::string::npos) << first;
  EXPECT_FALSE(first.empty());
  ASSERT_FALSE(d.remedies.empty());
  const auto& rejected = d.remedies.front().resolution.rejected;
  EXPECT_TRUE(std::ranges::any_of(rejected, [](const Rejected& r) {
    return std::ranges::any_of(r.reasons, [](const std::string& why) {
      return why ==
             "the index has no such wheel: https://mirror.example/whl/cu128 lists no torch 2.7.1 for cp311 on "
             "linux-x86_64 (PEP 691 JSON, 2 torch files)";
    });
  }));
}

}  // namespace
}  // namespace torchfix
