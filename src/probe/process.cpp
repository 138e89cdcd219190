// The one process runner: fork/exec with pipes and a poll loop. Captures
// (probes) and streams (builds, process_stream.cpp) share the start, the
// signal handling and the kill of a whole process tree defined here.
#include "probe/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>

#include "probe/process_child.hpp"

extern char** environ;

namespace torchfix {
namespace {

// Signal state, touched by the handler: lock-free atomics only.
constexpr int k_group_slots = 128;
std::atomic<pid_t> g_groups[k_group_slots];
std::atomic<int> g_active{0};
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
constexpr int k_signals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];

int signal_index(int sig) {
  return sig == SIGINT ? 0 : sig == SIGTERM ? 1 : 2;
}

extern "C" void on_interrupt(int sig) {
  const int saved_errno = errno;
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  const int count = g_count.fetch_add(1) + 1;
  if (g_active.load() == 0) {
    // Nothing of ours is running: end as the signal's previous action would.
    ::sigaction(sig, &g_previous[signal_index(sig)], nullptr);
    ::raise(sig);  // delivered when the handler returns
  } else {
    for (auto& slot : g_groups) {
      const pid_t group = slot.load();
      if (group > 0) ::kill(-group, count > 1 ? SIGKILL : SIGINT);
    }
  }
  errno = saved_errno;
}

std::string errno_text(int error) {
  return std::strerror(error);
}

std::atomic<unsigned> g_run_counter{0};

}  // namespace

Environment read_process_environment() {
  Environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    if (auto eq = entry.find('='); eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

std::optional<std::string> find_program(const std::string& name, const Environment& env) {
  auto executable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) return executable(name) ? std::optional(name) : std::nullopt;
  auto path = env.find("PATH");
  if (path == env.end()) return std::nullopt;
  std::string_view dirs = path->second;
  while (true) {
    const auto colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    if (!dir.empty()) {
      std::string candidate = std::string(dir) + "/" + name;
      if (executable(candidate)) return candidate;
    }
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

void install_interrupt_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Orphans of our children (a daemon that forks, setsids and clears its
    // environment) reparent to torchfix instead of init, so kill_tree still
    // finds them by their parent (Linux >= 3.4; elsewhere a no-op).
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    for (int sig : k_signals) {
      struct sigaction old {};
      ::sigaction(sig, nullptr, &old);
      g_previous[signal_index(sig)] = old;
      if (old.sa_handler == SIG_IGN) continue;  // nohup, background jobs
      struct sigaction sa {};
      sa.sa_handler = on_interrupt;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

int interrupt_signal() {
  return g_signal.load();
}

void clear_interrupt() {
  g_signal.store(0);
  g_count.store(0);
}

// Counted as a run in progress: the handler then records and forwards.
InterruptDeferral::InterruptDeferral() {
  install_interrupt_handlers();
  g_active.fetch_add(1);
}

InterruptDeferral::~InterruptDeferral() {
  g_active.fetch_sub(1);
}

namespace detail {

int interrupt_count() {
  return g_count.load();
}

ActiveRun::ActiveRun() {
  g_active.fetch_add(1);
}

ActiveRun::~ActiveRun() {
  if (m_slot >= 0) g_groups[m_slot].store(0);
  g_active.fetch_sub(1);
}

void ActiveRun::track(pid_t pgid) {
  for (int i = 0; i < k_group_slots; ++i) {
    pid_t free_slot = 0;
    if (g_groups[i].compare_exchange_strong(free_slot, pgid)) {
      m_slot = i;
      break;
    }
  }
  // A signal that came before the slot was taken is seen by the run's loop.
}

namespace {

// Holds argv and envp for execve, built before fork: after it only
// async-signal-safe calls are allowed (other threads may hold locks). The
// pointers point into the strings, so it is built in place and never moved.
struct ExecStrings {
  std::vector<std::string> env_strings;
  std::vector<std::string> arg_strings;
  std::vector<char*> envp;
  std::vector<char*> argv;

  ExecStrings(const std::string& program, const std::vector<std::string>& args, const Environment& env,
              const std::string& run_id) {
    env_strings.reserve(env.size() + 1);
    for (const auto& [key, value] : env) {
      if (key != "TORCHFIX_RUN_ID") env_strings.push_back(key + "=" + value);
    }
    env_strings.push_back("TORCHFIX_RUN_ID=" + run_id);
    for (std::string& entry : env_strings) envp.push_back(entry.data());
    envp.push_back(nullptr);
    arg_strings = {program};
    arg_strings.insert(arg_strings.end(), args.begin(), args.end());
    for (std::string& arg : arg_strings) argv.push_back(arg.data());
    argv.push_back(nullptr);
  }
  ExecStrings(const ExecStrings&) = delete;
  ExecStrings& operator=(const ExecStrings&) = delete;
};

// Holds the child's pipes: stdout, stderr (when separate) and the exec
// status pipe; closes what is still open when it goes.
struct ChildPipes {
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int exec_status[2] = {-1, -1};

  ChildPipes() = default;
  ChildPipes(const ChildPipes&) = delete;
  ChildPipes& operator=(const ChildPipes&) = delete;
  ~ChildPipes() { close_all(); }
  void close_all() {
    for (int* fd : {&out[0], &out[1], &err[0], &err[1], &exec_status[0], &exec_status[1]}) close_fd(*fd);
  }
  static void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// Runs in the forked child: its own process group, torchfix's handlers
// reset, the mask restored, stdin /dev/null (nvcc 13 fails, "Failed to
// preprocess host compiler properties", when it is closed), then execve.
// A failed chdir or exec writes errno to the status pipe.
[[noreturn]] void exec_in_child(const ExecStrings& strings, const ChildPipes& pipes, const char* cwd, int devnull,
                                Stderr stderr_mode, const sigset_t& previous_mask) {
  ::setpgid(0, 0);
  for (int sig : k_signals) {
    struct sigaction current {};
    ::sigaction(sig, nullptr, &current);
    if (current.sa_handler == on_interrupt) {
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      ::sigaction(sig, &dfl, nullptr);
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::dup2(pipes.out[1], STDOUT_FILENO);
  ::dup2(stderr_mode == Stderr::separate ? pipes.err[1] : pipes.out[1], STDERR_FILENO);
  int error = 0;
  if (cwd && ::chdir(cwd) != 0) {
    error = errno;
  } else {
    ::execve(strings.argv[0], strings.argv.data(), strings.envp.data());
    error = errno;
  }
  (void)!::write(pipes.exec_status[1], &error, sizeof error);
  ::_exit(127);
}

// Reads the exec status pipe, which closes on a successful exec
// (close-on-exec) and carries errno otherwise: 0 when the exec succeeded.
int exec_error(int& status_fd) {
  int error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_fd, &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  ChildPipes::close_fd(status_fd);
  return got == static_cast<ssize_t>(sizeof error) ? error : 0;
}

}  // namespace

Expected<Child> spawn_child(const std::string& program, const std::vector<std::string>& args, const Environment& env,
                            const std::string& working_directory, Stderr stderr_mode, ActiveRun& active) {
  Child child;
  child.run_id = std::to_string(::getpid()) + "-" + std::to_string(g_run_counter.fetch_add(1));
  const ExecStrings strings(program, args, env, child.run_id);
  const char* cwd = working_directory.empty() ? nullptr : working_directory.c_str();
  ChildPipes pipes;
  if (::pipe2(pipes.out, O_CLOEXEC) != 0 || (stderr_mode == Stderr::separate && ::pipe2(pipes.err, O_CLOEXEC) != 0) ||
      ::pipe2(pipes.exec_status, O_CLOEXEC) != 0) {
    return fail("cannot create a pipe: " + errno_text(errno));
  }
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  // Signals stay blocked in this thread from fork to registration, and in the
  // child until its handlers are reset: our handler must never run there.
  sigset_t block;
  sigset_t previous_mask;
  sigemptyset(&block);
  for (int sig : k_signals) sigaddset(&block, sig);
  ::pthread_sigmask(SIG_BLOCK, &block, &previous_mask);
  const pid_t pid = ::fork();
  if (pid == 0) exec_in_child(strings, pipes, cwd, devnull, stderr_mode, previous_mask);
  const int fork_error = errno;
  if (pid > 0) {
    ::setpgid(pid, pid);  // also from the parent: no race with an early kill
    active.track(pid);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (devnull >= 0) ::close(devnull);
  if (pid < 0) return fail("cannot fork: " + errno_text(fork_error));
  for (int* fd : {&pipes.out[1], &pipes.err[1], &pipes.exec_status[1]}) ChildPipes::close_fd(*fd);
  if (const int error = exec_error(pipes.exec_status[0]); error != 0) {
    ::waitpid(pid, nullptr, 0);
    return fail(std::string(cwd && error == ENOENT ? "cannot enter the working directory: " : "") + errno_text(error));
  }
  for (int fd : {pipes.out[0], pipes.err[0]}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  child.pid = pid;
  child.out = std::exchange(pipes.out[0], -1);
  child.err = std::exchange(pipes.err[0], -1);
  return child;
}

std::optional<int> wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline) {
  int status = 0;
  int pause_ms = 1;
  while (true) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return status;
    if (got < 0 && errno != EINTR) return 0;  // not our child any more
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    ::poll(nullptr, 0, pause_ms);
    pause_ms = std::min(pause_ms * 2, 20);
  }
}

}  // namespace detail

Expected<ProcessResult> SystemProcessRunner::run(const Command& command) {
  using Clock = std::chrono::steady_clock;
  install_interrupt_handlers();
  if (interrupt_signal() != 0) return fail("cannot run '" + command.program + "': torchfix was interrupted");
  const Environment env = command.env ? *command.env : read_process_environment();
  auto program = find_program(command.program, env);
  if (!program) return fail("cannot run '" + command.program + "': no such executable on PATH");

  detail::ActiveRun active;
  const auto start = Clock::now();
  auto child =
      detail::spawn_child(*program, command.args, env, command.working_directory, detail::Stderr::separate, active);
  if (!child) return fail("cannot run '" + *program + "': " + child.error().message);
  const auto deadline = start + command.timeout;
  // A program that has exited leaves its output complete once the pipes go
  // quiet this long, even when a descendant still holds them.
  constexpr auto k_quiet_after_exit = std::chrono::milliseconds(50);

  ProcessResult result;
  int fds[2] = {child->out, child->err};
  std::string* sinks[2] = {&result.out, &result.err};
  std::optional<int> status;
  bool strays = false;
  auto last_data = start;
  char buffer[65536];
  while (true) {
    const auto now = Clock::now();
    if (detail::interrupt_count() > 0) {
      result.interrupted = true;
      break;
    }
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    if (!status) {
      int st = 0;
      if (::waitpid(child->pid, &st, WNOHANG) == child->pid) {
        status = st;
        last_data = now;  // what it wrote before exiting is still to be read
      }
    }
    const bool open = fds[0] >= 0 || fds[1] >= 0;
    if (!open && status) break;
    if (open && status && now - last_data >= k_quiet_after_exit) {
      strays = true;
      break;
    }
    pollfd polls[2];
    nfds_t count = 0;
    for (int fd : fds) {
      if (fd >= 0) polls[count++] = {fd, POLLIN, 0};
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    const int wait_ms = static_cast<int>(std::min<long long>(left, open ? 25 : 2));
    const int ready = ::poll(count ? polls : nullptr, count, wait_ms);
    if (ready <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i] < 0) continue;
      while (true) {
        const ssize_t n = ::read(fds[i], buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;  // EAGAIN: nothing more now
        if (n == 0) {
          ::close(fds[i]);
          fds[i] = -1;
          break;
        }
        last_data = Clock::now();
        const std::size_t room = command.output_limit - std::min(command.output_limit, sinks[i]->size());
        sinks[i]->append(buffer, std::min(room, static_cast<std::size_t>(n)));
        if (static_cast<std::size_t>(n) > room) {
          result.overflowed = true;
          break;
        }
      }
    }
    if (result.overflowed) break;
  }
  if (result.timed_out || result.interrupted || result.overflowed || strays) {
    // A reaped pid may be reused: then only the inherited variable is trusted.
    detail::kill_tree(status ? -1 : child->pid, child->run_id);
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  // After SIGKILL the child ends at once, unless it is stuck in the kernel
  // (a hung driver call): then it is left behind rather than waited for.
  if (!status) status = detail::wait_until(child->pid, Clock::now() + std::chrono::seconds(2));
  if (status && WIFEXITED(*status)) result.exit_code = WEXITSTATUS(*status);
  if (status && WIFSIGNALED(*status)) result.signal = WTERMSIG(*status);
  if (result.timed_out || result.interrupted || result.overflowed) result.signal.reset();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace torchfix
