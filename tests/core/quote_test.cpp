// Quoting of fix commands: each quoted word is run through a real POSIX shell
// (/bin/sh, bash) and must come back byte for byte.
#include "core/base/quote.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "probe/process.hpp"

namespace torchfix {
namespace {

std::string through_shell(const std::string& shell, const std::string& word) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{shell, {"-c", "printf '%s' " + quote_posix(word)}, {}, {}, std::chrono::seconds(20)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? r->out : std::string();
}

TEST(Quote, PosixWordsSurviveRealShells) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh, bash, zsh or fish as a child");
  for (const std::string word : {"plain/path-1.2", "with space", "it's", "$HOME", "a;b", "8.6;12.0+PTX", "`id`",
                                 "new\nline", "", "-flag", "=x", "back\\slash", "ümlaut", "torch==2.6.*"}) {
    for (const char* shell : {"/bin/sh", "/bin/bash"}) {
      EXPECT_EQ(through_shell(shell, word), word) << shell << " " << quote_posix(word);
    }
  }
  EXPECT_EQ(quote_posix("/usr/bin/g++-12"), "/usr/bin/g++-12");
  EXPECT_EQ(quote_posix("it's"), "'it'\\''s'");
}

TEST(Quote, PowerShellDoublesQuotes) {
  EXPECT_EQ(quote_powershell("C:\\CUDA\\v12.8"), "C:\\CUDA\\v12.8");
  EXPECT_EQ(quote_powershell("C:\\Program Files\\x"), "'C:\\Program Files\\x'");
  EXPECT_EQ(quote_powershell("it's"), "'it''s'");
  EXPECT_EQ(quote_powershell("a\xE2\x80\x99s"), "'a\xE2\x80\x99\xE2\x80\x99s'");  // U+2019 counts as a quote
  EXPECT_EQ(quote_powershell("$env:X"), "'$env:X'");
  EXPECT_EQ(command_line(CommandShell::powershell, {"C:\\Program Files\\Python\\python.exe", "-m", "pip"}),
            "& 'C:\\Program Files\\Python\\python.exe' -m pip");
  EXPECT_EQ(set_env_command(CommandShell::powershell, "CUDA_HOME", "C:\\CUDA"), "$env:CUDA_HOME = 'C:\\CUDA'");
  EXPECT_EQ(set_env_command(CommandShell::posix, "CXX", "/opt/my gcc/g++"), "export CXX='/opt/my gcc/g++'");
}

// A source build's variables sit on its own line in every shell, so the
// line "Run first" shows, or a user pastes, is the whole build (field trial
// 2026-12-06, report 4: PowerShell printed three lines and "Run first" took
// the first). The POSIX form runs through a real shell; cmd's `;` would
// separate nothing, so it chains with &&.
TEST(Quote, EnvPrefixKeepsTheCommandOnOneLine) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh as a child");
  const std::vector<std::pair<std::string, std::string>> env = {{"A", "x y"}, {"B", "8.6;12.0"}};
  SystemProcessRunner runner;
  auto r = runner.run(Command{
      "/bin/sh", {"-c", env_prefix(CommandShell::posix, env) + "printenv A B"}, {}, {}, std::chrono::seconds(20)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->out, "x y\n8.6;12.0\n");
  EXPECT_EQ(env_prefix(CommandShell::powershell, env), "$env:A = 'x y'; $env:B = '8.6;12.0'; ");
  EXPECT_EQ(env_prefix(CommandShell::cmd, env), "set \"A=x y\" && set \"B=8.6;12.0\" && ");
  EXPECT_EQ(env_prefix(CommandShell::powershell, {}), "");
}

}  // namespace
}  // namespace torchfix
