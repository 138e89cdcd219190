#pragma once
// Quoting of the commands torchfix prints as fixes, for the shell that will
// run them: POSIX shells (sh, bash, zsh, dash) on Linux, macOS and WSL2,
// PowerShell for a Windows interpreter, and cmd.exe. Every printed command is
// built by command_line / set_env_command for one of them. Pure: text in, text out.
//
// Sources: POSIX.1-2017 Shell Command Language, 2.2.2 "Single-Quotes" (no
// escapes inside; a quote is written '\''); PowerShell about_Quoting_Rules
// (single-quoted strings are verbatim; a quote is written twice, and the
// typographic quotes U+2018..U+201B count as quotes too); cmd.exe (`cmd /?`,
// `set /?`: single quotes are ordinary characters, double quotes group, ^
// escapes outside quotes; programs split their command line by the Microsoft
// C runtime rules, where \" is a literal quote).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchfix {

/// Names the shell a fix command is written for.
enum class CommandShell {
  posix,       // sh, bash, zsh: Linux, macOS, WSL2
  powershell,  // Windows (the default there)
  cmd,         // Windows cmd.exe
};

/// Returns `word` as one POSIX shell word meaning exactly its bytes: bare when
/// it holds only [A-Za-z0-9_+=:,./@%-] and does not start with '=' or '-',
/// else in single quotes with each ' written '\''. "" gives ''.
std::string quote_posix(std::string_view word);

/// Returns `word` as one PowerShell argument meaning exactly its text: bare
/// when it holds only [A-Za-z0-9_.:/\-] (an option like -m stays bare), else in
/// single quotes with each quote character (', U+2018..U+201B) doubled.
std::string quote_powershell(std::string_view word);

/// Returns `word` as one cmd.exe argument meaning exactly its text: bare when
/// it holds only [A-Za-z0-9_.:/\\=+,@-], else in double quotes with each "
/// written \" and each % written "^%" (cmd expands %NAME% even inside quotes).
std::string quote_cmd(std::string_view word);

/// Returns `word` quoted for `shell` (quote_posix, quote_powershell or quote_cmd).
std::string quote_word(CommandShell shell, std::string_view word);

/// Returns `argv` as one command line for `shell`, each word quoted (an option
/// such as -m or --index-url stays bare: the program sees the same word); in
/// PowerShell a first word that needs quotes is run with the call operator
/// (& 'C:\Program Files\x.exe' ...).
std::string command_line(CommandShell shell, const std::vector<std::string>& argv);

/// Returns the command that sets environment variable `name` to `value` for
/// the rest of the session: `export NAME=value` (POSIX) or
/// `$env:NAME = 'value'` (PowerShell) or `set "NAME=value"` (cmd, with each %
/// written "^%" outside the quotes). `name` must be a valid identifier.
std::string set_env_command(CommandShell shell, std::string_view name, std::string_view value);

/// Returns what goes before a command on the same line so that it runs with
/// `env` set: `A=1 B=2 ` (POSIX: for that command only), `$env:A = '1'; `
/// (PowerShell) or `set "A=1" && ` (cmd, where `;` separates nothing); the
/// PowerShell and cmd forms leave the variables set in the session. "" when
/// `env` is empty. One line, so "Run first" and copy-paste take it whole.
std::string env_prefix(CommandShell shell, const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace torchfix
