// Index truth, pure part: real simple-API pages (PyPI's torch page, PEP 691
// JSON and PEP 503 HTML, cut to release 2.9.1) read into wheel file names,
// and those names judged against a release, a Python and a platform.

#include "core/resolver/wheel_index.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace torchfix {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/index/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(WheelIndex, ReadsPyPIsPep691JsonPage) {
  auto files = parse_pep691_files(fixture("pypi-torch-2.9.1.json"));
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(files->size(), 28u);
  EXPECT_NE(std::ranges::find(*files, "torch-2.9.1-cp313-cp313-manylinux_2_28_x86_64.whl"), files->end());
  auto listing = parse_index_page("application/vnd.pypi.simple.v1+json", fixture("pypi-torch-2.9.1.json"));
  ASSERT_TRUE(listing);
  EXPECT_EQ(listing->format, "PEP 691 JSON");
}

TEST(WheelIndex, ReadsPyPIsPep503HtmlPageAsTheJsonOne) {
  const std::vector<std::string> html = parse_pep503_files(fixture("pypi-torch-2.9.1.html"));
  EXPECT_EQ(html, *parse_pep691_files(fixture("pypi-torch-2.9.1.json")));
  auto listing = parse_index_page("text/html", fixture("pypi-torch-2.9.1.html"));
  ASSERT_TRUE(listing);
  EXPECT_EQ(listing->format, "PEP 503 HTML");
}

TEST(WheelIndex, ReadsThePyTorchIndexsRelativePercentEncodedLinks) {
  // download.pytorch.org/whl/cu128/torch/: relative hrefs, '+' as %2B.
  const std::string page =
      "<!DOCTYPE html>\n<html>\n  <body>\n    <h1>Links for torch</h1>\n"
      "    <a href=\"/whl/cu128/torch-2.8.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl#sha256=0c96999d\" "
      "data-requires-python=\"&gt;=3.9.0\">torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>\n"
      "    <A HREF='torch-2.8.0%2Bcu128-cp311-cp311-win_amd64.whl'>x</A>\n"
      "    <a href=\"/whl/cu128/torchvision-0.23.0%2Bcu128-cp312-cp312-manylinux_2_28_x86_64.whl\">tv</a>\n"
      "  </body>\n</html>\n";
  EXPECT_EQ(parse_pep503_files(page),
            (std::vector<std::string>{"torch-2.8.0+cu128-cp311-cp311-win_amd64.whl",
                                      "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"}));
}

TEST(WheelIndex, RefusesAJsonPageThatIsNotOne) {
  EXPECT_FALSE(parse_pep691_files("<html>"));
  EXPECT_FALSE(parse_pep691_files("{\"meta\": {}}"));
  EXPECT_FALSE(parse_index_page("application/vnd.pypi.simple.v1+json", "not json"));
  EXPECT_TRUE(parse_pep503_files("<a href=").empty());
}

TEST(WheelIndex, JudgesFileNamesByReleasePythonAndPlatform) {
  const auto fits = [](std::string_view file, const char* release, bool exact, const char* python,
                       PlatformKind platform = PlatformKind::linux_x86_64) {
    return wheel_file_fits(file, *Version::parse(release), exact, Version::parse(python), platform);
  };
  const std::string linux312 = "torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl";
  EXPECT_TRUE(fits(linux312, "2.8.0", true, "3.12.3"));
  EXPECT_TRUE(fits(linux312, "2.8", false, "3.12"));
  EXPECT_FALSE(fits(linux312, "2.8.1", true, "3.12"));
  EXPECT_FALSE(fits(linux312, "2.8.0", true, "3.11.7"));
  EXPECT_FALSE(fits(linux312, "2.8.0", true, "3.12", PlatformKind::linux_aarch64));
  EXPECT_FALSE(fits(linux312, "2.8.0", true, "3.12", PlatformKind::windows));
  EXPECT_TRUE(fits("torch-2.8.0+cu128-cp312-cp312-win_amd64.whl", "2.8.0", true, "3.12", PlatformKind::windows));
  // Free-threaded, pre-release and other projects are not what pip installs here.
  EXPECT_FALSE(fits("torch-2.9.1-cp313-cp313t-manylinux_2_28_x86_64.whl", "2.9", false, "3.13"));
  EXPECT_FALSE(fits("torch-2.9.0.dev20250701+cu128-cp313-cp313-manylinux_2_28_x86_64.whl", "2.9", false, "3.13"));
  EXPECT_FALSE(fits("torchvision-0.23.0-cp312-cp312-manylinux_2_28_x86_64.whl", "0.23", false, "3.12"));
  EXPECT_TRUE(fits("torch-2.7.1+cu128-py3-none-any.whl", "2.7.1", true, "3.11"));
}

TEST(WheelIndex, SaysWhatAPageLacksAndNothingWhenItGaveNoAnswer) {
  IndexPage page;
  page.upstream = "https://download.pytorch.org/whl/cu128";
  page.url = "http://127.0.0.1:8000/whl/cu128";
  page.answer = IndexAnswer::listed;
  page.format = "PEP 503 HTML";
  page.files = {"torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl"};
  const auto py311 = Version::parse("3.11.7");
  EXPECT_EQ(index_hole(page, *Version::parse("2.8.0"), true, py311, PlatformKind::linux_x86_64),
            "http://127.0.0.1:8000/whl/cu128 lists no torch 2.8.0 for cp311 on linux-x86_64 (PEP 503 HTML, 1 "
            "torch files)");
  EXPECT_FALSE(index_hole(page, *Version::parse("2.8"), false, Version::parse("3.12"), PlatformKind::linux_x86_64));
  page.answer = IndexAnswer::unreachable;
  page.error = "timed out after 3 s";
  EXPECT_FALSE(index_hole(page, *Version::parse("2.8.0"), true, py311, PlatformKind::linux_x86_64));
  const FixStep step{.requirements = {"torch==2.8.0"}, .index_url = page.upstream, .variant = "cu128"};
  EXPECT_EQ(index_note(step, {page}),
            "not checked: http://127.0.0.1:8000/whl/cu128: timed out after 3 s; the tables decided");
  EXPECT_EQ(index_note(step, {}), "");
}

}  // namespace
}  // namespace torchfix
