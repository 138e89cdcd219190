#include "report/printer.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>

#include "report/terminal.hpp"

namespace torchfix {
namespace {

// The errno of the first failed write of any Printer (ENOSPC for
// `doctor --json > /dev/full`), for main() to report.
int g_write_error = 0;

// The colour sequences paint() writes; the only escapes passed through.
constexpr std::array<std::string_view, 6> k_colour_codes = {"\x1b[0m",  "\x1b[1m",  "\x1b[2m",
                                                            "\x1b[31m", "\x1b[32m", "\x1b[33m"};

std::string_view colour_code_at(std::string_view text, std::size_t at) {
  for (std::string_view code : k_colour_codes) {
    if (text.substr(at, code.size()) == code) return code;
  }
  return {};
}

// Decodes one UTF-8 sequence at `at` (RFC 3629: no overlongs, no surrogates,
// at most U+10FFFF); returns its length and code point, or length 0.
std::pair<std::size_t, char32_t> decode_utf8(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  std::size_t length = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if (lead < 0x80) return {1, lead};
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, cp = lead & 0x1f, min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, cp = lead & 0x0f, min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return {0, 0};
  }
  if (at + length > text.size()) return {0, 0};
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return {0, 0};
    cp = (cp << 6) | (byte(at + i) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {0, 0};
  return {length, cp};
}

// Code points that change how a terminal or a bidi-aware viewer shows the
// text around them (Unicode TR9 explicit formatting characters; CVE-2021-42574).
bool is_bidi_control(char32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
         cp == 0x061c;
}

void append_hex(std::string& out, std::string_view prefix, unsigned value, int digits) {
  out += prefix;
  char buffer[8];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, 16);
  for (int pad = digits - static_cast<int>(end - buffer); pad > 0; --pad) out += '0';
  out.append(buffer, end);
}

// East Asian wide and emoji blocks take two columns (UAX #11, the W and F
// ranges in their bulk); everything else one. Enough to keep a status line
// from wrapping.
int columns_of(char32_t cp) {
  if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) ||
      (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
      (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1faff) || (cp >= 0x20000 && cp <= 0x3fffd)) {
    return 2;
  }
  return 1;
}

int terminal_width(std::FILE* stream, const Environment& env) {
  if (auto columns = terminal_columns(stream)) return *columns;
  if (auto columns = env.find("COLUMNS"); columns != env.end()) {
    int value = 0;
    const auto& text = columns->second;
    if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        ec == std::errc() && end == text.data() + text.size() && value > 0) {
      return value;
    }
  }
  return 80;
}

}  // namespace

std::string escape_for_terminal(std::string_view text, bool colour, bool keep_newline) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto c = static_cast<unsigned char>(text[at]);
    if (c == 0x1b && colour) {
      if (std::string_view code = colour_code_at(text, at); !code.empty()) {
        out += code;
        at += code.size();
        continue;
      }
    }
    if (c == '\t' || (c == '\n' && keep_newline)) {
      out += static_cast<char>(c);
      ++at;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      append_hex(out, "\\x", c, 2);
      ++at;
      continue;
    }
    auto [length, cp] = decode_utf8(text, at);
    if (length == 0) {
      // Not UTF-8: a raw 0x9b is CSI to an 8-bit terminal.
      append_hex(out, "\\x", c, 2);
      ++at;
      continue;
    }
    if ((cp >= 0x80 && cp <= 0x9f) || is_bidi_control(cp)) {
      append_hex(out, "\\u", static_cast<unsigned>(cp), 4);
    } else {
      out.append(text.substr(at, length));
    }
    at += length;
  }
  return out;
}

Charset charset_from(const Environment& env) {
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) continue;
    std::string lower;
    for (char ch : it->second) {
      if (ch != '-' && ch != '_') lower += static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    }
    return lower.find("utf8") != std::string::npos ? Charset::utf8 : Charset::ascii;
  }
  return Charset::ascii;
}

std::string cut_to_columns(std::string_view text, int columns) {
  std::string out;
  int used = 0;
  bool painted = false;
  for (std::size_t at = 0; at < text.size();) {
    if (std::string_view code = colour_code_at(text, at); !code.empty()) {
      out += code;
      painted = code != "\x1b[0m";
      at += code.size();
      continue;
    }
    auto [length, cp] = decode_utf8(text, at);
    if (length == 0) length = 1;
    const int width = columns_of(cp);
    if (used + width > columns) break;
    used += width;
    out.append(text.substr(at, length));
    at += length;
  }
  if (painted) out += "\x1b[0m";
  return out;
}

Printer::Printer(std::FILE* stream, const Environment& env) : m_stream(stream) {
  auto term = env.find("TERM");
  const bool tty = is_terminal(stream);
  m_smart = tty && term != env.end() && term->second != "dumb";
  m_colour = m_smart;
  // CLICOLOR_FORCE forces colour into pipes; NO_COLOR is the user saying no
  // to colour anywhere, so it wins (no-color.org: "regardless of its value").
  if (auto force = env.find("CLICOLOR_FORCE"); force != env.end() && !force->second.empty() && force->second != "0")
    m_colour = true;
  if (auto clicolor = env.find("CLICOLOR"); clicolor != env.end() && clicolor->second == "0") m_colour = false;
  if (auto no_colour = env.find("NO_COLOR"); no_colour != env.end() && !no_colour->second.empty()) m_colour = false;
  m_charset = charset_from(env);
  m_width = terminal_width(tty ? stream : nullptr, env);
}

void Printer::write(std::string_view text, bool keep_newline) {
  if (m_status_shown) std::fputs("\r\x1b[K", m_stream);
  m_status_shown = false;
  const std::string safe = escape_for_terminal(text, m_colour, keep_newline);
  std::fwrite(safe.data(), 1, safe.size(), m_stream);
  std::fputc('\n', m_stream);
  // EPIPE (`torchfix doctor | head -1`) is the reader's choice, not a failure.
  if (std::fflush(m_stream) != 0 && m_stream == stdout && g_write_error == 0 && errno != EPIPE) g_write_error = errno;
}

void Printer::line(std::string_view text) {
  write(text, false);
}

void Printer::block(std::string_view text) {
  write(text, true);
}

int first_write_error() {
  return g_write_error;
}

void Printer::status(std::string_view text) {
  if (!m_smart) {
    line(text);
    return;
  }
  // One column is kept free: a line that fills the last column wraps on
  // some terminals, and the \r of the next update would then clear only the
  // second row.
  const std::string safe = cut_to_columns(escape_for_terminal(text, m_colour, false), std::max(1, m_width - 1));
  std::fputs("\r\x1b[K", m_stream);
  std::fwrite(safe.data(), 1, safe.size(), m_stream);
  std::fflush(m_stream);
  m_status_shown = true;
}

std::string_view Printer::symbol(std::string_view utf8, std::string_view ascii) const {
  return m_charset == Charset::utf8 ? utf8 : ascii;
}

std::string Printer::paint(std::string_view text, Colour colour) const {
  if (!m_colour || colour == Colour::none) return std::string(text);
  const char* code = "";
  switch (colour) {
    case Colour::red:
      code = "\x1b[31m";
      break;
    case Colour::green:
      code = "\x1b[32m";
      break;
    case Colour::yellow:
      code = "\x1b[33m";
      break;
    case Colour::bold:
      code = "\x1b[1m";
      break;
    case Colour::dim:
      code = "\x1b[2m";
      break;
    case Colour::none:
      break;
  }
  return std::string(code) + std::string(text) + "\x1b[0m";
}

}  // namespace torchfix
