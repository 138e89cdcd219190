#pragma once
// Mistakes on the command line, said as torchfix says every error: one line
// "torchfix <command>: what was wrong; what to do", with "did you mean" for a
// mistyped option or command. The usage is printed only when asked for.

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace torchfix::cli {

/// Returns the names of the options `cmd` accepts ("--json", "-v"), with
/// those of its parents (fallthrough lets `torchfix doctor -v` through).
std::vector<std::string> option_names(const CLI::App& cmd);

/// Returns the one-line error for an option nobody defines ("--jsn"): the
/// nearest of `cmd`'s options when one is near, else where the options are
/// listed. `command` is the prefix ("torchfix doctor").
std::string unknown_option_line(const std::string& command, const std::string& option, const CLI::App& cmd);

/// Returns the one-line error for CLI11's `error` raised while parsing the
/// arguments of `cmd` (named `command` in the message): each argument
/// nobody takes, a missing or bad value, a missing option, said as torchfix
/// says it, with a hint where `command --help` explains more.
std::string parse_error_line(const std::string& command, const CLI::ParseError& error, const CLI::App& cmd);

/// Returns the one-line error for a command word nobody defines ("doktor"),
/// with the nearest command when one is near.
std::string unknown_command_line(const std::string& word, const CLI::App& app);

}  // namespace torchfix::cli
