// The Python the doctor judges, through the real binary and real venvs
// (python3 -m venv): the one torchfix is installed in when run as
// <venv>/bin/torchfix without activating it (copied or symlinked), the
// active one, and never uv's throwaway interpreter (uvx, uv run --with).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

// Makes a real venv at `dir` (no pip: only the interpreter matters here).
bool make_venv(const fs::path& dir) {
  SystemProcessRunner runner;
  const Environment env = {{"PATH", "/usr/bin:/bin"}};
  auto r = runner.run(
      Command{"/usr/bin/python3", {"-m", "venv", "--without-pip", dir.string()}, env, {}, std::chrono::seconds(120)});
  return r && r->succeeded();
}

// Runs `program doctor --no-binaries --json ARGS` as a user would from a
// shell: HOME, PATH and the data folder set, nothing activated.
nlohmann::json doctor_json(const std::string& program, const Environment& extra, std::vector<std::string> args = {}) {
  Environment env{{"PATH", "/usr/bin:/bin"}, {"TORCHFIX_DATA_DIR", TORCHFIX_SOURCE_DIR}};
  for (const auto& [k, v] : extra) env[k] = v;
  args.insert(args.begin(), {"doctor", "--no-binaries", "--json"});
  SystemProcessRunner runner;
  auto r = runner.run(Command{program, args, env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  if (!r) return {};
  EXPECT_LE(r->exit_code, 1) << r->err;
  auto json = nlohmann::json::parse(r->out, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << r->out << r->err;
  return json.is_discarded() ? nlohmann::json() : json["snapshot"]["pythons"];
}

std::string first_interpreter(const nlohmann::json& pythons) {
  return pythons.is_array() && !pythons.empty() ? pythons[0].value("interpreter", "") : "";
}

TEST(PythonCli, UnactivatedVenvBinaryJudgesItsOwnVenv) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  TempDir dir;
  ASSERT_TRUE(make_venv(dir / "venv"));
  fs::copy_file(TORCHFIX_BINARY, dir / "venv/bin/torchfix");
  auto pythons = doctor_json((dir / "venv/bin/torchfix").string(), {{"HOME", dir.path().string()}});
  EXPECT_EQ(first_interpreter(pythons), (dir / "venv/bin/python").string()) << pythons.dump();
  EXPECT_EQ(pythons[0].value("origin", ""), "torchfix's venv") << pythons.dump();
  // The same through a symlink into the venv (argv[0] names the venv).
  ASSERT_TRUE(make_venv(dir / "other"));
  fs::create_symlink(TORCHFIX_BINARY, dir / "other/bin/torchfix");
  pythons = doctor_json((dir / "other/bin/torchfix").string(), {{"HOME", dir.path().string()}});
  EXPECT_EQ(first_interpreter(pythons), (dir / "other/bin/python").string()) << pythons.dump();
}

TEST(PythonCli, ActiveVenvComesFirstAndPythonChoosesAnother) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  TempDir dir;
  ASSERT_TRUE(make_venv(dir / "active"));
  auto pythons = doctor_json(TORCHFIX_BINARY, {{"VIRTUAL_ENV", (dir / "active").string()}});
  EXPECT_EQ(first_interpreter(pythons), (dir / "active/bin/python").string()) << pythons.dump();
  EXPECT_EQ(pythons[0].value("origin", ""), "VIRTUAL_ENV");
  pythons =
      doctor_json(TORCHFIX_BINARY, {{"VIRTUAL_ENV", (dir / "active").string()}}, {"--python", "/usr/bin/python3"});
  ASSERT_EQ(pythons.size(), 1u) << pythons.dump();
  EXPECT_EQ(first_interpreter(pythons), "/usr/bin/python3");
}

TEST(PythonCli, UvThrowawayInterpreterIsNotJudged) {
  TORCHFIX_LINUX_ONLY("makes a venv with the Linux python3");
  TempDir dir;
  // uvx torchfix-gpu: the tool's env lives in uv's cache, its bin/ first on PATH.
  const fs::path cache_env = dir / "home/.cache/uv/archive-v0/Xq3b";
  ASSERT_TRUE(make_venv(cache_env));
  fs::copy_file(TORCHFIX_BINARY, cache_env / "bin/torchfix");
  ASSERT_TRUE(make_venv(dir / "user"));
  const std::string path = (cache_env / "bin").string() + ":" + (dir / "user/bin").string() + ":/usr/bin:/bin";
  auto pythons =
      doctor_json((cache_env / "bin/torchfix").string(), {{"HOME", (dir / "home").string()}, {"PATH", path}});
  ASSERT_TRUE(pythons.is_array());
  for (const auto& py : pythons) EXPECT_FALSE(py.value("interpreter", "").starts_with(cache_env.string())) << py.dump();
  EXPECT_EQ(first_interpreter(pythons), (dir / "user/bin/python3").string()) << pythons.dump();
  // uv run --with: a cache named by UV_CACHE_DIR, even with VIRTUAL_ENV pointing into it.
  const fs::path overlay = dir / "uvcache/builds-v0/.tmpAbc";
  ASSERT_TRUE(make_venv(overlay));
  pythons = doctor_json(TORCHFIX_BINARY, {{"HOME", (dir / "home").string()},
                                          {"UV_CACHE_DIR", (dir / "uvcache").string()},
                                          {"VIRTUAL_ENV", overlay.string()},
                                          {"PATH", (overlay / "bin").string() + ":/usr/bin:/bin"}});
  for (const auto& py : pythons) EXPECT_FALSE(py.value("interpreter", "").starts_with(overlay.string())) << py.dump();
  EXPECT_EQ(first_interpreter(pythons), "/usr/bin/python3") << pythons.dump();
}

}  // namespace
}  // namespace torchfix
