#pragma once
// The process runner every subcommand gets: the real one, which at -vv also
// says on standard error what each probe ran and how long it took, and at
// -vvv what it printed (STYLE.md: `torchfix -v` records the probe results,
// so a user's bug report carries its own context).

#include <mutex>

#include "cli/context.hpp"

namespace torchfix::cli {

/// Runs commands through `inner` and, from verbosity 2 (read at each run
/// from `ctx`), writes one line per command to `ctx.err`: its command line
/// (arguments over 120 bytes shown by size), wall time and how it ended;
/// from verbosity 3 also its standard output and error, each line prefixed
/// "  | ", at most 40 lines per stream. Safe to call from several threads
/// (the lines of one command stay together). Errors: those of `inner`.
class TraceRunner final : public ProcessRunner {
 public:
  TraceRunner(ProcessRunner& inner, const Context& ctx) : m_inner(inner), m_ctx(ctx) {}
  Expected<ProcessResult> run(const Command& command) override;

 private:
  ProcessRunner& m_inner;
  const Context& m_ctx;
  std::mutex m_mutex;
};

}  // namespace torchfix::cli
