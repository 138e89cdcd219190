// Shell completion and the man page through the real binary: each script,
// as `cmake --install` puts it under a prefix, loads in the real bash, zsh
// (interactive, on a pty) and fish and completes a command, an option and a
// --gpu name from the GPU table; the man page renders with `man -l` and the
// installed copy is what `torchfix man` prints now.

#include <gtest/gtest.h>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

ProcessResult run_program(const std::string& program, std::vector<std::string> args, Environment env = {}) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{program, std::move(args), std::move(env), {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// Drives an interactive shell on a pty (zsh/zpty): $2 the shell's words, $3
// the setup line, $4 the words typed before a tab; then presses ^G until
// the file $1 that the setup's binding writes is there, and prints it.
constexpr const char* k_pty_driver = R"(zmodload zsh/zpty
out=$1 shell=$2 setup=$3 typed=$4
zpty z ${=shell}
zpty -w z "$setup"
zpty -w -n z "$typed"$'\t'
for i in {1..300}; do sleep 0.2; zpty -w -n z $'\C-g'; [[ -s $out ]] && break; done
zpty -d z
cat $out
)";

// torchfix installed under a fresh prefix from this build tree, the way
// `cmake --install` does it for the .deb and a source install.
class Installed : public ::testing::Test {
 protected:
  void SetUp() override {
    TORCHFIX_LINUX_ONLY("runs cmake --install, bash, zsh, fish and man");
    const fs::path build_dir = fs::path(TORCHFIX_BINARY).parent_path();
    auto r = run_program("/usr/bin/env", {"cmake", "--install", build_dir.string(), "--prefix", m_dir.path().string()},
                         {{"PATH", "/usr/local/bin:/usr/bin:/bin"}});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    m_env = {{"PATH", (m_dir.path() / "bin").string() + ":/usr/bin:/bin"}, {"HOME", m_dir.path().string()}};
  }
  fs::path share() const { return m_dir.path() / "share"; }
  // Types `typed` and a tab into the interactive `shell_words` ("zsh -f -i",
  // "bash --norc --noprofile -i") on a pty that zsh's zpty module drives,
  // after `setup`, which binds ^G to write the edited line as "<LINE>" to
  // the file named OUT (renamed into place: a second key press must not
  // truncate what the driver reads); returns what it wrote. Needs zsh.
  std::string type_with_tab(const std::string& shell_words, std::string setup, const std::string& typed,
                            const std::string& file) {
    const fs::path driver = m_dir.path() / "drive.zsh";
    if (!fs::exists(driver)) write_file(driver, k_pty_driver);
    const std::string out = (m_dir.path() / file).string();
    for (auto at = setup.find("OUT"); at != std::string::npos; at = setup.find("OUT", at + out.size())) {
      setup.replace(at, 3, out);
    }
    auto r = shell("zsh", {"-f", driver.string(), out, shell_words, setup, typed});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }
  // Runs `shell` (bash, zsh or fish) with `args`, skipping when it is absent.
  ProcessResult shell(const std::string& name, std::vector<std::string> args) {
    return run_program("/usr/bin/" + name, std::move(args), m_env);
  }
  TempDir m_dir;
  Environment m_env;
};

void skip_without(const std::string& program) {
  if (!fs::exists("/usr/bin/" + program)) GTEST_SKIP() << program << " is not installed (.ci/install-deps has it)";
}

TEST_F(Installed, BashCompletesCommandsOptionsAndGpuNames) {
  TORCHFIX_LINUX_ONLY("runs bash, zsh, fish and man");
  skip_without("bash");
  const fs::path script = share() / "bash-completion/completions/torchfix";
  const std::string complete =
      "source " + script.string() +
      "; show() { COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _torchfix; printf '[%s]' \"${COMPREPLY[@]}\"; echo; }"
      "; show torchfix do; show torchfix doctor --js; show torchfix doctor --gpu 'RTX\\ 509'; show torchfix "
      "completions z"
      "; show torchfix completions ''; complete -p torchfix";
  auto r = shell("bash", {"--norc", "--noprofile", "-c", complete});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "[doctor]\n")) << r.out;
  EXPECT_TRUE(has(r.out, "[--json]\n")) << r.out;
  EXPECT_TRUE(has(r.out, "[RTX\\ 5090][RTX\\ 5090\\ D][RTX\\ 5090\\ Laptop\\ GPU]")) << r.out;
  // A positional's choices: the shells `torchfix completions` writes for.
  EXPECT_TRUE(has(r.out, "\n[zsh]\n[bash][zsh][fish]\n")) << r.out;
  EXPECT_TRUE(has(r.out, "complete -o default -F _torchfix torchfix")) << r.out;
}

// bash's own line editor (real readline splits "--gpu=RT" at the "=" of
// COMP_WORDBREAKS), on a pty: see k_pty_driver and type_with_tab.
TEST_F(Installed, BashCompletesAnOptionsValueAfterAnEqualsSign) {
  TORCHFIX_LINUX_ONLY("runs bash, zsh, fish and man");
  skip_without("bash");
  skip_without("zsh");
  const std::string script = (share() / "bash-completion/completions/torchfix").string();
  const std::string setup =
      "source " + script + "; bind -x '\"\\C-g\": printf \"<%s>\\n\" \"$READLINE_LINE\" > OUT.new && mv OUT.new OUT'";
  auto complete = [&](const std::string& typed, const std::string& file) {
    return type_with_tab("bash --norc --noprofile -i", setup, typed, file);
  };
  EXPECT_EQ(complete("torchfix doctor --gpu=RTX\\ 5090\\ L", "eq1"),
            "<torchfix doctor --gpu=RTX\\ 5090\\ Laptop\\ GPU >\n");
  EXPECT_EQ(complete("torchfix arch --format=cm", "eq2"), "<torchfix arch --format=cmake >\n");
  EXPECT_EQ(complete("torchfix --color=nev", "eq3"), "<torchfix --color=never >\n");
  // The words bash gives while the cursor is on the "=" itself ("--gpu" "="):
  // each answer keeps the "=" it replaces.
  const std::string words =
      "source " + script +
      "; COMP_WORDS=(torchfix doctor --gpu =); COMP_CWORD=3; _torchfix; printf '[%s]' \"${COMPREPLY[@]}\"";
  auto r = shell("bash", {"--norc", "--noprofile", "-c", words});
  EXPECT_TRUE(has(r.out, "[=RTX\\ 5090]")) << r.out;
  EXPECT_FALSE(has(r.out, "[RTX")) << r.out;
}

TEST_F(Installed, FishCompletesCommandsOptionsAndGpuNames) {
  TORCHFIX_LINUX_ONLY("runs bash, zsh, fish and man");
  skip_without("fish");
  const fs::path script = share() / "fish/vendor_completions.d/torchfix.fish";
  auto r = shell("fish", {"--no-config", "-c",
                          "source " + script.string() +
                              "; complete -C 'torchfix do'; complete -C 'torchfix doctor --js';"
                              " complete -C 'torchfix arch --gpu H100\\ S'; complete -C 'torchfix --color=ne'"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "doctor\tFind why PyTorch")) << r.out;
  EXPECT_TRUE(has(r.out, "--json\t")) << r.out;
  EXPECT_TRUE(has(r.out, "H100 SXM\tGPU")) << r.out;
  EXPECT_TRUE(has(r.out, "\n--color=never\n")) << r.out;  // --opt=value: fish passes the word whole
}

// zsh completes only inside its line editor: see k_pty_driver and type_with_tab.
TEST_F(Installed, ZshCompletesCommandsAndGpuNamesInItsLineEditor) {
  TORCHFIX_LINUX_ONLY("runs bash, zsh, fish and man");
  skip_without("zsh");
  const std::string setup = "fpath=(" + (share() / "zsh/site-functions").string() +
                            " $fpath); autoload -Uz compinit; compinit -u -D; show() { print -r -- \"<$BUFFER>\" > "
                            "OUT.new && mv OUT.new OUT }; zle -N show; bindkey '^G' show";
  auto complete = [&](const std::string& typed, const std::string& file) {
    return type_with_tab("zsh -f -i", setup, typed, file);
  };
  EXPECT_EQ(complete("torchfix do", "line1"), "<torchfix doctor >\n");
  EXPECT_EQ(complete("torchfix doctor --ma", "line2"), "<torchfix doctor --markdown >\n");
  EXPECT_TRUE(has(complete("torchfix doctor --gpu Jetson\\ AGX\\ T", "line3"), "--gpu Jetson\\ AGX\\ Thor"));
  EXPECT_EQ(complete("torchfix --color=nev", "line4"), "<torchfix --color=never >\n");  // --opt=value
}

TEST_F(Installed, TheScriptsAreWhatCompletionsPrints) {
  TORCHFIX_LINUX_ONLY("runs bash, zsh, fish and man");
  const std::string binary = (m_dir.path() / "bin/torchfix").string();
  EXPECT_EQ(run_program(binary, {"completions", "bash"}, m_env).out,
            read_file(share() / "bash-completion/completions/torchfix"));
  EXPECT_EQ(run_program(binary, {"completions", "zsh"}, m_env).out,
            read_file(share() / "zsh/site-functions/_torchfix"));
  EXPECT_EQ(run_program(binary, {"completions", "fish"}, m_env).out,
            read_file(share() / "fish/vendor_completions.d/torchfix.fish"));
  auto r = run_program(binary, {"completions", "tcsh"}, m_env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.err.starts_with("torchfix completions: ")) << r.err;
  EXPECT_EQ(std::ranges::count(r.err, '\n'), 1) << r.err;
}

// packaging/man/torchfix.1 is installed as it is (no build step runs the
// binary: the wheel is cross-compiled); this keeps it equal to `torchfix man`.
TEST_F(Installed, TheManPageRendersAndIsCurrent) {
  TORCHFIX_LINUX_ONLY("runs bash, zsh, fish and man");
  skip_without("man");
  const fs::path page = share() / "man/man1/torchfix.1";
  const std::string printed = run_program(TORCHFIX_BINARY, {"man"}).out;
  EXPECT_EQ(printed, read_file(page))
      << "packaging/man/torchfix.1 is stale: run `build/torchfix man > packaging/man/torchfix.1`";
  auto r = run_program("/usr/bin/man", {"-l", page.string()},
                       {{"PATH", "/usr/bin:/bin"}, {"MANPAGER", "cat"}, {"MANWIDTH", "100"}, {"LC_ALL", "C.UTF-8"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // groff's warnings
  for (const char* part : {"TORCHFIX(1)", "SYNOPSIS", "torchfix doctor", "--gpu NAME|X.Y", "TORCHFIX_DATA_DIR",
                           "EXIT STATUS", "torchfix completions"})
    EXPECT_TRUE(has(r.out, part)) << part << " missing from:\n" << r.out;
}

}  // namespace
}  // namespace torchfix
