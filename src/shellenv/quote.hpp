#pragma once
// Quoting of arbitrary values for each shell, so that a snippet line sets the
// variable to exactly the value's bytes: spaces, quotes, '$', backslashes,
// newlines, control bytes, non-ASCII and even invalid UTF-8 survive.
//
// Sources: bash manual, "Quoting" (single quotes; ANSI-C $'...' with \xHH);
// zsh manual, "Quoting" (same two forms); fish documentation, "Quotes" and
// "Escaping characters" (only \' and \\ inside single quotes; \xHH for ASCII
// and \XHH for a raw byte outside quotes); PowerShell's about_Quoting_Rules
// (single quotes, a quote doubled; the typographic quotes U+2018-U+201B count
// as single quotes too); cmd's `set /?` (`set "NAME=value"`, %NAME%
// expanded everywhere).

#include <optional>
#include <string>
#include <string_view>

#include "core/base/error.hpp"

namespace torchfix::shellenv {

/// Names the shells torchfix writes snippets for (PowerShell and cmd: Windows).
enum class Shell { bash, zsh, fish, powershell, cmd };

/// Returns "bash", "zsh", "fish", "powershell" or "cmd".
std::string_view to_string(Shell shell);
/// Parses "bash", "zsh", "fish", "powershell" (or "pwsh", PowerShell 7's
/// program name) or "cmd"; errors name the value and the choices.
Expected<Shell> parse_shell(std::string_view text);
/// Returns a program's file name lower-cased and without a final ".exe"
/// ("PWSH.EXE" -> "pwsh"): Windows names programs case-insensitively.
std::string program_stem(std::string_view file_name);
/// Returns the shell a program is, from its file name ("bash", "cmd.exe",
/// "pwsh.exe", "powershell.exe"); nullopt for any other program.
std::optional<Shell> shell_of_program(std::string_view file_name);

/// Returns `value` as one shell word that evaluates to exactly its bytes in
/// `shell`: bare when it holds only [A-Za-z0-9_+=:,./-] (not starting with
/// '='), else single-quoted. The result is always on one line: newlines and other control
/// bytes, and bytes that are not valid UTF-8, become escapes ($'\n' in
/// bash/zsh, \n outside quotes in fish), so the word is valid UTF-8 text.
/// Errors: `value` holds a NUL byte (no environment variable can).
/// PowerShell: always single-quoted ('' for a quote), control bytes as
/// `+ [char]0xHH +` between quoted runs; errors: invalid UTF-8 (a Windows
/// variable is UTF-16 text). cmd: the value as it is, for `set "NAME=value"`
/// and `%NAME:value;=%`; errors: a '"', '%', '=' or control byte, or
/// invalid UTF-8, which cmd cannot take literally (use PowerShell).
Expected<std::string> quote(Shell shell, std::string_view value);

}  // namespace torchfix::shellenv
