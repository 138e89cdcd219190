// Killing a whole process tree (kill_tree): what /proc says of a process,
// its parent and its inherited TORCHFIX_RUN_ID, and the reaping of what was
// reparented to torchfix, the child subreaper. Part of the one process
// runner (process.cpp).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "probe/process_child.hpp"

namespace torchfix::detail {
namespace {

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

// Returns the parent pid of every process in /proc (zombies left out).
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

}  // namespace torchfix::detail
