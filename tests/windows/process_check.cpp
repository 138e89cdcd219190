// Checks SystemProcessRunner on Windows with real children (cmd.exe,
// ping.exe), run under Wine by tests/windows/wine_smoke.sh or on a Windows
// machine: a child runs and its output and exit code come back, a program
// that is not there is an Error, a timeout ends the whole tree (cmd.exe and
// the ping.exe it started) within a second or two, and the output cap ends
// a program that prints too much. Prints one line per check; exits 1 at the
// first failure, 0 when all passed.
#include <windows.h>
// after windows.h, which it needs
#include <tlhelp32.h>

#include <cstdio>
#include <string>
#include <thread>

#include "probe/process.hpp"

namespace {

using torchfix::Command;
using torchfix::SystemProcessRunner;

int g_failed = 0;

void check(bool ok, const std::string& what, std::string detail = {}) {
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\r' || detail.back() == ' ')) detail.pop_back();
  std::printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what.c_str(), detail.empty() ? "" : ": ", detail.c_str());
  if (!ok) ++g_failed;
}

// Counts the running processes whose image name is `image` (e.g. PING.EXE),
// without regard to case.
int running(const wchar_t* image) {
  HANDLE snapshot = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0);
  if (snapshot == INVALID_HANDLE_VALUE) return -1;
  PROCESSENTRY32W entry{};
  entry.dwSize = sizeof entry;
  int count = 0;
  for (BOOL more = Process32FirstW(snapshot, &entry); more; more = Process32NextW(snapshot, &entry)) {
    if (_wcsicmp(entry.szExeFile, image) == 0) ++count;
  }
  CloseHandle(snapshot);
  return count;
}

Command cmd(std::string line, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  Command command;
  command.program = "cmd.exe";
  command.args = {"/c", std::move(line)};
  command.timeout = timeout;
  return command;
}

void child_runs(SystemProcessRunner& runner) {
  auto result = runner.run(cmd("echo hello from the child"));
  check(result.has_value(), "cmd.exe /c echo starts", result ? "" : result.error().message);
  if (!result) return;
  check(result->out.find("hello from the child") != std::string::npos, "its stdout comes back", result->out);
  check(result->exit_code == 0 && result->succeeded(), "it exits 0", std::to_string(result->exit_code));
  auto failing = runner.run(cmd("exit 7"));
  check(failing && failing->exit_code == 7, "cmd.exe /c exit 7 gives exit code 7",
        failing ? std::to_string(failing->exit_code) : failing.error().message);
  auto stderr_run = runner.run(cmd("echo to-stderr 1>&2"));
  check(stderr_run && stderr_run->err.find("to-stderr") != std::string::npos && stderr_run->out.empty(),
        "stderr comes back on its own", stderr_run ? stderr_run->err : stderr_run.error().message);
}

void missing_program(SystemProcessRunner& runner) {
  Command command;
  command.program = "no-such-program-torchfix.exe";
  auto result = runner.run(command);
  check(!result.has_value(), "a missing program is an Error", result ? "it ran" : result.error().message);
}

// A Linux program (an ELF file, such as a Linux CUDA_HOME's nvcc seen
// through Wine's Z: drive) is refused before CreateProcessW: Windows would
// fail with ERROR_BAD_EXE_FORMAT, and Wine starts it outside the job.
void linux_program(SystemProcessRunner& runner, const char* elf) {
  if (!elf) return;
  Command command;
  command.program = elf;
  auto result = runner.run(command);
  check(!result.has_value() && result.error().message.find("not a Windows program") != std::string::npos,
        std::string("a Linux program (") + elf + ") is refused", result ? "it ran" : result.error().message);
}

void timeout_kills_tree(SystemProcessRunner& runner) {
  const int before = running(L"PING.EXE");
  torchfix::Expected<torchfix::ProcessResult> result = torchfix::fail("not run");
  std::thread run([&] { result = runner.run(cmd("ping -n 30 127.0.0.1", std::chrono::milliseconds(2500))); });
  Sleep(1200);
  const int during = running(L"PING.EXE");
  run.join();
  check(result.has_value(), "cmd.exe /c ping -n 30 starts", result ? "" : result.error().message);
  check(during == before + 1, "its grandchild ping.exe runs",
        std::to_string(before) + " before, " + std::to_string(during) + " during");
  if (!result) return;
  check(result->timed_out, "the 2.5 s timeout ends it", "seconds " + std::to_string(result->seconds));
  check(result->seconds < 6, "within 6 s of its start", std::to_string(result->seconds) + " s");
  Sleep(500);  // TerminateJobObject is asynchronous for the processes it ends
  const int after = running(L"PING.EXE");
  check(after == before, "no ping.exe is left running (the job ended the tree)",
        std::to_string(before) + " before, " + std::to_string(after) + " after");
}

void output_cap(SystemProcessRunner& runner) {
  Command command = cmd("for /L %i in (1,1,100000) do @echo line %i of output that goes on");
  command.output_limit = 4096;
  auto result = runner.run(command);
  check(result && result->overflowed && result->out.size() == 4096, "the output cap ends a chatty program",
        result ? std::to_string(result->out.size()) + " bytes kept" : result.error().message);
}

}  // namespace

int main(int argc, char** argv) {
  SystemProcessRunner runner;
  child_runs(runner);
  missing_program(runner);
  linux_program(runner, argc > 1 ? argv[1] : nullptr);
  timeout_kills_tree(runner);
  output_cap(runner);
  std::printf("process_check: %s\n", g_failed == 0 ? "all checks passed" : "some checks failed");
  return g_failed == 0 ? 0 : 1;
}
