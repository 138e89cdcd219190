#pragma once
// What every subcommand gets from main: the environment, a process runner and
// the printers. Subcommands never read the process environment themselves.

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "probe/process.hpp"
#include "report/printer.hpp"

namespace torchfix::cli {

/// Holds the process-wide inputs of one torchfix run.
struct Context {
  Environment env;                  // read once in run()
  std::vector<std::string> argv;    // the command line, for --log
  ProcessRunner* runner = nullptr;  // real in main, fake in tests
  Printer* out = nullptr;           // standard output
  Printer* err = nullptr;           // standard error
  int verbosity = 0;                // -v count
  int exit_code = 0;                // set by the subcommand: 0 ok, 1 problem found, 2 tool failure
};

/// Exit codes shared by all subcommands.
inline constexpr int k_exit_ok = 0;
inline constexpr int k_exit_problem = 1;
inline constexpr int k_exit_tool_failure = 2;

/// Reports a subcommand's failure in the one line every bad input gets,
/// "torchfix COMMAND: what was wrong; what to do", on stderr, and returns
/// k_exit_tool_failure (2): `const Failure failed{ctx, "arch"}; return failed(msg);`.
struct Failure {
  Context& ctx;
  std::string_view command;  // "build"
  int operator()(const std::string& message) const {
    ctx.err->line("torchfix " + std::string(command) + ": " + message);
    return k_exit_tool_failure;
  }
  int operator()(const Error& error) const { return (*this)(error.message); }
};

}  // namespace torchfix::cli
