#include "probe/process.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <future>
#include <sstream>

extern char** environ;

namespace torchfix {
namespace bp = boost::process;

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
  std::istringstream dirs(path->second);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return std::nullopt;
}

Expected<ProcessResult> SystemProcessRunner::run(const Command& command) {
  const Environment env = command.env ? *command.env : read_process_environment();
  auto program = find_program(command.program, env);
  if (!program) return fail("cannot run '" + command.program + "': no such executable on PATH");

  // The child's environment as an envp array, handed to execve through the
  // executor. bp::environment is not used: its find() (Boost 1.74) compares
  // past the end of shorter entries, which ASan reports.
  std::vector<std::string> entries;
  entries.reserve(env.size());
  for (const auto& [key, value] : env) entries.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (std::string& entry : entries) envp.push_back(entry.data());
  envp.push_back(nullptr);

  boost::asio::io_context io;
  std::future<std::string> out;
  std::future<std::string> err;
  const auto start = std::chrono::steady_clock::now();
  std::error_code launch_error;
  // Own process group, so that a timeout kills grandchildren too (nvidia-smi
  // helpers, python subprocesses).
  bp::child child;
  try {
    // stdin is /dev/null, not closed: nvcc 13 fails ("Failed to preprocess
    // host compiler properties") when its stdin is closed.
    child = bp::child(
        bp::exe = *program, bp::args = command.args, bp::std_in<bp::null, bp::std_out> out, bp::std_err > err, io,
        bp::start_dir = command.working_directory.empty() ? std::string(".") : command.working_directory,
        bp::extend::on_setup = [&envp](auto& exec) { exec.env = envp.data(); },
        bp::extend::on_exec_setup = [](auto&) { ::setpgid(0, 0); }, launch_error);
  } catch (const std::exception& e) {
    return fail("cannot run '" + *program + "': " + e.what());
  }
  if (launch_error) return fail("cannot run '" + *program + "': " + launch_error.message());

  ProcessResult result;
  io.run_for(command.timeout);
  if (!io.stopped()) {
    result.timed_out = true;
    ::kill(-child.id(), SIGKILL);
    io.run();  // drain the pipes of the killed group
  }
  std::error_code wait_error;
  child.wait(wait_error);
  const int status = child.native_exit_code();
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (result.timed_out) result.signal.reset();
  result.out = out.valid() ? out.get() : std::string{};
  result.err = err.valid() ? err.get() : std::string{};
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace torchfix
