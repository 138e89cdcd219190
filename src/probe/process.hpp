#pragma once
// The one place that starts processes. Everything that runs a program goes
// through a ProcessRunner, so tests can substitute a recording fake.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.hpp"

namespace torchfix {

/// Holds environment variables by name; read once in main and passed down.
using Environment = std::map<std::string, std::string>;

/// Returns the current process environment (call once, in the CLI layer).
Environment read_process_environment();

/// Returns the value of `name` in `env`, or "" when it is not set.
inline std::string env_value(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

/// Describes a program to run: argv without a shell, an explicit environment.
struct Command {
  std::string program;                        // absolute path, or a name searched in env's PATH
  std::vector<std::string> args;              // argv[1..]
  std::optional<Environment> env;             // nullopt: inherit the caller's environment
  std::string working_directory;              // empty: the caller's
  std::chrono::milliseconds timeout{10'000};  // bounds the whole run, output draining included
  std::size_t output_limit = 4u << 20;        // bytes kept per stream; more kills the program
};

/// Holds how a finished (or killed) process ended and what it printed.
struct ProcessResult {
  int exit_code = -1;         // exit status when it exited normally, else -1
  std::optional<int> signal;  // terminating signal (9 for SIGKILL, 11 for SIGSEGV)
  bool timed_out = false;     // killed by us after Command::timeout
  bool interrupted = false;   // killed by us because SIGINT/SIGTERM/SIGHUP reached torchfix
  bool overflowed = false;    // killed by us: printed more than Command::output_limit
  std::string out;            // standard output, at most Command::output_limit bytes
  std::string err;            // standard error, at most Command::output_limit bytes
  double seconds = 0;         // wall time

  bool succeeded() const { return !timed_out && !interrupted && !overflowed && !signal && exit_code == 0; }
};

/// Runs programs. Errors: the program could not be started (not found, not
/// executable); a program that starts and fails is a ProcessResult, not an Error.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  /// Runs `command` to completion or until its timeout, killing its whole
  /// process group on timeout. Probes call it from several threads at once.
  virtual Expected<ProcessResult> run(const Command& command) = 0;
};

/// Runs real processes (fork/exec), each in its own process group. The
/// timeout bounds the whole run: at the deadline the group and every
/// descendant (found by parent links and by an environment variable the
/// child inherits, TORCHFIX_RUN_ID) get SIGKILL and reading stops, even when
/// a `setsid` grandchild still holds the output pipe. A program that exits
/// while a descendant keeps its output open gets 50 ms to go quiet, then the
/// descendants are killed. While it runs, SIGINT/SIGTERM/SIGHUP to torchfix
/// kill the tree and the result says interrupted; after such a signal new
/// runs fail at once. Safe to call from several threads.
class SystemProcessRunner final : public ProcessRunner {
 public:
  Expected<ProcessResult> run(const Command& command) override;
};

/// Finds `name` in the PATH of `env` (or returns it when it contains '/');
/// nullopt when there is no executable file of that name.
std::optional<std::string> find_program(const std::string& name, const Environment& env);

/// Installs torchfix's handlers for SIGINT, SIGTERM and SIGHUP (once; a
/// signal the caller ignores stays ignored). While a child runs, a signal is
/// forwarded to the children's process groups and recorded; with no child
/// running it ends torchfix as the default action would. Runners call it
/// themselves; main calls it early so that no signal is missed.
void install_interrupt_handlers();

/// Returns the signal (SIGINT, SIGTERM, SIGHUP) that interrupted a run of a
/// child, or 0. The CLI exits with 128 + this number once it is set.
int interrupt_signal();

/// Forgets a recorded interrupt, so that runs start again (tests; a caller
/// that handled the interrupt).
void clear_interrupt();

/// Defers SIGINT, SIGTERM and SIGHUP while alive: a signal is recorded (see
/// interrupt_signal) and forwarded to running children instead of ending
/// torchfix, so a caller between two runs (torchfix fix between an install
/// and its rollback) gets to finish what it must.
class InterruptDeferral {
 public:
  InterruptDeferral();
  ~InterruptDeferral();
  InterruptDeferral(const InterruptDeferral&) = delete;
  InterruptDeferral& operator=(const InterruptDeferral&) = delete;
};

}  // namespace torchfix

// ---- Streaming runs (torchfix build) ----
// Long builds: output appended to a log file and handed over line by line;
// Ctrl-C stops the whole process group. Implemented in process_stream.cpp.

#include <filesystem>
#include <functional>
#include <string_view>

namespace torchfix {

/// Describes a long-running program: argv without a shell, the complete
/// environment it gets, its folder, the log its stdout and stderr go to.
struct StreamCommand {
  std::string program;                            // absolute path, or a name searched in env's PATH
  std::vector<std::string> args;                  // argv[1..]
  Environment env;                                // the child's whole environment (nothing inherited)
  std::string working_directory;                  // empty: the caller's
  std::filesystem::path log_path;                 // appended to (created with its folders)
  std::function<void(std::string_view)> on_line;  // each output line, without its newline
};

/// Holds how a streamed run ended.
struct StreamResult {
  int exit_code = -1;         // exit status; 130 when interrupted
  std::optional<int> signal;  // terminating signal of the program (9: SIGKILL, e.g. the OOM killer)
  bool interrupted = false;   // SIGINT/SIGTERM reached torchfix and the group was stopped
  double seconds = 0;         // wall time

  bool succeeded() const { return !interrupted && !signal && exit_code == 0; }
};

/// Runs `command` in its own process group, stdout and stderr merged into the
/// log and `on_line`. While it runs, SIGINT, SIGTERM and SIGHUP to torchfix
/// are caught: the group gets SIGINT (ninja and pip clean up), then after 5 s
/// (or at a second signal) SIGKILL goes to the group and to every descendant,
/// including ninja's compile jobs in their own process groups, and the
/// result says interrupted with exit code 130. Errors: the program is not
/// found or cannot start, the log cannot be opened.
Expected<StreamResult> run_streaming(const StreamCommand& command);

}  // namespace torchfix
