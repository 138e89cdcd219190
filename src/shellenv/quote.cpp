#include "shellenv/quote.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <vector>

#include "shellenv/utf8.hpp"

namespace torchfix::shellenv {
namespace {

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7F;
}

// Values made only of these bytes mean themselves unquoted in all three
// shells (paths, numbers, arch lists like 8.6;12.0 are not: ';' is out), so
// the snippet stays readable. A leading '=' is excluded: zsh expands "=cmd"
// at the start of a word (EQUALS option).
bool is_bare_word(std::string_view value) {
  if (value.front() == '=') return false;
  return std::ranges::all_of(value, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_+=:,./-").find(c) != std::string_view::npos;
  });
}

std::string hex_byte(unsigned char c) {
  std::array<char, 3> buf{};
  std::snprintf(buf.data(), buf.size(), "%02X", c);
  return std::string(buf.data(), 2);
}

// One escape outside quotes for a byte that must not appear raw: a control
// byte (a newline would split the snippet line) or a byte of invalid UTF-8
// (which would make the rc file "not text").
std::string escape_byte(Shell shell, unsigned char c) {
  if (shell == Shell::fish) {
    if (c == '\n') return "\\n";
    if (c == '\t') return "\\t";
    // fish: \xHH is an ASCII character, \XHH a raw byte (any value).
    return (c < 0x80 ? "\\x" : "\\X") + hex_byte(c);
  }
  if (c == '\n') return "$'\\n'";
  if (c == '\t') return "$'\\t'";
  return "$'\\x" + hex_byte(c) + "'";
}

// A run of bytes that may stand inside single quotes as they are.
std::string single_quoted(Shell shell, std::string_view run) {
  std::string out = "'";
  for (char c : run) {
    if (shell == Shell::fish) {
      // Inside fish single quotes only \\ and \' are escapes.
      if (c == '\\' || c == '\'') out += '\\';
      out += c;
    } else if (c == '\'') {
      // bash/zsh single quotes have no escapes: close, escaped quote, reopen.
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

// PowerShell takes U+2018, U+2019, U+201A and U+201B as single quotes:
// each is doubled like '.
bool powershell_quote_at(std::string_view value, std::size_t i, std::size_t len) {
  if (len == 1) return value[i] == '\'';
  return len == 3 && value.substr(i, 2) == "\xE2\x80" && static_cast<unsigned char>(value[i + 2]) >= 0x98 &&
         static_cast<unsigned char>(value[i + 2]) <= 0x9B;
}

Expected<std::string> quote_powershell(std::string_view value) {
  std::vector<std::string> parts;
  std::string run;
  bool in_run = false;
  for (std::size_t i = 0; i < value.size();) {
    const auto c = static_cast<unsigned char>(value[i]);
    const std::size_t len = utf8_length_at(value, i);
    if (len == 0) return fail("the value is not valid UTF-8, which a Windows environment variable cannot hold");
    if (is_control(c)) {
      if (in_run || parts.empty()) parts.push_back("'" + run + "'");
      parts.push_back("[char]0x" + hex_byte(c));
      run.clear();
      in_run = false;
      i += 1;
      continue;
    }
    const std::string_view piece = value.substr(i, len);
    run += piece;
    if (powershell_quote_at(value, i, len)) run += piece;
    in_run = true;
    i += len;
  }
  if (in_run || parts.empty()) parts.push_back("'" + run + "'");
  std::string out = parts.front();
  for (std::size_t k = 1; k < parts.size(); ++k) out += " + " + parts[k];
  return out;
}

Expected<std::string> quote_cmd(std::string_view value) {
  for (std::size_t i = 0; i < value.size();) {
    const auto c = static_cast<unsigned char>(value[i]);
    const std::size_t len = utf8_length_at(value, i);
    if (len == 0 || is_control(c) || c == '"' || c == '%' || c == '=') {
      return fail(
          "cmd cannot set this value literally (it holds a '\"', '%', '=', a control byte or invalid UTF-8); "
          "use --shell powershell");
    }
    i += len;
  }
  return std::string(value);
}

}  // namespace

std::string_view to_string(Shell shell) {
  switch (shell) {
    case Shell::bash:
      return "bash";
    case Shell::zsh:
      return "zsh";
    case Shell::fish:
      return "fish";
    case Shell::powershell:
      return "powershell";
    case Shell::cmd:
      return "cmd";
  }
  return "bash";
}

Expected<Shell> parse_shell(std::string_view text) {
  for (Shell s : {Shell::bash, Shell::zsh, Shell::fish, Shell::powershell, Shell::cmd}) {
    if (to_string(s) == text) return s;
  }
  if (text == "pwsh") return Shell::powershell;
  return fail("unknown shell '" + std::string(text) + "'; choose bash, zsh, fish, powershell or cmd");
}

std::string program_stem(std::string_view file_name) {
  std::string name(file_name);
  std::ranges::transform(name, name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.ends_with(".exe")) name.resize(name.size() - 4);
  return name;
}

std::optional<Shell> shell_of_program(std::string_view file_name) {
  auto shell = parse_shell(program_stem(file_name));
  return shell ? std::optional<Shell>(*shell) : std::nullopt;
}

Expected<std::string> quote(Shell shell, std::string_view value) {
  if (value.find('\0') != std::string_view::npos) {
    return fail("a value with a NUL byte cannot be an environment variable; this is a bug in torchfix");
  }
  if (shell == Shell::powershell) return quote_powershell(value);
  if (shell == Shell::cmd) return quote_cmd(value);
  if (value.empty()) return std::string("''");
  if (is_bare_word(value)) return std::string(value);
  std::string out;
  std::size_t run_start = 0;
  std::size_t i = 0;
  const auto flush = [&] {
    if (i > run_start) out += single_quoted(shell, value.substr(run_start, i - run_start));
  };
  while (i < value.size()) {
    const auto c = static_cast<unsigned char>(value[i]);
    const std::size_t len = utf8_length_at(value, i);
    if (len == 0 || is_control(c)) {
      flush();
      out += escape_byte(shell, c);
      run_start = ++i;
    } else {
      i += len;
    }
  }
  flush();
  return out;
}

}  // namespace torchfix::shellenv
