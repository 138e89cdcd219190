#pragma once
// The parts of --help that CLI11 does not write from the option definitions.

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace torchfix::cli {

/// Gives every option of `app` and its commands a named placeholder
/// ("--gpu NAME|X.Y", "--python PATH") instead of CLI11's TEXT, and each
/// command a footer: the options every command takes (-v, -q, --color),
/// examples, the environment variables it reads and the exit codes.
/// Call after every command is added.
void describe_commands(CLI::App& app);

/// Returns the placeholder `option` shows ("FILE", "NAME|X.Y"), without
/// the names CLI11 adds for its validators ("FILE:FILE"); "" for a flag.
std::string option_placeholder(const CLI::Option& option);

/// Returns the examples of command `name` ("  torchfix doctor ...  what
/// it does", one a line), or "" for a command without any.
std::string command_examples(std::string_view name);

/// Returns the environment variables command `name` reads, one a line,
/// those every command reads (TORCHFIX_DATA_DIR, NO_COLOR) included.
std::string command_environment(std::string_view name);

}  // namespace torchfix::cli
