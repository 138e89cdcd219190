// quote() for the Windows shells (shellenv/quote.cpp): PowerShell's single
// quotes with doubled quotes (the typographic ones too) and [char] escapes
// for control bytes, and cmd's refusals. bash/zsh/fish quoting is checked by
// running the real shells (snippet_shell_test.cpp).
#include "shellenv/quote.hpp"

#include <gtest/gtest.h>

namespace torchfix::shellenv {
namespace {

std::string ps(std::string_view value) {
  auto quoted = quote(Shell::powershell, value);
  EXPECT_TRUE(quoted) << (quoted ? "" : quoted.error().message);
  return quoted ? *quoted : "";
}

TEST(QuotePowerShell, SingleQuotesWithQuotesDoubled) {
  EXPECT_EQ(ps(""), "''");
  EXPECT_EQ(ps("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8"),
            "'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.8'");
  EXPECT_EQ(ps("8.6;12.0+PTX"), "'8.6;12.0+PTX'");
  EXPECT_EQ(ps("it's $env:HOME `n"), "'it''s $env:HOME `n'");
  // U+2019 closes a PowerShell single-quoted string too: doubled.
  EXPECT_EQ(ps("O\xE2\x80\x99"
               "Brien"),
            "'O\xE2\x80\x99\xE2\x80\x99"
            "Brien'");
  EXPECT_EQ(ps("caf\xC3\xA9"), "'caf\xC3\xA9'");
}

TEST(QuotePowerShell, ControlBytesBecomeCharJoins) {
  EXPECT_EQ(ps("a\nb"), "'a' + [char]0x0A + 'b'");
  EXPECT_EQ(ps("\tx"), "'' + [char]0x09 + 'x'");
  EXPECT_EQ(ps("x\r\n"), "'x' + [char]0x0D + [char]0x0A");
  EXPECT_EQ(ps("\n"), "'' + [char]0x0A");
}

TEST(QuotePowerShell, InvalidUtf8AndNulAreRefused) {
  EXPECT_FALSE(quote(Shell::powershell, "bad\xFF"));
  EXPECT_FALSE(quote(Shell::powershell, std::string_view("a\0b", 3)));
}

TEST(QuoteCmd, PlainValuesStayAsTheyAre) {
  auto path = quote(Shell::cmd, "C:\\Program Files\\CUDA\\v12.8\\bin");
  ASSERT_TRUE(path);
  EXPECT_EQ(*path, "C:\\Program Files\\CUDA\\v12.8\\bin");
  EXPECT_EQ(quote(Shell::cmd, "8.6;12.0+PTX & echo hi").value(), "8.6;12.0+PTX & echo hi");
}

TEST(QuoteCmd, WhatCmdCannotHoldLiterallyIsRefusedPointingAtPowerShell) {
  for (std::string_view value : {"50%", "say \"hi\"", "a=b", "a\nb", "bad\xFF"}) {
    auto quoted = quote(Shell::cmd, value);
    ASSERT_FALSE(quoted) << value;
    EXPECT_NE(quoted.error().message.find("--shell powershell"), std::string::npos) << quoted.error().message;
  }
}

TEST(ParseShell, KnowsTheWindowsShells) {
  EXPECT_EQ(parse_shell("powershell").value(), Shell::powershell);
  EXPECT_EQ(parse_shell("pwsh").value(), Shell::powershell);
  EXPECT_EQ(parse_shell("cmd").value(), Shell::cmd);
  auto unknown = parse_shell("tcsh");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("bash, zsh, fish, powershell or cmd"), std::string::npos);
}

// The parent's image name picks the shell for `env --shell auto`: Windows
// names carry ".exe" in any case; other programs are no shell.
TEST(ParseShell, ShellOfProgramReadsWindowsImageNames) {
  EXPECT_EQ(shell_of_program("cmd.exe"), Shell::cmd);
  EXPECT_EQ(shell_of_program("CMD.EXE"), Shell::cmd);
  EXPECT_EQ(shell_of_program("pwsh.exe"), Shell::powershell);
  EXPECT_EQ(shell_of_program("powershell.exe"), Shell::powershell);
  EXPECT_EQ(shell_of_program("bash"), Shell::bash);
  EXPECT_EQ(shell_of_program("explorer.exe"), std::nullopt);
  EXPECT_EQ(shell_of_program("cmd.exe.bak"), std::nullopt);
  EXPECT_EQ(shell_of_program(""), std::nullopt);
  EXPECT_EQ(program_stem("PowerShell.EXE"), "powershell");
}

}  // namespace
}  // namespace torchfix::shellenv
