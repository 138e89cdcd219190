// Where torchfix's tables and templates come from (probe/data_dir.cpp),
// through the real binary: a copy of the binary alone in an empty folder (no
// recipes/ beside it) runs from the copy embedded at build time and prints
// what the build tree's binary prints from its data folder; a
// TORCHFIX_DATA_DIR with a changed table and template is used over the
// embedded copy; a wrong one is an error, never a quiet fall back.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"
#include "../support/data_copy.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::DataCopy;
using testing::TempDir;

const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";
const std::string k_snapshot = k_fixtures + "F1-rtx5090d-torch26-cu126.json";
const std::string k_h200 = k_fixtures + "h200-torch211-cu130.json";  // has a toolkit that builds

// Runs `binary` with `args` in a bare environment, plus TORCHFIX_DATA_DIR when given.
ProcessResult run(const fs::path& binary, std::vector<std::string> args, const std::string& data_dir = "") {
  Environment env{{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}, {"LANG", "C.UTF-8"}};
  if (!data_dir.empty()) env.emplace("TORCHFIX_DATA_DIR", data_dir);
  SystemProcessRunner runner;
  auto r = runner.run(Command{binary.string(), std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

// The built binary copied alone into an empty temp dir.
class AloneBinary {
 public:
  AloneBinary() { fs::copy_file(TORCHFIX_BINARY, path()); }
  fs::path path() const { return m_dir / "torchfix"; }

 private:
  TempDir m_dir;
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(DataDirCli, TheBinaryAloneRunsFromItsEmbeddedTablesAndPrintsWhatTheDataFolderGives) {
  ASSERT_TRUE(fs::is_directory(fs::path(TORCHFIX_BINARY).parent_path() / "recipes"))
      << "the build tree's binary has its data folder beside it";
  const AloneBinary alone;
  ASSERT_FALSE(fs::exists(alone.path().parent_path() / "recipes"));
  const TempDir project;
  testing::write_file(project / "setup.py", "from setuptools import setup\nsetup(name='ext')\n");
  const std::vector<std::vector<std::string>> commands = {
      {"doctor", "--snapshot", k_snapshot},
      {"doctor", "--snapshot", k_snapshot, "--json"},
      {"env", "--shell", "bash", "--snapshot", k_snapshot},
      {"build", "cuda-extension", "--src", project.path().string(), "--dry-run", "--snapshot", k_h200},
      {"arch", "--format", "cmake", "--snapshot", k_h200},
      {"completions", "bash"},
      {"__complete", "doctor", "--gpu", "RTX 509"}};
  for (const auto& args : commands) {
    const auto folder = run(TORCHFIX_BINARY, args);
    const auto embedded = run(alone.path(), args);
    EXPECT_EQ(embedded.exit_code, folder.exit_code) << args[0] << ": " << embedded.err;
    EXPECT_NE(embedded.exit_code, 2) << args[0] << ": " << embedded.err;
    EXPECT_FALSE(embedded.out.empty()) << args[0];
    EXPECT_EQ(embedded.out, folder.out) << args[0];
    EXPECT_EQ(embedded.err, folder.err) << args[0];
  }
  // The recipes list says where it read them.
  const auto recipes = run(alone.path(), {"recipes"});
  EXPECT_EQ(recipes.exit_code, 0) << recipes.err;
  EXPECT_TRUE(has(recipes.out, "cuda-extension")) << recipes.out;
  EXPECT_TRUE(has(recipes.out, "Recipes are read from the binary (embedded)")) << recipes.out;
}

TEST(DataDirCli, VersionSaysWhereTheTablesComeFromAndTheirDate) {
  const AloneBinary alone;
  auto r = run(alone.path(), {"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "\ntables embedded in the binary, of ")) << r.out;
  r = run(alone.path(), {"version", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["tables"]["source"], "embedded") << r.out;
  EXPECT_EQ(json["tables"]["date"], json["tables_date"]) << r.out;
  EXPECT_TRUE(json["data_dir"].is_null()) << r.out;

  const DataCopy data;
  r = run(alone.path(), {"version", "--json"}, data.dir());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["tables"]["source"], "folder") << r.out;
  EXPECT_EQ(json["data_dir"], data.dir()) << r.out;
  // Files copied just now: today's date, YYYY-MM-DD.
  EXPECT_EQ(json["tables"]["date"].get<std::string>().size(), 10u) << r.out;
  r = run(alone.path(), {"--version"}, data.dir());
  EXPECT_TRUE(has(r.out, "\ntables from " + data.dir() + ", files of ")) << r.out;
}

TEST(DataDirCli, AChangedTableAndTemplateInTorchfixDataDirAreUsedOverTheEmbeddedOnes) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  const AloneBinary alone;
  const DataCopy data;
  data.replace("build/cuda-extension.toml", "any torch.utils.cpp_extension", "a changed recipe: any");
  const fs::path bash = fs::path(data.dir()) / "templates/env.bash";
  std::string text = testing::read_file(bash);
  text.replace(text.find("@@ header\n"), 10, "@@ header\n# a changed template\n");
  testing::write_file(bash, text);

  auto r = run(alone.path(), {"recipes"}, data.dir());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "a changed recipe: any")) << r.out;
  EXPECT_TRUE(has(r.out, "Recipes are read from " + data.dir() + "/recipes/build")) << r.out;
  EXPECT_FALSE(has(run(alone.path(), {"recipes"}).out, "a changed recipe")) << "the embedded copy is unchanged";
  r = run(alone.path(), {"env", "--shell", "bash", "--snapshot", k_snapshot}, data.dir());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "# a changed template\n")) << r.out;

  // A table broken in the override stops the run (file and line), as before.
  data.replace("gpus.toml", "[[gpu]]", "[[gpu]]\nnot_a_field = 1");
  r = run(alone.path(), {"doctor", "--snapshot", k_snapshot}, data.dir());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_TRUE(has(r.err, data.dir() + "/recipes/gpus.toml")) << r.err;
}

TEST(DataDirCli, AWrongTorchfixDataDirIsAnErrorNotTheEmbeddedTables) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  const AloneBinary alone;
  const TempDir empty;
  const auto r = run(alone.path(), {"doctor", "--snapshot", k_snapshot}, empty.path().string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_EQ(r.err, "torchfix doctor: TORCHFIX_DATA_DIR=" + empty.path().string() +
                       " holds no recipes/ folder; point it at the folder that holds recipes/ and templates/, or "
                       "unset it to use the tables embedded in the binary\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace torchfix
