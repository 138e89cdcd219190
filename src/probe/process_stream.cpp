// run_streaming: the runner of process.cpp for long builds. The log is written
// while the build runs (hours), not at the end, and Ctrl-C is passed on
// politely first (SIGINT, so ninja and pip clean up), then by force to the
// whole tree.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "probe/process.hpp"
#include "probe/process_child.hpp"

namespace torchfix {

Expected<StreamResult> run_streaming(const StreamCommand& command) {
  using Clock = std::chrono::steady_clock;
  install_interrupt_handlers();
  auto program = find_program(command.program, command.env);
  if (!program) return fail("cannot run '" + command.program + "': no such executable on the build's PATH");
  if (interrupt_signal() != 0) {
    StreamResult stopped;
    stopped.interrupted = true;
    stopped.exit_code = 130;
    return stopped;
  }
  std::error_code ec;
  if (command.log_path.has_parent_path()) std::filesystem::create_directories(command.log_path.parent_path(), ec);
  const int log = ::open(command.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (log < 0) return fail("cannot open the build log " + command.log_path.string() + ": " + std::strerror(errno));

  detail::ActiveRun active;
  const auto start = Clock::now();
  auto child = detail::spawn_child(*program, command.args, command.env, command.working_directory,
                                   detail::Stderr::merged, active);
  if (!child) {
    ::close(log);
    return fail("cannot run '" + *program + "': " + child.error().message);
  }

  StreamResult result;
  std::string pending;
  char buffer[65536];
  bool sent_int = false;
  bool killed = false;
  Clock::time_point int_time;
  auto emit_lines = [&](bool flush) {
    std::size_t begin = 0;
    for (std::size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', begin)) {
      std::string_view line(pending.data() + begin, nl - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (command.on_line) command.on_line(line);
      begin = nl + 1;
    }
    pending.erase(0, begin);
    if (flush && !pending.empty()) {
      if (command.on_line) command.on_line(pending);
      pending.clear();
    }
  };
  int fd = child->out;
  int status = 0;
  bool reaped = false;
  auto quiet_since = start;
  while (true) {
    const auto now = Clock::now();
    const int signals = detail::interrupt_count();
    if (signals > 0 && !sent_int) {
      // The handler already forwarded it, unless it came before the group
      // was registered.
      ::kill(-child->pid, SIGINT);
      sent_int = true;
      int_time = now;
    }
    if (sent_int && !killed && (signals > 1 || now - int_time > std::chrono::seconds(5))) {
      // Compile jobs that ignore SIGINT run in ninja's own process groups:
      // the whole tree goes, not just our group.
      detail::kill_tree(reaped ? -1 : child->pid, child->run_id);
      killed = true;
    }
    if (!reaped && ::waitpid(child->pid, &status, WNOHANG) == child->pid) {
      reaped = true;
      quiet_since = now;
    }
    if (fd < 0) {
      if (reaped) break;
      ::poll(nullptr, 0, 100);
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 100);
    if (ready <= 0) {
      // The program exited but a helper it started (a compiler cache server)
      // still holds the pipe: the output is complete once it goes quiet.
      if (reaped && Clock::now() - quiet_since > std::chrono::milliseconds(200)) break;
      continue;
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      ::close(fd);
      fd = -1;
      continue;
    }
    quiet_since = Clock::now();
    (void)!::write(log, buffer, static_cast<std::size_t>(n));
    pending.append(buffer, static_cast<std::size_t>(n));
    emit_lines(false);
  }
  emit_lines(true);
  if (fd >= 0) ::close(fd);
  ::close(log);
  // Stragglers that closed their output but still run (daemonised helpers,
  // orphaned compile jobs) belong to an interrupted build: stop them too.
  if (sent_int) detail::kill_tree(reaped ? -1 : child->pid, child->run_id);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (sent_int) {
    result.interrupted = true;
    result.exit_code = 130;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace torchfix
