#pragma once
// Command-line entry point: parses argv, runs one subcommand, returns the exit code.

#include <CLI/CLI.hpp>

#include "cli/context.hpp"
#include "core/facts/knowledge.hpp"

namespace torchfix::cli {

/// Runs torchfix with argv; returns 0 (no problem), 1 (a problem was found),
/// 2 (torchfix itself failed: bad input, unreadable table).
int run(int argc, char** argv);

/// Returns a CLI11 check for a number of seconds: a decimal number above 0
/// and at most a day, else one line saying what was given and what to give
/// ("'abc' is not a number of seconds"), not CLI11's range with DBL_MAX.
CLI::Validator seconds_check();

/// Returns a CLI11 check for a whole number from 1 to 4096 (--jobs), with the
/// same kind of message.
CLI::Validator count_check();

/// Returns a CLI11 check for a what-if torch version: no spaces, and a
/// variant only after '+' ("'2.6.0cu124' ...; did you mean 2.6.0+cu124?").
CLI::Validator torch_version_check();

/// Returns a CLI11 check that refuses an empty value (--driver ""), naming
/// an example of what to give.
CLI::Validator non_empty_check(std::string example);

/// Checks a what-if torch's variant against the wheel table: a cuXYZ no
/// PyTorch release was built for (cu999) is bad input, not a finding.
/// Errors name the variants recipes/torch-wheels.toml knows.
Expected<void> check_torch_variant(const std::string& torch, const Knowledge& knowledge);

// Each subcommand lives in its own file and registers itself on the app.
// The callback stores its exit code in ctx.exit_code.
void add_doctor(CLI::App& app, Context& ctx);
void add_inspect(CLI::App& app, Context& ctx);
void add_build(CLI::App& app, Context& ctx);
void add_recipes(CLI::App& app, Context& ctx);
void add_env(CLI::App& app, Context& ctx);
void add_arch(CLI::App& app, Context& ctx);
void add_tune(CLI::App& app, Context& ctx);
void add_fleet(CLI::App& app, Context& ctx);
void add_fix(CLI::App& app, Context& ctx);
void add_version(CLI::App& app, Context& ctx);

/// Returns what --version and `torchfix version` print: the release and
/// distribution, then the commit, build kind, target and tables' date
/// (cmake/build-info.cmake), then where this run's tables come from for
/// `env` (embedded, or the data folder with its files' date).
std::string version_text(const Environment& env);

/// Returns where the tables of a run with `env` come from, as the third line
/// of version_text says it ("tables embedded in the binary, of DATE", or
/// the folder and its files' date; a wrong TORCHFIX_DATA_DIR's error).
std::string tables_text(const Environment& env);

}  // namespace torchfix::cli
