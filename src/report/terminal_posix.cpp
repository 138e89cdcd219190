// report/terminal.hpp on POSIX (terminal_win.cpp is the Windows side).
#include <sys/ioctl.h>
#include <unistd.h>

#include "report/terminal.hpp"

namespace torchfix {

bool is_terminal(std::FILE* stream) {
  return stream && ::isatty(::fileno(stream));
}

std::optional<int> terminal_columns(std::FILE* stream) {
  struct winsize size {};
  if (stream && ::ioctl(::fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return std::nullopt;
}

}  // namespace torchfix
