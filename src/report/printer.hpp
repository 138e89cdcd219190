#pragma once
// The one place that writes user-visible lines to the terminal.

#include <cstdio>
#include <string>
#include <string_view>

#include "probe/process.hpp"

namespace torchfix {

/// Names the colours the printer knows; rendered only on a colour terminal.
enum class Colour { none, red, green, yellow, bold, dim };

/// Writes lines to a stream, with colour and a live status line only on a
/// smart terminal (isatty && TERM != dumb), honouring NO_COLOR and
/// CLICOLOR_FORCE (https://no-color.org, https://bixense.com/clicolors/).
class Printer {
 public:
  /// Wraps `stream`; decides smartness from the stream and `env` once.
  Printer(std::FILE* stream, const Environment& env);
  virtual ~Printer() = default;

  /// Writes `text` and a newline (clearing a live status line first).
  virtual void line(std::string_view text);
  /// Replaces the live status line (smart terminals), or prints it as a line.
  virtual void status(std::string_view text);
  /// Wraps `text` in the escape codes of `colour` when colour is on.
  std::string paint(std::string_view text, Colour colour) const;

  bool smart() const { return m_smart; }
  bool colour() const { return m_colour; }

 private:
  std::FILE* m_stream;
  bool m_smart = false;
  bool m_colour = false;
  bool m_status_shown = false;
};

}  // namespace torchfix
