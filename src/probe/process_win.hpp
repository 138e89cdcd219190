#pragma once
// Internal to the Windows process runner (process_win.cpp,
// process_stream_win.cpp): a child started suspended inside a job object
// that kills every process in it when torchfix closes the job or ends, and
// the Ctrl-C bookkeeping. Not for use outside src/probe.

#include <windows.h>

#include <string>
#include <vector>

#include "core/base/error.hpp"
#include "probe/process.hpp"

namespace torchfix::win {

/// Converts UTF-8 to UTF-16 and back (CP_UTF8; invalid bytes become U+FFFD).
std::wstring widen(std::string_view text);
std::string narrow(std::wstring_view text);

/// Returns "<what>: <FormatMessage text of `code`>".
std::string error_text(std::string_view what, DWORD code);

/// Says whether the child's stderr goes to its own pipe or into stdout's.
enum class Stderr { separate, merged };

/// Holds a started child: the process, its job (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
/// no breakaway, so every descendant is in it) and the read ends of its
/// output pipes. Closing it kills whatever is still running in the job.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  Child(Child&& other) noexcept;
  Child& operator=(Child&&) = delete;
  ~Child();
  /// Ends every process of the job (exit code 1); never fails.
  void kill_tree() const;

  HANDLE process = nullptr;
  HANDLE job = nullptr;
  HANDLE out = nullptr;  // stdout (and stderr when merged)
  HANDLE err = nullptr;  // stderr; nullptr when merged
};

/// Starts `program` (a path) with `args` and exactly `env`, stdin from NUL,
/// no console window, inside a new job, in `working_directory` when not
/// empty; the job is registered for Ctrl-C until the Child is destroyed.
/// Errors: CreateProcessW's or the pipes' Windows error text.
Expected<Child> spawn_child(const std::string& program, const std::vector<std::string>& args, const Environment& env,
                            const std::string& working_directory, Stderr stderr_mode);

/// Returns the number of Ctrl-C / Ctrl-Break / close events received while
/// a run or a deferral was active.
int interrupt_count();

}  // namespace torchfix::win
