#pragma once
// The groups each subcommand's options are shown in ("What-if", "Output",
// ...), for --help and the man page alike.

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

namespace torchfix::cli {

/// Puts each option of command `cmd` into its group from the table in
/// option_groups.cpp; an option the table does not name stays in CLI11's
/// "Options" group (with --help).
void group_options(CLI::App& cmd);

/// Returns the option groups of `cmd` in the order --help shows them (the
/// order each first appears in), each with its options but --help.
std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> grouped_options(const CLI::App& cmd);

}  // namespace torchfix::cli
