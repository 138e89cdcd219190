// Sources generated snippets in the real shells (bash, zsh, fish) and checks
// that every variable holds exactly the intended bytes, for hostile values:
// spaces, quotes, '$', backslashes, newlines, control bytes, non-ASCII and
// invalid UTF-8. A shell that is not installed is skipped with the reason.
#include <gtest/gtest.h>

#include <fstream>

#include "../support/linux_only.hpp"
#include "probe/process.hpp"
#include "shellenv/rc_edit.hpp"
#include "shellenv/snippet.hpp"

namespace torchfix::shellenv {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string>& hostile_values() {
  static const std::vector<std::string> values = {
      "/opt/my cuda/bin",
      "it's \"quoted\"",
      "'",
      "''",
      "\\'",
      "$HOME ${PATH} `id` $(id) $((1+1)) !! !$",
      "back\\slash \\\\ \\n \\x41 trailing\\",
      "new\nline",
      "trailing newline\n",
      "\nleading newline",
      "tab\there",
      "\x01\x1f\x7f control",
      "日本語/ünïcødé/🚀",
      "invalid utf-8 \xff\xfe \xc3",
      "%s %d %%",
      "-n",
      "--",
      "*?[glob]{a,b}",
      "~/tilde",
      "a;b&&c|d>e<f",
      "# >>> torchfix >>>",
      "{{value}} {{name}}",
      "=leading equals",
      "   ",
      "#hash",
      "(paren) [bracket]",
      "/usr/local/cuda-13.0/bin",
      "=ls",
      "a=b,c+d:e",
  };
  return values;
}

// Runs `script` in `shell` with a small fixed environment; returns stdout.
std::string run_shell(Shell shell, const std::string& script, const Environment& env) {
  SystemProcessRunner runner;
  Command command;
  command.program = std::string("/usr/bin/") + std::string(to_string(shell));
  if (shell == Shell::fish) {
    command.args = {"--no-config", "-c", script};
  } else if (shell == Shell::zsh) {
    command.args = {"-f", "-c", script};
  } else {
    command.args = {"--norc", "--noprofile", "-c", script};
  }
  command.env = env;
  auto result = runner.run(command);
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  if (!result) return {};
  EXPECT_TRUE(result->succeeded()) << to_string(shell) << " failed: " << result->err;
  return result->out;
}

class SnippetShellTest : public testing::TestWithParam<Shell> {
 protected:
  void SetUp() override {
    const fs::path shell = fs::path("/usr/bin") / std::string(to_string(GetParam()));
    if (!fs::exists(shell))
      GTEST_SKIP() << shell << " is not installed (Debian package " << to_string(GetParam()) << ")";
    std::string tmpl = (fs::temp_directory_path() / "torchfix-shell-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    m_dir = tmpl;
    auto loaded = load_template(fs::path(TORCHFIX_SOURCE_DIR) / "templates", GetParam());
    ASSERT_TRUE(loaded) << loaded.error().message;
    m_template = *loaded;
  }
  void TearDown() override {
    if (m_dir.empty()) return;
    if (HasFailure()) {
      std::cerr << "kept test folder: " << m_dir << "\n";
    } else {
      fs::remove_all(m_dir);
    }
  }

  // Writes the snippet to a file and returns a script that sources it `times`
  // times, then prints each variable through printenv (what child processes
  // see), separated by a NUL-free marker line.
  std::string script_for(const std::string& snippet, const std::vector<std::string>& names, int times) {
    const fs::path file = m_dir / ("snippet." + std::string(to_string(GetParam())));
    std::ofstream(file, std::ios::binary) << snippet;
    std::string script;
    for (int i = 0; i < times; ++i) script += "source '" + file.string() + "'\n";
    for (const std::string& name : names) script += "/usr/bin/printenv " + name + "; echo '<<END>>'\n";
    return script;
  }

  static Environment base_env() {
    return {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent-home"}, {"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}};
  }

  // Splits printenv outputs: each value is followed by "\n<<END>>\n".
  static std::vector<std::string> values_of(const std::string& out) {
    std::vector<std::string> values;
    const std::string sep = "\n<<END>>\n";
    std::size_t pos = 0;
    for (std::size_t end; (end = out.find(sep, pos)) != std::string::npos; pos = end + sep.size()) {
      values.push_back(out.substr(pos, end - pos));
    }
    return values;
  }

  fs::path m_dir;
  SnippetTemplate m_template;
};

TEST_P(SnippetShellTest, SetValuesArriveByteForByte) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  std::vector<EnvVar> vars;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < hostile_values().size(); ++i) {
    names.push_back("TF_VALUE_" + std::to_string(i));
    vars.push_back({names.back(), hostile_values()[i], VarAction::set, Purpose::build, "why \n it's $here"});
  }
  auto snippet = render_snippet(m_template, vars, {"0.1.0", PurposeFilter::all});
  ASSERT_TRUE(snippet) << snippet.error().message;
  // Each variable line is preceded by its one-line comment, and the snippet
  // is text that can go into an rc file.
  EXPECT_TRUE(check_text(*snippet));
  ASSERT_TRUE(install_block("", *snippet)) << *snippet;
  const auto got = values_of(run_shell(GetParam(), script_for(*snippet, names, 1), base_env()));
  ASSERT_EQ(got.size(), vars.size()) << *snippet;
  for (std::size_t i = 0; i < vars.size(); ++i) {
    EXPECT_EQ(got[i], vars[i].value) << "value " << testing::PrintToString(vars[i].value) << "\nsnippet:\n" << *snippet;
  }
}

TEST_P(SnippetShellTest, EmptyValueIsSetAndEmpty) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  auto snippet = render_snippet(m_template, {{"TF_EMPTY", "", VarAction::set, Purpose::build, "empty"}}, {});
  ASSERT_TRUE(snippet);
  const auto got = values_of(run_shell(GetParam(), script_for(*snippet, {"TF_EMPTY"}, 1), base_env()));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], "");
}

TEST_P(SnippetShellTest, PrependPutsDirectoryFirstOnceEvenWhenSourcedTwice) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  for (const std::string& value : hostile_values()) {
    if (value.find(':') != std::string::npos || value.empty()) continue;
    SCOPED_TRACE(testing::PrintToString(value));
    std::vector<EnvVar> vars = {{"PATH", value, VarAction::prepend, Purpose::build, "first on PATH"},
                                {"LD_LIBRARY_PATH", value, VarAction::prepend, Purpose::runtime, "unset before"}};
    auto snippet = render_snippet(m_template, vars, {"0.1.0", PurposeFilter::all});
    ASSERT_TRUE(snippet) << snippet.error().message;
    const auto got = values_of(run_shell(GetParam(), script_for(*snippet, {"PATH", "LD_LIBRARY_PATH"}, 2), base_env()));
    ASSERT_EQ(got.size(), 2u) << *snippet;
    EXPECT_EQ(got[0], value + ":/usr/bin:/bin") << *snippet;
    EXPECT_EQ(got[1], value) << *snippet;
  }
}

TEST_P(SnippetShellTest, PrependKeepsExistingListAndMovesALaterEntryToTheFront) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  Environment env = base_env();
  env["LD_LIBRARY_PATH"] = "/already/here:/other";
  env["TF_FIRST_PATH"] = "/first:/x";
  std::vector<EnvVar> vars = {{"LD_LIBRARY_PATH", "/new dir", VarAction::prepend, Purpose::runtime, "new"},
                              {"PATH", "/bin", VarAction::prepend, Purpose::build, "already on PATH, not first"},
                              {"TF_FIRST_PATH", "/first", VarAction::prepend, Purpose::build, "already first"}};
  auto snippet = render_snippet(m_template, vars, {});
  ASSERT_TRUE(snippet);
  const auto got =
      values_of(run_shell(GetParam(), script_for(*snippet, {"LD_LIBRARY_PATH", "PATH", "TF_FIRST_PATH"}, 2), env));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], "/new dir:/already/here:/other");
  EXPECT_EQ(got[1], "/bin:/usr/bin");
  EXPECT_EQ(got[2], "/first:/x");
}

TEST_P(SnippetShellTest, ToolkitNvccWinsOverAnotherNvccEarlierOnPath) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  // Two real executables named nvcc; the other one is earlier on PATH and
  // the toolkit's bin is already on PATH further back (issue 9).
  for (const char* dir : {"other/bin", "cuda 12.8/bin"}) {
    fs::create_directories(m_dir / dir);
    const fs::path nvcc = m_dir / dir / "nvcc";
    std::ofstream(nvcc) << "#!/bin/sh\necho '" << dir << "'\n";
    fs::permissions(nvcc, fs::perms::owner_all);
  }
  const std::string toolkit_bin = (m_dir / "cuda 12.8/bin").string();
  Environment env = base_env();
  env["PATH"] = (m_dir / "other/bin").string() + ":/usr/bin:" + toolkit_bin + ":/bin";
  auto snippet = render_snippet(
      m_template, {{"PATH", toolkit_bin, VarAction::prepend, Purpose::build, "the toolkit's nvcc first"}}, {});
  ASSERT_TRUE(snippet);
  const fs::path file = m_dir / "snippet";
  std::ofstream(file, std::ios::binary) << *snippet;
  const std::string script =
      "source '" + file.string() + "'\nsource '" + file.string() + "'\nnvcc\n/usr/bin/printenv PATH\n";
  const std::string out = run_shell(GetParam(), script, env);
  EXPECT_EQ(out, "cuda 12.8/bin\n" + toolkit_bin + ":" + (m_dir / "other/bin").string() + ":/usr/bin:/bin\n")
      << *snippet;
}

INSTANTIATE_TEST_SUITE_P(Shells, SnippetShellTest, testing::Values(Shell::bash, Shell::zsh, Shell::fish),
                         [](const auto& info) { return std::string(to_string(info.param)); });

}  // namespace
}  // namespace torchfix::shellenv
