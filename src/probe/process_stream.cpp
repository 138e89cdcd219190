// run_streaming: fork/exec with a pipe and a poll loop rather than
// Boost.Process, because the SIGINT handler must reach the child's process
// group with async-signal-safe calls only, and the log must be written while
// the build runs (hours), not at the end.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "probe/process.hpp"

namespace torchfix {
namespace {

volatile sig_atomic_t g_interrupted = 0;

extern "C" void on_interrupt(int) {
  g_interrupted = 1;
}

// Restores the caller's handlers however run_streaming returns.
class SignalGuard {
 public:
  SignalGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &m_old_int);
    ::sigaction(SIGTERM, &sa, &m_old_term);
  }
  ~SignalGuard() {
    ::sigaction(SIGINT, &m_old_int, nullptr);
    ::sigaction(SIGTERM, &m_old_term, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction m_old_int {};
  struct sigaction m_old_term {};
};

}  // namespace

Expected<StreamResult> run_streaming(const StreamCommand& command) {
  auto program = find_program(command.program, command.env);
  if (!program) return fail("cannot run '" + command.program + "': no such executable on the build's PATH");
  std::error_code ec;
  if (command.log_path.has_parent_path()) std::filesystem::create_directories(command.log_path.parent_path(), ec);
  const int log = ::open(command.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) return fail("cannot open the build log " + command.log_path.string() + ": " + std::strerror(errno));
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    ::close(log);
    return fail(std::string("cannot create a pipe: ") + std::strerror(errno));
  }

  // Everything the child needs is built before fork: after it only
  // async-signal-safe calls are allowed.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : command.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings = {*program};
  arg_strings.insert(arg_strings.end(), command.args.begin(), command.args.end());
  std::vector<char*> argv;
  for (auto& s : arg_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  const char* cwd = command.working_directory.empty() ? nullptr : command.working_directory.c_str();

  SignalGuard guard;
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return fail(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &dfl, nullptr);
    ::sigaction(SIGTERM, &dfl, nullptr);
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    if (cwd && ::chdir(cwd) != 0) {
      const char msg[] = "torchfix: cannot enter the working directory\n";
      (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
      ::_exit(127);
    }
    ::execve(argv[0], argv.data(), envp.data());
    const char msg[] = "torchfix: exec failed\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from the parent: no race with an early kill
  ::close(pipe_fds[1]);

  StreamResult result;
  std::string pending;
  char buffer[65536];
  bool sent_int = false;
  std::chrono::steady_clock::time_point int_time;
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
  int status = 0;
  bool reaped = false;
  while (true) {
    if (g_interrupted && !sent_int) {
      ::kill(-pid, SIGINT);
      sent_int = true;
      int_time = std::chrono::steady_clock::now();
    }
    if (sent_int && std::chrono::steady_clock::now() - int_time > std::chrono::seconds(5)) ::kill(-pid, SIGKILL);
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      // The program exited but a helper it started (a compiler cache server)
      // still holds the pipe: the output is complete once it goes quiet.
      if (reaped) break;
      if (::waitpid(pid, &status, WNOHANG) == pid) reaped = true;
      continue;
    }
    if (ready < 0) break;
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // every writer (the whole group) closed the pipe
    (void)!::write(log, buffer, static_cast<std::size_t>(n));
    pending.append(buffer, static_cast<std::size_t>(n));
    emit_lines(false);
  }
  emit_lines(true);
  ::close(pipe_fds[0]);
  ::close(log);
  while (!reaped && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Stragglers that closed their output but still run (daemonised helpers)
  // belong to the build: stop them too.
  if (sent_int) ::kill(-pid, SIGKILL);
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  if (g_interrupted) {
    result.interrupted = true;
    result.exit_code = 130;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace torchfix
