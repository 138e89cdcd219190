// MSVC discovery: vswhere's JSON (a real recorded sample) and the toolset
// to cl.exe version mapping. The probe itself, vswhere.exe run through the
// runner on a real install layout, is checked under Wine
// (tests/windows/wine_layouts.sh).

#include "probe/msvc_probe.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace torchfix {
namespace {

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/windows/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// flutter's recorded `vswhere -format json` of a VS Community 2022 17.5.4.
TEST(MsvcProbe, ParsesARecordedVswhereList) {
  const std::string json = read_fixture("vswhere-vs2022-17.5.json");
  ASSERT_FALSE(json.empty());
  auto installs = parse_vswhere(json);
  ASSERT_TRUE(installs) << installs.error().message;
  ASSERT_EQ(installs->size(), 1u);
  EXPECT_EQ((*installs)[0].path, "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community");
  EXPECT_EQ((*installs)[0].name, "Visual Studio Community 2022");
}

// No install is an empty list; an object without a path is skipped; what
// is not a JSON list is an error that says so.
TEST(MsvcProbe, VswhereOutputThatIsNotAListIsAnError) {
  EXPECT_TRUE(parse_vswhere("[]\r\n").value().empty());
  EXPECT_EQ(parse_vswhere(R"([{"displayName": "x"}, {"installationPath": "D:\\BT"}])").value().size(), 1u);
  auto garbage = parse_vswhere("Visual Studio Locator version 3.1.7");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().message, "vswhere printed no JSON");
  EXPECT_FALSE(parse_vswhere(R"({"installationPath": "C:\\VS"})"));
}

// Toolset 14.NN.B is cl.exe 19.NN.B (VS 2022 17.13: toolset 14.43.34808,
// _MSC_FULL_VER 194334808); nothing else is an MSVC toolset.
TEST(MsvcProbe, ToolsetVersionGivesClVersion) {
  EXPECT_EQ(msvc_version_of_toolset("14.35.32215").value().str(), "19.35.32215");
  EXPECT_EQ(msvc_version_of_toolset("14.43.34808").value().str(), "19.43.34808");
  EXPECT_EQ(msvc_version_of_toolset("14.50").value().str(), "19.50");
  EXPECT_FALSE(msvc_version_of_toolset("14.0.24215"));
  EXPECT_FALSE(msvc_version_of_toolset("15.35.1"));
  EXPECT_FALSE(msvc_version_of_toolset(""));
  EXPECT_FALSE(msvc_version_of_toolset("latest"));
}

// Without %ProgramFiles(x86)% (every Linux machine) there is no vswhere to
// run and no note.
TEST(MsvcProbe, NoProgramFilesX86FindsNothing) {
  SystemProcessRunner runner;
  std::vector<ProbeNote> notes;
  EXPECT_TRUE(probe_msvc({{"PATH", "/usr/bin"}}, runner, std::chrono::seconds(5), notes).empty());
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace torchfix
