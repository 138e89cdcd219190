#pragma once
// Starting a child the test does not wait for at once (a server, a torchfix
// run to interrupt): the one fork/exec of the CLI tests.

#ifndef _WIN32  // fork and exec: used by Linux-only tests alone (linux_only.hpp)
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace torchfix::testing {

/// Forks `args` (args[0] an absolute path) with exactly `env`, stdin from
/// /dev/null, stdout and stderr to `log` (created or truncated; empty path:
/// /dev/null), SIGINT at its default action as from a terminal; returns its
/// pid (the caller waits for it), or -1 when fork fails. A child that cannot
/// exec exits 127.
inline pid_t start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                   const std::filesystem::path& log = {}) {
  std::vector<std::string> strings = args;
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> argv;
  for (auto& a : strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string out_path = log.empty() ? std::string("/dev/null") : log.string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGINT, SIG_DFL);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace torchfix::testing
#endif  // _WIN32
