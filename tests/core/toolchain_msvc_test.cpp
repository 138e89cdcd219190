// MSVC against nvcc's _MSC_VER range (core/situation/toolchain_msvc.cpp), on
// the real tables (recipes/toolkits.toml: CUDA 13.0's host_config.h range)
// and the Windows snapshot fixtures of Visual Studio installs.
#include "core/situation/situation.hpp"
#include "core/situation/toolchain.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/repo_knowledge.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return torchfix::testing::repo_knowledge();
}

HostCompiler msvc(const std::string& version) {
  return {"C:\\VS\\cl.exe", "vswhere", CompilerFamily::msvc, Version::parse(version)};
}

// _MSC_VER is major * 100 + minor; nvcc 13.0 takes 1920 to 1949 inclusive,
// as its header's `_MSC_VER < 1920 || _MSC_VER >= 1950` rejects the rest.
TEST(ToolchainMsvc, Nvcc130AcceptsMscVer1920To1949) {
  const HostCompilerBounds* bounds = knowledge().host_bounds_for(*Version::parse("13.0.88"));
  ASSERT_NE(bounds, nullptr);
  EXPECT_EQ(msc_ver(*Version::parse("19.44.35217")), 1944);
  EXPECT_EQ(msvc_fit(msvc("19.19.27054"), bounds), MsvcFit::too_old);
  EXPECT_EQ(msvc_fit(msvc("19.20"), bounds), MsvcFit::inside);
  EXPECT_EQ(msvc_fit(msvc("19.49.1"), bounds), MsvcFit::inside);
  EXPECT_EQ(msvc_fit(msvc("19.50.35717"), bounds), MsvcFit::too_new);
  EXPECT_EQ(msvc_range_text(*bounds), "19.20 to 19.49");
  HostCompiler unknown = msvc("19.44");
  unknown.version.reset();
  EXPECT_EQ(msvc_fit(unknown, bounds), MsvcFit::unknown);
  // CUDA 13.1/13.2: no header read, so no range and no verdict.
  const HostCompilerBounds* later = knowledge().host_bounds_for(*Version::parse("13.2"));
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(msvc_fit(msvc("19.44"), later), MsvcFit::unknown);
  EXPECT_EQ(msvc_range_text(*later), "");
}

Snapshot fixture(const std::string& name) {
  std::ifstream in(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  auto s = snapshot_from_json(nlohmann::json::parse(text.str()));
  EXPECT_TRUE(s) << name;
  return s ? *s : Snapshot{};
}

Toolchain decide(const Snapshot& s) {
  ToolchainRequest request;
  request.recipe = knowledge().build_recipe(k_generic_recipe);
  EXPECT_NE(request.recipe, nullptr);
  return decide_toolchain(situate(s, knowledge()).toolchain_facts(), knowledge(), request);
}

// VS 2026 beside VS 2022 Build Tools: the build would use the newest (19.50,
// outside the range); the decision takes 19.44, the one nvcc 13.0 accepts.
TEST(ToolchainMsvc, TheNewestMsvcIsCurrentAndTheOneInsideTheRangeIsChosen) {
  const Snapshot s = fixture("win-vs2026-beside-buildtools2022-nvcc130-rtx4090");
  const Toolchain t = decide(s);
  ASSERT_TRUE(t.current);
  EXPECT_EQ(t.current->version->str(), "19.50.35717");
  EXPECT_TRUE(t.current_outside_bounds);
  ASSERT_TRUE(t.compiler) << t.compiler_error;
  EXPECT_EQ(t.compiler->cxx.version->str(), "19.44.35217");
  EXPECT_EQ(t.compiler->cc, "");

  const Snapshot alone = fixture("win-vs2026-msvc1950-nvcc130-rtx4090");
  const Toolchain none = decide(alone);
  EXPECT_FALSE(none.compiler);
  EXPECT_NE(none.compiler_error.find("nvcc 13.0.88 accepts MSVC 19.20 to 19.49. Install an MSVC toolset of 19.20 to "
                                     "19.49 with the Visual Studio Installer"),
            std::string::npos)
      << none.compiler_error;
}

}  // namespace
}  // namespace torchfix
