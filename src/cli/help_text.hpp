#pragma once
// The parts of --help that CLI11 does not write from the option definitions.

#include <CLI/CLI.hpp>

namespace torchfix::cli {

/// Gives every option of `app` and its commands a named placeholder
/// ("--gpu NAME|X.Y", "--python PATH") instead of CLI11's TEXT, and each
/// command a footer: the options every command takes (-v, -q, --color),
/// examples, the environment variables it reads and the exit codes.
/// Call after every command is added.
void describe_commands(CLI::App& app);

}  // namespace torchfix::cli
