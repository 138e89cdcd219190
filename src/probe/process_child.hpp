#pragma once
// Internal to the process runner (process.cpp, process_stream.cpp): starting
// a child in its own process group, tracking it for the signal handler, and
// killing it with all its descendants. Not for use outside src/probe.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "probe/process.hpp"

namespace torchfix::detail {

/// Holds a started child: its pid (= its process group), the read ends of
/// its output pipes (non-blocking, close-on-exec) and the TORCHFIX_RUN_ID
/// value its descendants inherit.
struct Child {
  pid_t pid = -1;
  int out = -1;  // stdout (and stderr when merged)
  int err = -1;  // stderr; -1 when merged into `out`
  std::string run_id;
};

/// Says whether the child's stderr goes to its own pipe or into stdout's.
enum class Stderr { separate, merged };

/// Counts a run as active for the signal handler from construction (before
/// fork) to destruction (after the tree is gone), and registers the child's
/// process group so that a signal reaches it at once.
class ActiveRun {
 public:
  ActiveRun();
  ~ActiveRun();
  ActiveRun(const ActiveRun&) = delete;
  ActiveRun& operator=(const ActiveRun&) = delete;
  /// Registers the process group `pgid` for signal forwarding.
  void track(pid_t pgid);

 private:
  int m_slot = -1;
};

/// Starts `program` (an absolute path) with `args` and exactly `env` plus
/// TORCHFIX_RUN_ID, stdin from /dev/null, in its own process group, in
/// `working_directory` when not empty. Errors: no pipe, no fork, or exec
/// failed (the errno text of execve, e.g. "Permission denied").
Expected<Child> spawn_child(const std::string& program, const std::vector<std::string>& args, const Environment& env,
                            const std::string& working_directory, Stderr stderr_mode, ActiveRun& active);

/// Sends SIGKILL to the process group `pgid`, to every process whose parent
/// chain leads to `pid`, to every process whose environment holds
/// TORCHFIX_RUN_ID=`run_id`, and to every orphan reparented to torchfix (the
/// child subreaper) that started a session of its own, with its descendants
/// (a `setsid env -i` daemon: no parent link, no variable left), repeating
/// until no such process is left (at most a few rounds); killed orphans are
/// reaped. Reads /proc; never fails.
void kill_tree(pid_t pid, const std::string& run_id);

/// Waits for `pid` until `deadline`; returns its wait status, or nullopt
/// when it has not ended by then (it is left running).
std::optional<int> wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline);

/// Returns the number of interrupting signals received so far (0, 1, 2...).
int interrupt_count();

}  // namespace torchfix::detail
