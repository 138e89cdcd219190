#pragma once
// The one place that writes user-visible lines to the terminal.

#include <cstdio>
#include <string>
#include <string_view>

#include "probe/process.hpp"

namespace torchfix {

/// Names the colours the printer knows; rendered only on a colour terminal.
enum class Colour { none, red, green, yellow, bold, dim };

/// Says whether the terminal's character set is UTF-8 (from LC_ALL, LC_CTYPE,
/// LANG, in POSIX's order of precedence) or anything else, shown as ASCII.
enum class Charset { utf8, ascii };

/// Writes lines to a stream, with colour and a live status line only on a
/// smart terminal (isatty && TERM != dumb), honouring NO_COLOR over
/// CLICOLOR_FORCE (https://no-color.org, https://bixense.com/clicolors/).
///
/// Every line is made safe for a terminal: control characters (C0 but tab
/// and newline, DEL, C1), Unicode bidi overrides and bytes that are not
/// UTF-8 are written as visible escapes (\x1b, \u009b, \u202e, \xff), so a
/// wheel member name, a path or an environment value cannot move the cursor,
/// retitle the window or hide text. The only escape sequences that reach the
/// terminal are the colours of paint(), and only when colour is on.
class Printer {
 public:
  /// Wraps `stream`; decides smartness, colour, charset and width from the
  /// stream and `env` once.
  Printer(std::FILE* stream, const Environment& env);
  virtual ~Printer() = default;

  /// Writes `text` (escaped, see above; a newline in it too, so a GPU name,
  /// path or version holding one cannot forge a report line) and a
  /// newline, clearing a live status line first.
  virtual void line(std::string_view text);
  /// Writes `text` like line() but keeps its newlines: for text whose every
  /// line torchfix laid out (pretty JSON, where a newline inside a string is
  /// the two characters \n; help; a shell snippet of quoted values).
  virtual void block(std::string_view text);
  /// Replaces the live status line on smart terminals, cut to the terminal's
  /// width so it never wraps (a wrapped line cannot be cleared with \r);
  /// elsewhere prints it as a line.
  virtual void status(std::string_view text);
  /// Wraps `text` in the escape codes of `colour` when colour is on.
  std::string paint(std::string_view text, Colour colour) const;
  /// Returns `utf8` on a UTF-8 terminal, else `ascii` (LC_ALL=C: "[x]" for "[✗]").
  std::string_view symbol(std::string_view utf8, std::string_view ascii) const;

  bool smart() const { return m_smart; }
  bool colour() const { return m_colour; }
  Charset charset() const { return m_charset; }
  /// Returns the terminal's width in columns (TIOCGWINSZ, else COLUMNS, else 80).
  int width() const { return m_width; }

 private:
  void write(std::string_view text, bool keep_newline);
  std::FILE* m_stream;
  bool m_smart = false;
  bool m_colour = false;
  bool m_status_shown = false;
  Charset m_charset = Charset::utf8;
  int m_width = 80;
};

/// Returns the errno of the first write to standard output that failed
/// (any Printer; EPIPE does not count; 0 when none did): cli::run() turns
/// it into exit code 2 (cli/app.cpp finish_output).
int first_write_error();

/// Returns `text` with control characters, bidi overrides and invalid UTF-8
/// written as visible escapes (see Printer); keeps tab, newline when
/// `keep_newline`, and the colour sequences of Printer::paint when `colour`.
std::string escape_for_terminal(std::string_view text, bool colour, bool keep_newline);

/// Returns the charset the locale variables of `env` select: LC_ALL, else
/// LC_CTYPE, else LANG; UTF-8 when the first one set names UTF-8 (any
/// spelling: UTF-8, utf8), ASCII otherwise (unset, C, POSIX, Latin-1).
Charset charset_from(const Environment& env);

/// Returns the longest prefix of `text` (UTF-8; colour sequences take no
/// room) that fits in `columns` terminal columns, one column per code point.
std::string cut_to_columns(std::string_view text, int columns);

}  // namespace torchfix
