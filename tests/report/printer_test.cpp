// The printer as a terminal sees it: escapes of untrusted text, colour
// switches, ASCII marks under LC_ALL=C, and the live status line cut to the
// width of a real pseudo-terminal.

#include "report/printer.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#ifdef _WIN32
#include <io.h>
#else
#include <sys/ioctl.h>
#include <unistd.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <string>

#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

TEST(Printer, EscapesTerminalControlSequences) {
  // An OSC window-title sequence, a cursor move and a clear-screen, as a
  // wheel member name could carry them.
  const std::string name = "lib/\x1b]0;owned\x07x\x1b[2J\x1b[Hy.so";
  const std::string safe = escape_for_terminal(name, true, true);
  EXPECT_EQ(safe, "lib/\\x1b]0;owned\\x07x\\x1b[2J\\x1b[Hy.so");
  EXPECT_EQ(safe.find('\x1b'), std::string::npos);
  EXPECT_EQ(escape_for_terminal("a\rb\x7f", false, true), "a\\x0db\\x7f");
  EXPECT_EQ(escape_for_terminal("a\nb\tc", false, true), "a\nb\tc");
  EXPECT_EQ(escape_for_terminal("a\nb", false, false), "a\\x0ab");
}

TEST(Printer, EscapesC1BidiAndInvalidUtf8ButKeepsText) {
  EXPECT_EQ(escape_for_terminal("\xc2\x9b"
                                "31m",
                                false, true),
            "\\u009b31m");  // C1 CSI as UTF-8
  EXPECT_EQ(escape_for_terminal("\x9b"
                                "31m",
                                false, true),
            "\\x9b31m");  // raw 8-bit CSI
  EXPECT_EQ(escape_for_terminal("evil\xe2\x80\xaegp.so", false, true), "evil\\u202egp.so");
  EXPECT_EQ(escape_for_terminal("\xff\xc3(", false, true), "\\xff\\xc3(");
  EXPECT_EQ(escape_for_terminal("\xed\xa0\x80", false, true), "\\xed\\xa0\\x80");  // a UTF-16 surrogate
  EXPECT_EQ(escape_for_terminal("GPU ✓ café 日本", false, true), "GPU ✓ café 日本");
}

TEST(Printer, PassesOnlyItsOwnColoursAndOnlyWhenColourIsOn) {
  const std::string painted =
      "\x1b[31m"
      "bad"
      "\x1b[0m";
  EXPECT_EQ(escape_for_terminal(painted, true, true), painted);
  EXPECT_EQ(escape_for_terminal(painted, false, true), "\\x1b[31mbad\\x1b[0m");
  EXPECT_EQ(escape_for_terminal("\x1b[38;5;1m", true, true), "\\x1b[38;5;1m");
}

// Runs `write` on a Printer over a pipe and returns what it wrote.
template <typename Write>
std::string through_pipe(const Environment& env, Write write) {
  int fds[2];
#ifdef _WIN32
  EXPECT_EQ(::_pipe(fds, 1 << 16, _O_BINARY), 0);
#else
  EXPECT_EQ(::pipe(fds), 0);
#endif
  std::FILE* stream = ::fdopen(fds[1], "w");
  {
    Printer printer(stream, env);
    write(printer);
  }
  std::fclose(stream);
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) out.append(buffer, static_cast<std::size_t>(n));
  ::close(fds[0]);
  return out;
}

TEST(Printer, NoColorBeatsCliColorForce) {
  auto text = [](Printer& p) { p.line(p.paint("x", Colour::red)); };
  EXPECT_EQ(through_pipe({{"CLICOLOR_FORCE", "1"}}, text), "\x1b[31mx\x1b[0m\n");
  EXPECT_EQ(through_pipe({{"CLICOLOR_FORCE", "1"}, {"NO_COLOR", "1"}}, text), "x\n");
  EXPECT_EQ(through_pipe({{"CLICOLOR_FORCE", "0"}}, text), "x\n");
  EXPECT_EQ(through_pipe({}, text), "x\n");
}

TEST(Printer, LineEscapesWhatItWrites) {
  auto text = [](Printer& p) { p.line("member \x1b]8;;http://evil\x1b\\link"); };
  EXPECT_EQ(through_pipe({{"CLICOLOR_FORCE", "1"}}, text), "member \\x1b]8;;http://evil\\x1b\\link\n");
}

TEST(Printer, CharsetFollowsTheLocaleVariablesInPosixOrder) {
  EXPECT_EQ(charset_from({{"LANG", "en_US.UTF-8"}}), Charset::utf8);
  EXPECT_EQ(charset_from({{"LC_ALL", "C"}, {"LANG", "en_US.UTF-8"}}), Charset::ascii);
  EXPECT_EQ(charset_from({{"LC_CTYPE", "de_DE.utf8"}, {"LANG", "C"}}), Charset::utf8);
  EXPECT_EQ(charset_from({{"LC_ALL", ""}, {"LANG", "C.UTF-8"}}), Charset::utf8);
  EXPECT_EQ(charset_from({{"LANG", "POSIX"}}), Charset::ascii);
  EXPECT_EQ(charset_from({}), Charset::ascii);
  auto mark = [](Printer& p) { p.line(std::string(p.symbol("[✓]", "[ok]"))); };
  EXPECT_EQ(through_pipe({{"LC_ALL", "C"}, {"LANG", "en_US.UTF-8"}}, mark), "[ok]\n");
  EXPECT_EQ(through_pipe({{"LANG", "en_US.UTF-8"}}, mark), "[✓]\n");
}

TEST(Printer, CutToColumnsCountsCodePointsAndClosesColour) {
  EXPECT_EQ(cut_to_columns("abcdef", 4), "abcd");
  EXPECT_EQ(cut_to_columns("ab✓def", 4), "ab✓d");
  EXPECT_EQ(cut_to_columns("日本語", 5), "日本");
  EXPECT_EQ(cut_to_columns("\x1b[33m"
                           "abcdef"
                           "\x1b[0m",
                           3),
            "\x1b[33m"
            "abc"
            "\x1b[0m");
  EXPECT_EQ(cut_to_columns("abc", 10), "abc");
}

#ifndef _WIN32
TEST(Printer, StatusLineIsCutToTheWidthOfARealTerminal) {
  TORCHFIX_LINUX_ONLY("a POSIX pseudo-terminal (posix_openpt, TIOCSWINSZ)");
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  struct winsize size {};
  size.ws_col = 30;
  size.ws_row = 10;
  ASSERT_EQ(::ioctl(slave, TIOCSWINSZ, &size), 0);
  std::FILE* stream = ::fdopen(slave, "w");
  {
    Printer printer(stream, {{"TERM", "xterm"}, {"COLUMNS", "200"}});
    ASSERT_TRUE(printer.smart());
    EXPECT_EQ(printer.width(), 30);
    printer.status("[3/5 build, 8 jobs] [120/4000] 1m05s, ETA 35m00s and a long tail that would wrap");
  }
  std::fclose(stream);
  std::string out;
  char buffer[4096];
  const ssize_t n = ::read(master, buffer, sizeof buffer);
  ::close(master);
  ASSERT_GT(n, 0);
  out.assign(buffer, static_cast<std::size_t>(n));
  ASSERT_TRUE(out.starts_with("\r\x1b[K")) << out;
  EXPECT_EQ(out.substr(4), "[3/5 build, 8 jobs] [120/4000");  // 29 columns: the last one stays free
}
#endif

}  // namespace
}  // namespace torchfix
