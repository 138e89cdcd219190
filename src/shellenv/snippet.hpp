#pragma once
// Renders a snippet from a per-shell template file (templates/env.bash,
// env.zsh, env.fish, env.ps1, env.cmd). The template syntax is documented at the top of each
// template and in docs/env.md:
//
//   ## a template comment (dropped)
//   @@ header | set | prepend | footer     starts a section
//   {{name}} {{value}} {{reason}} {{shell}} {{version}} {{purpose}}
//
// A placeholder is "{{", a lowercase name, "}}"; everything else (including
// "${" and "{{{") is copied as it is.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "probe/data_dir.hpp"
#include "shellenv/quote.hpp"
#include "shellenv/variables.hpp"

namespace torchfix::shellenv {

/// Holds the sections of one shell's template, each a block of lines ending in "\n".
struct SnippetTemplate {
  Shell shell = Shell::bash;
  std::string header;   // once, first; may use {{shell}} {{version}} {{purpose}}
  std::string set;      // per variable with VarAction::set
  std::string prepend;  // per variable with VarAction::prepend
  std::string footer;   // once, last
};

/// Describes the snippet as a whole, for the header and footer.
struct SnippetInfo {
  std::string version;                         // torchfix version
  PurposeFilter purpose = PurposeFilter::all;  // what --for asked
};

/// Parses template text for `shell`; `origin` (a file name) prefixes errors.
/// Errors (with line numbers): text before the first section, an unknown or
/// repeated section, a missing `set` or `prepend` section, an unknown
/// placeholder, a placeholder not allowed in that section.
Expected<SnippetTemplate> parse_template(std::string_view text, Shell shell, std::string_view origin);

/// Returns the file name of `shell`'s template: env.bash, env.zsh, env.fish,
/// env.ps1 (PowerShell), env.cmd.
std::string template_name(Shell shell);

/// Returns the template file of `shell` in `templates_dir`: template_name(shell).
std::filesystem::path template_path(const std::filesystem::path& templates_dir, Shell shell);

/// Reads and parses template_path(templates_dir, shell). Errors: the file
/// cannot be read, or parse_template's errors.
Expected<SnippetTemplate> load_template(const std::filesystem::path& templates_dir, Shell shell);

/// Reads and parses templates/env.<shell> of `source` (a data folder or
/// the binary's embedded copy). Errors: as load_template above.
Expected<SnippetTemplate> load_template(const DataSource& source, Shell shell);

/// Renders `vars` through `tmpl`: the header, then per variable its section
/// with the value quoted for the template's shell and the reason cut to one
/// line of valid UTF-8, then the footer. Errors: validate() or quote() refuse
/// a variable (the message names it).
Expected<std::string> render_snippet(const SnippetTemplate& tmpl, const std::vector<EnvVar>& vars,
                                     const SnippetInfo& info);

}  // namespace torchfix::shellenv
