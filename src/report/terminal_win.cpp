// report/terminal.hpp on Windows (terminal_posix.cpp is the POSIX side):
// a console handle, not a redirected file or pipe, is a terminal; Windows 10
// and later render ANSI colours once ENABLE_VIRTUAL_TERMINAL_PROCESSING is on.
#include <io.h>
#include <windows.h>

#include "report/terminal.hpp"

namespace torchfix {
namespace {

HANDLE console_of(std::FILE* stream) {
  if (!stream) return INVALID_HANDLE_VALUE;
  const auto handle = reinterpret_cast<HANDLE>(::_get_osfhandle(::_fileno(stream)));
  DWORD mode = 0;
  return handle != INVALID_HANDLE_VALUE && GetConsoleMode(handle, &mode) ? handle : INVALID_HANDLE_VALUE;
}

}  // namespace

bool is_terminal(std::FILE* stream) {
  HANDLE console = console_of(stream);
  if (console == INVALID_HANDLE_VALUE) return false;
  DWORD mode = 0;
  if (GetConsoleMode(console, &mode)) SetConsoleMode(console, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING);
  return true;
}

std::optional<int> terminal_columns(std::FILE* stream) {
  HANDLE console = console_of(stream);
  CONSOLE_SCREEN_BUFFER_INFO info{};
  if (console == INVALID_HANDLE_VALUE || !GetConsoleScreenBufferInfo(console, &info)) return std::nullopt;
  const int columns = info.srWindow.Right - info.srWindow.Left + 1;
  return columns > 0 ? std::optional(columns) : std::nullopt;
}

}  // namespace torchfix
