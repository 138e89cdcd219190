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
namespace {

using Clock = std::chrono::steady_clock;

// Splits the child's output into lines for on_line; a trailing '\r' is
// dropped, and flush() hands over a last line without a newline.
class LineSplitter {
 public:
  explicit LineSplitter(const std::function<void(std::string_view)>& on_line) : on_line_(on_line) {}
  void add(const char* data, std::size_t n) {
    pending_.append(data, n);
    std::size_t begin = 0;
    for (std::size_t nl = pending_.find('\n'); nl != std::string::npos; nl = pending_.find('\n', begin)) {
      std::string_view line(pending_.data() + begin, nl - begin);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (on_line_) on_line_(line);
      begin = nl + 1;
    }
    pending_.erase(0, begin);
  }
  void flush() {
    if (!pending_.empty() && on_line_) on_line_(pending_);
    pending_.clear();
  }

 private:
  const std::function<void(std::string_view)>& on_line_;
  std::string pending_;
};

// Passes Ctrl-C on to the child's group once, then, at a second Ctrl-C or
// after 5 s, ends the whole tree: compile jobs that ignore SIGINT run in
// ninja's own process groups.
class Interrupts {
 public:
  void check(const detail::Child& child, bool reaped, Clock::time_point now) {
    const int signals = detail::interrupt_count();
    if (signals > 0 && !sent_) {
      // The handler already forwarded it, unless it came before the group
      // was registered.
      ::kill(-child.pid, SIGINT);
      sent_ = true;
      sent_at_ = now;
    }
    if (sent_ && !killed_ && (signals > 1 || now - sent_at_ > std::chrono::seconds(5))) {
      detail::kill_tree(reaped ? -1 : child.pid, child.run_id);
      killed_ = true;
    }
  }
  bool sent() const { return sent_; }

 private:
  bool sent_ = false;
  bool killed_ = false;
  Clock::time_point sent_at_;
};

// Opens the build log for appending (never through a link), creating its folder.
Expected<int> open_log(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const int log = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (log < 0) return fail("cannot open the build log " + path.string() + ": " + std::strerror(errno));
  return log;
}

// Reads the child's output into the log and the splitter until it exited
// and its output is complete; returns its wait status.
int pump(detail::Child& child, int log, LineSplitter& lines, Interrupts& interrupts) {
  char buffer[65536];
  int fd = child.out;
  int status = 0;
  bool reaped = false;
  auto quiet_since = Clock::now();
  while (true) {
    const auto now = Clock::now();
    interrupts.check(child, reaped, now);
    if (!reaped && ::waitpid(child.pid, &status, WNOHANG) == child.pid) {
      reaped = true;
      quiet_since = now;
    }
    if (fd < 0) {
      if (reaped) break;
      ::poll(nullptr, 0, 100);
      continue;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) {
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
    lines.add(buffer, static_cast<std::size_t>(n));
  }
  if (fd >= 0) ::close(fd);
  // Stragglers that closed their output but still run (daemonised helpers,
  // orphaned compile jobs) belong to an interrupted build: stop them too.
  if (interrupts.sent()) detail::kill_tree(reaped ? -1 : child.pid, child.run_id);
  return status;
}

}  // namespace

Expected<StreamResult> run_streaming(const StreamCommand& command) {
  install_interrupt_handlers();
  auto program = find_program(command.program, command.env);
  if (!program) return fail("cannot run '" + command.program + "': no such executable on the build's PATH");
  if (interrupt_signal() != 0) {
    StreamResult stopped;
    stopped.interrupted = true;
    stopped.exit_code = 130;
    return stopped;
  }
  TF_TRY(log, open_log(command.log_path));
  detail::ActiveRun active;
  const auto start = Clock::now();
  auto child = detail::spawn_child(*program, command.args, command.env, command.working_directory,
                                   detail::Stderr::merged, active);
  if (!child) {
    ::close(log);
    return fail("cannot run '" + *program + "': " + child.error().message);
  }
  LineSplitter lines(command.on_line);
  Interrupts interrupts;
  const int status = pump(*child, log, lines, interrupts);
  lines.flush();
  ::close(log);
  StreamResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (interrupts.sent()) {
    result.interrupted = true;
    result.exit_code = 130;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace torchfix
