#include "core/base/quote.hpp"

#include <algorithm>

namespace torchfix {
namespace {

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool bare_posix(std::string_view word) {
  if (word.empty() || word.front() == '=' || word.front() == '-') return false;
  return std::ranges::all_of(
      word, [](char c) { return is_alnum(c) || std::string_view("_+=:,./@%-").find(c) != std::string_view::npos; });
}

bool bare_powershell(std::string_view word) {
  if (word.empty()) return false;
  return std::ranges::all_of(
      word, [](char c) { return is_alnum(c) || std::string_view("_.:/\\-").find(c) != std::string_view::npos; });
}

bool bare_cmd(std::string_view word) {
  if (word.empty()) return false;
  return std::ranges::all_of(
      word, [](char c) { return is_alnum(c) || std::string_view("_.:/\\=+,@-").find(c) != std::string_view::npos; });
}

// An option word (-m, --index-url) that is otherwise bare.
bool bare_option(CommandShell shell, std::string_view word) {
  if (word.size() < 2 || word.front() != '-') return false;
  const std::string_view rest = word.substr(1);
  switch (shell) {
    case CommandShell::posix:
      return std::ranges::all_of(
          rest, [](char c) { return is_alnum(c) || std::string_view("_+=:,./@%-").find(c) != std::string_view::npos; });
    case CommandShell::powershell:
      return bare_powershell(word);
    case CommandShell::cmd:
      return bare_cmd(word);
  }
  return false;
}

// `text` inside cmd double quotes: \" for a quote, and % outside the quotes, escaped.
std::string cmd_quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') {
      out += "\\\"";
    } else if (c == '%') {
      out += "\"^%\"";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::string quote_cmd(std::string_view word) {
  if (bare_cmd(word)) return std::string(word);
  return cmd_quoted(word);
}

std::string quote_posix(std::string_view word) {
  if (bare_posix(word)) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";  // close, an escaped quote, reopen: single quotes have no escapes
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string quote_powershell(std::string_view word) {
  if (bare_powershell(word)) return std::string(word);
  std::string out = "'";
  for (std::size_t i = 0; i < word.size(); ++i) {
    // U+2018..U+201B are E2 80 98..9B in UTF-8; PowerShell treats them as '.
    if (word[i] == '\'') {
      out += "''";
    } else if (i + 2 < word.size() && static_cast<unsigned char>(word[i]) == 0xE2 &&
               static_cast<unsigned char>(word[i + 1]) == 0x80 && static_cast<unsigned char>(word[i + 2]) >= 0x98 &&
               static_cast<unsigned char>(word[i + 2]) <= 0x9B) {
      out += std::string(word.substr(i, 3)) + std::string(word.substr(i, 3));
      i += 2;
    } else {
      out += word[i];
    }
  }
  return out + "'";
}

std::string quote_word(CommandShell shell, std::string_view word) {
  switch (shell) {
    case CommandShell::posix:
      return quote_posix(word);
    case CommandShell::powershell:
      return quote_powershell(word);
    case CommandShell::cmd:
      return quote_cmd(word);
  }
  return quote_posix(word);
}

std::string command_line(CommandShell shell, const std::vector<std::string>& argv) {
  std::string out;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string word = bare_option(shell, argv[i]) ? argv[i] : quote_word(shell, argv[i]);
    if (i == 0 && shell == CommandShell::powershell && word != argv[i]) {
      out = "& " + word;
      continue;
    }
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

std::string set_env_command(CommandShell shell, std::string_view name, std::string_view value) {
  if (shell == CommandShell::powershell) {
    std::string quoted = quote_powershell(value);
    if (quoted.front() != '\'') quoted = "'" + quoted + "'";  // a bare word would be a command, not a string
    return "$env:" + std::string(name) + " = " + quoted;
  }
  if (shell == CommandShell::cmd) return "set " + cmd_quoted(std::string(name) + "=" + std::string(value));
  return "export " + std::string(name) + "=" + quote_posix(value);
}

std::string env_prefix(CommandShell shell, const std::vector<std::pair<std::string, std::string>>& env) {
  std::string prefix;
  for (const auto& [name, value] : env) {
    switch (shell) {
      case CommandShell::posix:
        prefix += name + "=" + quote_posix(value) + " ";
        break;
      case CommandShell::powershell:
        prefix += set_env_command(shell, name, value) + "; ";
        break;
      case CommandShell::cmd:
        prefix += set_env_command(shell, name, value) + " && ";
        break;
    }
  }
  return prefix;
}

}  // namespace torchfix
