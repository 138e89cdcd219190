#pragma once
// Command-line entry point: parses argv, runs one subcommand, returns the exit code.

#include <CLI/CLI.hpp>

#include "cli/context.hpp"

namespace torchfix::cli {

/// Runs torchfix with argv; returns 0 (no problem), 1 (a problem was found),
/// 2 (torchfix itself failed: bad input, unreadable table).
int run(int argc, char** argv);

// Each subcommand lives in its own file and registers itself on the app.
// The callback stores its exit code in ctx.exit_code.
void add_doctor(CLI::App& app, Context& ctx);
void add_inspect(CLI::App& app, Context& ctx);
void add_build(CLI::App& app, Context& ctx);
void add_recipes(CLI::App& app, Context& ctx);
void add_env(CLI::App& app, Context& ctx);
void add_arch(CLI::App& app, Context& ctx);
void add_tune(CLI::App& app, Context& ctx);

}  // namespace torchfix::cli
