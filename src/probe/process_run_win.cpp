// SystemProcessRunner::run and run_streaming on Windows (process.cpp and
// process_stream.cpp are the POSIX side). Each output pipe is read by a
// thread of its own (anonymous pipes have no poll); the job object ends the
// tree at the deadline, at the output cap, at Ctrl-C, and 50 ms after the
// program exits when a descendant still holds its pipes. Every descendant is
// in the job (no breakaway), so once the job is ended the pipes reach EOF
// and the readers return.
#include <chrono>
#include <fstream>
#include <thread>

#include "probe/process_win.hpp"

namespace torchfix {
namespace {

using Clock = std::chrono::steady_clock;

// Reads `pipe` to EOF into `sink`, keeping at most `limit` bytes; past
// that it ends the child's job and says so in `overflowed`.
void drain(HANDLE pipe, std::string& sink, std::size_t limit, const win::Child& child, std::atomic<bool>& overflowed) {
  char buffer[65536];
  DWORD n = 0;
  while (ReadFile(pipe, buffer, sizeof buffer, &n, nullptr) && n > 0) {
    const std::size_t room = limit > sink.size() ? limit - sink.size() : 0;
    sink.append(buffer, std::min<std::size_t>(room, n));
    if (n > room && !overflowed.exchange(true)) child.kill_tree();
  }
}

// Waits for the program, then for its output: true when the run ended by
// itself, false when the deadline came first (the tree is then ended).
bool wait_for(const win::Child& child, Clock::time_point deadline, std::thread& out, std::thread& err) {
  const auto left = [&] {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<DWORD>(std::max<long long>(ms, 0));
  };
  if (WaitForSingleObject(child.process, left()) == WAIT_TIMEOUT) {
    child.kill_tree();
    out.join();
    err.join();
    return false;
  }
  // A program that has exited leaves its output complete once the pipes go
  // quiet: give descendants holding them 50 ms, then end them.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  child.kill_tree();
  out.join();
  err.join();
  return true;
}

}  // namespace

Expected<ProcessResult> SystemProcessRunner::run(const Command& command) {
  if (win::interrupt_count() > 0) return fail("torchfix was interrupted (Ctrl-C); not running " + command.program);
  const Environment env = command.env ? *command.env : read_process_environment();
  auto program = find_program(command.program, env);
  if (!program) return fail("cannot run '" + command.program + "': no such executable on PATH");
  const auto start = Clock::now();
  auto child = win::spawn_child(*program, command.args, env, command.working_directory, win::Stderr::separate);
  if (!child) return fail("cannot run '" + *program + "': " + child.error().message);
  const int interrupts_before = win::interrupt_count();

  ProcessResult result;
  std::atomic<bool> overflowed{false};
  std::thread out([&] { drain(child->out, result.out, command.output_limit, *child, overflowed); });
  std::thread err([&] { drain(child->err, result.err, command.output_limit, *child, overflowed); });
  const bool finished = wait_for(*child, start + command.timeout, out, err);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.timed_out = !finished;
  result.overflowed = overflowed.load();
  result.interrupted = win::interrupt_count() > interrupts_before;
  DWORD code = 0;
  if (finished && !result.overflowed && !result.interrupted && GetExitCodeProcess(child->process, &code)) {
    result.exit_code = static_cast<int>(code);  // an NTSTATUS such as 0xC0000005 for a crash
  }
  return result;
}

namespace {

// Splits the child's output into lines for on_line; a trailing '\r' is
// dropped, and a last line without a newline is handed over at the end.
void pump_lines(HANDLE pipe, std::ofstream& log, const std::function<void(std::string_view)>& on_line) {
  std::string pending;
  char buffer[65536];
  DWORD n = 0;
  while (ReadFile(pipe, buffer, sizeof buffer, &n, nullptr) && n > 0) {
    log.write(buffer, n);
    log.flush();
    pending.append(buffer, n);
    std::size_t begin = 0;
    for (std::size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', begin)) {
      std::string_view line(pending.data() + begin, nl - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (on_line) on_line(line);
      begin = nl + 1;
    }
    pending.erase(0, begin);
  }
  if (!pending.empty() && on_line) on_line(pending);
}

}  // namespace

// Ctrl-C ends the tree at once (Windows has no SIGINT to pass on first: a
// console control event would reach torchfix's own console too).
Expected<StreamResult> run_streaming(const StreamCommand& command) {
  if (win::interrupt_count() > 0) return fail("torchfix was interrupted (Ctrl-C); not running " + command.program);
  auto program = find_program(command.program, command.env);
  if (!program) return fail("cannot run '" + command.program + "': no such executable on PATH");
  std::error_code ec;
  if (command.log_path.has_parent_path()) std::filesystem::create_directories(command.log_path.parent_path(), ec);
  std::ofstream log(command.log_path, std::ios::app | std::ios::binary);
  if (!log)
    return fail("cannot open the build log " + command.log_path.string() + "; check that its folder is writable");
  const auto start = Clock::now();
  auto child = win::spawn_child(*program, command.args, command.env, command.working_directory, win::Stderr::merged);
  if (!child) return fail("cannot run '" + *program + "': " + child.error().message);
  const int interrupts_before = win::interrupt_count();
  pump_lines(child->out, log, command.on_line);
  WaitForSingleObject(child->process, INFINITE);
  StreamResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.interrupted = win::interrupt_count() > interrupts_before;
  DWORD code = 0;
  result.exit_code =
      result.interrupted ? 130 : (GetExitCodeProcess(child->process, &code) ? static_cast<int>(code) : -1);
  return result;
}

}  // namespace torchfix
