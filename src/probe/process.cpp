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

// Returns the parent pid of every process in /proc.
// Reads "pid (comm) state ppid ..." from /proc/PID/stat: the state letter
// and the parent; nullopt when the process is gone. (comm may hold spaces
// and parentheses.)
std::optional<std::pair<char, pid_t>> process_state(long pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char stat[512];
  const ssize_t n = ::read(fd, stat, sizeof stat - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  stat[n] = '\0';
  const char* close_paren = std::strrchr(stat, ')');
  if (!close_paren || close_paren[1] == '\0') return std::nullopt;
  char state = 0;
  long ppid = 0;
  if (std::sscanf(close_paren + 1, " %c %ld", &state, &ppid) != 2) return std::nullopt;
  return std::pair{state, static_cast<pid_t>(ppid)};
}

std::unordered_map<pid_t, pid_t> process_parents() {
  std::unordered_map<pid_t, pid_t> parents;
  DIR* proc = ::opendir("/proc");
  if (!proc) return parents;
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    const auto state = process_state(pid);
    if (!state || state->first == 'Z') continue;
    parents[static_cast<pid_t>(pid)] = state->second;
  }
  ::closedir(proc);
  return parents;
}

// Says whether process `pid`'s environment holds exactly `entry`.
bool environment_holds(pid_t pid, const std::string& entry) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/environ", static_cast<long>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // Environments are a few KB; 1 MiB bounds a hostile one.
  std::string text;
  char buffer[16384];
  while (text.size() < (1u << 20)) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\0', at), text.size());
    if (std::string_view(text).substr(at, end - at) == entry) return true;
    at = end + 1;
  }
  return false;
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

Expected<Child> spawn_child(const std::string& program, const std::vector<std::string>& args, const Environment& env,
                            const std::string& working_directory, Stderr stderr_mode, ActiveRun& active) {
  Child child;
  child.run_id = std::to_string(::getpid()) + "-" + std::to_string(g_run_counter.fetch_add(1));
  // Everything the child needs is built before fork: after it only
  // async-signal-safe calls are allowed (other threads may hold locks).
  std::vector<std::string> env_strings;
  env_strings.reserve(env.size() + 1);
  for (const auto& [key, value] : env) {
    if (key != "TORCHFIX_RUN_ID") env_strings.push_back(key + "=" + value);
  }
  env_strings.push_back("TORCHFIX_RUN_ID=" + child.run_id);
  std::vector<char*> envp;
  for (std::string& entry : env_strings) envp.push_back(entry.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_strings = {program};
  arg_strings.insert(arg_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : arg_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const char* cwd = working_directory.empty() ? nullptr : working_directory.c_str();

  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int exec_status[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {out[0], out[1], err[0], err[1], exec_status[0], exec_status[1]}) {
      if (fd >= 0) ::close(fd);
    }
  };
  if (::pipe2(out, O_CLOEXEC) != 0 || (stderr_mode == Stderr::separate && ::pipe2(err, O_CLOEXEC) != 0) ||
      ::pipe2(exec_status, O_CLOEXEC) != 0) {
    const int error = errno;
    close_all();
    return fail("cannot create a pipe: " + errno_text(error));
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
  if (pid == 0) {
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
    // stdin is /dev/null, not closed: nvcc 13 fails ("Failed to preprocess
    // host compiler properties") when its stdin is closed.
    if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(stderr_mode == Stderr::separate ? err[1] : out[1], STDERR_FILENO);
    int error = 0;
    if (cwd && ::chdir(cwd) != 0) {
      error = errno;
    } else {
      ::execve(argv[0], argv.data(), envp.data());
      error = errno;
    }
    (void)!::write(exec_status[1], &error, sizeof error);
    ::_exit(127);
  }
  const int fork_error = errno;
  if (pid > 0) {
    ::setpgid(pid, pid);  // also from the parent: no race with an early kill
    active.track(pid);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  if (devnull >= 0) ::close(devnull);
  if (pid < 0) {
    close_all();
    return fail("cannot fork: " + errno_text(fork_error));
  }
  ::close(out[1]);
  out[1] = -1;
  if (err[1] >= 0) ::close(err[1]);
  err[1] = -1;
  ::close(exec_status[1]);
  exec_status[1] = -1;
  // The status pipe closes on a successful exec (close-on-exec) and carries
  // errno otherwise.
  int error = 0;
  ssize_t got = 0;
  do {
    got = ::read(exec_status[0], &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  ::close(exec_status[0]);
  exec_status[0] = -1;
  if (got == static_cast<ssize_t>(sizeof error)) {
    ::waitpid(pid, nullptr, 0);
    close_all();
    return fail(std::string(cwd && error == ENOENT ? "cannot enter the working directory: " : "") + errno_text(error));
  }
  for (int fd : {out[0], err[0]}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  child.pid = pid;
  child.out = out[0];
  child.err = err[0];
  return child;
}

namespace {

// Reaps the killed processes that were reparented to torchfix (the child
// subreaper), waiting at most half a second: left alone they would stay
// zombies, which kill(pid, 0) still finds, until torchfix exits. A zombie
// whose parent was killed too is still on its way to torchfix.
void reap_orphans(const std::set<pid_t>& killed, pid_t caller_child, pid_t self) {
  std::set<pid_t> pending = killed;
  pending.erase(caller_child);  // the caller waits for its own child
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  while (!pending.empty() && std::chrono::steady_clock::now() < deadline) {
    for (auto it = pending.begin(); it != pending.end();) {
      const auto state = process_state(*it);
      const bool reaped = ::waitpid(*it, nullptr, WNOHANG) == *it;
      const bool others = state && state->first == 'Z' && state->second != self && !killed.contains(state->second);
      it = reaped || !state || others ? pending.erase(it) : std::next(it);
    }
    if (!pending.empty()) ::poll(nullptr, 0, 5);
  }
}

}  // namespace

void kill_tree(pid_t pid, const std::string& run_id) {
  const std::string cookie = "TORCHFIX_RUN_ID=" + run_id;
  const pid_t self = ::getpid();
  const pid_t session = ::getsid(0);
  std::set<pid_t> killed;
  // Processes fork while we look: repeat until a round finds nothing new.
  for (int round = 0; round < 8; ++round) {
    const auto parents = process_parents();
    std::set<pid_t> tree;
    if (pid > 0) tree.insert(pid);
    // An orphan reparented to us (the subreaper) that started a session of
    // its own was left by a child: our children never leave our session.
    for (const auto& [process, parent] : parents) {
      if (parent != self || ::getsid(process) == session || killed.contains(process)) continue;
      tree.insert(process);
    }
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [process, parent] : parents) {
        if (tree.contains(parent) && tree.insert(process).second) grew = true;
      }
    }
    std::vector<pid_t> targets;
    for (const auto& [process, parent] : parents) {
      if (process == self || killed.contains(process)) continue;
      if (tree.contains(process) || environment_holds(process, cookie)) targets.push_back(process);
    }
    // The first look comes before any kill: once a parent dies, its children
    // move to init and only the inherited variable still ties them to us.
    if (round == 0 && pid > 0) ::kill(-pid, SIGKILL);
    if (targets.empty()) break;
    for (pid_t target : targets) {
      ::kill(target, SIGKILL);
      killed.insert(target);
    }
  }
  reap_orphans(killed, pid, self);
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
