#pragma once
// The terminal facts the Printer needs, from the operating system: whether
// a stream is a terminal and how wide it is. terminal_posix.cpp (isatty,
// TIOCGWINSZ) or terminal_win.cpp (the console API). Internal to src/report.

#include <cstdio>
#include <optional>

namespace torchfix {

/// Says whether `stream` (may be null: false) writes to a terminal. On
/// Windows a console also gets ANSI escape processing turned on.
bool is_terminal(std::FILE* stream);

/// Returns the width in columns of the terminal `stream` writes to; nullopt
/// when it is not a terminal or does not say.
std::optional<int> terminal_columns(std::FILE* stream);

}  // namespace torchfix
