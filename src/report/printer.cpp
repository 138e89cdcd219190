#include "report/printer.hpp"

#include <unistd.h>

namespace torchfix {

Printer::Printer(std::FILE* stream, const Environment& env) : m_stream(stream) {
  auto term = env.find("TERM");
  const bool tty = stream && ::isatty(::fileno(stream));
  m_smart = tty && term != env.end() && term->second != "dumb";
  m_colour = m_smart;
  if (env.contains("NO_COLOR") && !env.at("NO_COLOR").empty()) m_colour = false;
  if (auto force = env.find("CLICOLOR_FORCE"); force != env.end() && force->second != "0") m_colour = true;
}

void Printer::line(std::string_view text) {
  if (m_status_shown) std::fputs("\r\x1b[K", m_stream);
  m_status_shown = false;
  std::fwrite(text.data(), 1, text.size(), m_stream);
  std::fputc('\n', m_stream);
  std::fflush(m_stream);
}

void Printer::status(std::string_view text) {
  if (!m_smart) {
    line(text);
    return;
  }
  std::fputs("\r\x1b[K", m_stream);
  std::fwrite(text.data(), 1, text.size(), m_stream);
  std::fflush(m_stream);
  m_status_shown = true;
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
