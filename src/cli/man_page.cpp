// torchfix man: the man page written from the same CLI11 definitions and
// help texts as --help, so that a new option reaches both at once. The
// copy that packages install (packaging/man/torchfix.1) is this output; a
// test fails when it is stale.

#include <sstream>

#include "cli/completion.hpp"
#include "cli/help_text.hpp"
#include "cli/option_groups.hpp"
#include "core/base/version_info.hpp"

namespace torchfix::cli {
namespace {

// roff: a backslash is \e, a dash \-, and a line may not start with . or '.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    line_start = c == '\n';
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

std::string option_heading(const CLI::Option& option) {
  std::string names;
  for (const std::string& s : option.get_snames()) names += (names.empty() ? "" : ", ") + ("\\fB\\-" + s + "\\fR");
  for (const std::string& l : option.get_lnames()) names += (names.empty() ? "" : ", ") + ("\\fB\\-\\-" + l + "\\fR");
  if (!option.nonpositional()) names = "\\fI" + roff(option.get_name()) + "\\fR";
  if (option.get_type_size_max() > 0 && option.nonpositional())
    names += " \\fI" + roff(option_placeholder(option)) + "\\fR";
  return names;
}

// In the groups --help shows, each under its name ("What-if:") when the
// command has more than one.
void write_options(std::ostringstream& page, const CLI::App& cmd) {
  const auto groups = grouped_options(cmd);
  for (const auto& [group, options] : groups) {
    if (groups.size() > 1) page << ".PP\n\\fI" << roff(group) << ":\\fR\n";
    for (const CLI::Option* option : options) {
      page << ".TP\n" << option_heading(*option) << "\n" << roff(option->get_description()) << "\n";
    }
  }
}

// Examples and variables are "  words  what they do" lines: kept as they
// are, in a no-fill block.
void write_block(std::ostringstream& page, std::string_view heading, const std::string& lines) {
  if (lines.empty()) return;
  page << ".PP\n" << heading << "\n.RS 2\n.nf\n" << roff(lines) << ".fi\n.RE\n";
}

}  // namespace

std::string man_page(const CLI::App& app) {
  std::ostringstream page;
  page << ".TH TORCHFIX 1 \"\" \"torchfix " << k_torchfix_version << "\" \"User Commands\"\n"
       << ".SH NAME\ntorchfix \\- " << roff(app.get_description().substr(std::string_view("torchfix: ").size()))
       << "\n.SH SYNOPSIS\n.B torchfix\n[\\fB\\-v\\fR|\\fB\\-q\\fR] [\\fB\\-\\-color\\fR \\fIWHEN\\fR] "
          "\\fICOMMAND\\fR [\\fIOPTIONS\\fR]\n.br\n.B torchfix help\n[\\fICOMMAND\\fR]\n"
       << ".SH DESCRIPTION\ntorchfix probes the GPUs, driver, CUDA toolkits, host compilers and Python environments, "
          "reads which SASS and PTX archs torch and its extensions contain, and prints the fix. "
          "\\fBtorchfix\\fR \\fICOMMAND\\fR \\fB\\-\\-help\\fR shows the same text as this page.\n"
       << ".SH OPTIONS\n";
  write_options(page, app);
  page << ".SH COMMANDS\n";
  for (const CLI::App* cmd : app.get_subcommands({})) {
    page << ".SS \"torchfix " << cmd->get_name() << "\"\n" << roff(cmd->get_description()) << "\n";
    write_options(page, *cmd);
    write_block(page, "Examples:", command_examples(cmd->get_name()));
    const std::string environment = command_environment(cmd->get_name());
    write_block(page, "Reads:", environment.substr(0, environment.size() - command_environment("").size()));
  }
  page << ".SH ENVIRONMENT\n";
  write_block(page, "Every command reads:", command_environment(""));
  page << ".SH EXIT STATUS\n.TP\n0\nno problem found\n.TP\n1\na problem was found (the report says what and the fix)\n"
          ".TP\n2\ntorchfix itself failed: bad input, an unreadable table, output that could not be written\n"
       << ".SH SEE ALSO\nThe docs/ folder of the source: doctor.md, json-schema.md, install.md.\n";
  return page.str();
}

}  // namespace torchfix::cli
