// The process runner on real processes: exit codes, signals, timeouts that
// kill the whole process group, and an explicit environment.

#include "probe/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <thread>

#include "../support/linux_only.hpp"
#include "probe_test_support.hpp"

#ifndef _WIN32  // every test below is Linux-only (TORCHFIX_LINUX_ONLY)

namespace torchfix {
namespace {

Command sh(const std::string& script, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  return Command{"/bin/sh", {"-c", script}, Environment{{"PATH", "/usr/bin:/bin"}}, {}, timeout};
}

TEST(ProcessRunner, ReportsExitCodeAndOutput) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  SystemProcessRunner runner;
  auto r = runner.run(sh("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->succeeded());
}

TEST(ProcessRunner, ReportsTheKillingSignal) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  SystemProcessRunner runner;
  auto r = runner.run(sh("kill -SEGV $$"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->signal, SIGSEGV);
}

TEST(ProcessRunner, TimeoutKillsTheWholeProcessGroup) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  testing::TempDir dir;
  const auto marker = dir / "grandchild.pid";
  SystemProcessRunner runner;
  const auto start = std::chrono::steady_clock::now();
  auto r = runner.run(sh("sleep 60 & echo $! > " + marker.string() + "; wait", std::chrono::milliseconds(500)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  const int grandchild = std::stoi(testing::read_file(marker));
  // The grandchild got SIGKILL with its group. It is gone, or a zombie when
  // the init of a container does not reap orphans: either way not running.
  auto running = [&] {
    const std::string stat = testing::read_file("/proc/" + std::to_string(grandchild) + "/stat");
    if (stat.empty()) return false;
    const auto state = stat.find(") ");
    return state != std::string::npos && stat[state + 2] != 'Z';
  };
  for (int i = 0; i < 50 && running(); ++i) usleep(20'000);
  EXPECT_FALSE(running()) << "sleep " << grandchild << " outlived the timeout";
}

// Says whether process `pid` still runs (a zombie does not count: in a
// container whose init does not reap, killed orphans stay zombies).
bool running(int pid) {
  const std::string stat = testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  const auto state = stat.rfind(") ");
  return state != std::string::npos && stat[state + 2] != 'Z';
}

// Waits up to 5 s for `pid` to stop running; returns whether it did.
bool ends(int pid) {
  for (int i = 0; i < 250 && running(pid); ++i) usleep(20'000);
  return !running(pid);
}

// Waits up to 10 s for `file` to hold a pid; returns it, or 0.
int pid_in(const std::filesystem::path& file) {
  for (int i = 0; i < 500; ++i) {
    const std::string text = testing::read_file(file);
    if (!text.empty() && text.back() == '\n') return std::stoi(text);
    usleep(20'000);
  }
  return 0;
}

TEST(ProcessRunner, SetsidGrandchildHoldingStdoutDoesNotHangTheRun) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  // What `printf '#!/bin/sh\nsetsid sleep 1000 &\n' > nvidia-smi` does: the
  // program exits at once, its grandchild (another session, so not in the
  // group) keeps the output pipe open for 1000 s.
  testing::TempDir dir;
  const auto marker = dir / "sleeper.pid";
  SystemProcessRunner runner;
  auto r = runner.run(sh("setsid sh -c 'echo $$ > " + marker.string() + "; exec sleep 1000' & echo done"));
  ASSERT_TRUE(r);
  EXPECT_LT(r->seconds, 3.0);
  EXPECT_EQ(r->out, "done\n");
  EXPECT_EQ(r->exit_code, 0);
  const int sleeper = pid_in(marker);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(ends(sleeper)) << "sleep " << sleeper << " outlived the run";
}

TEST(ProcessRunner, TimeoutBoundsTheRunEvenWhenASetsidGrandchildHoldsTheOutput) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  testing::TempDir dir;
  const auto marker = dir / "sleeper.pid";
  SystemProcessRunner runner;
  auto r = runner.run(sh("setsid sh -c 'echo $$ > " + marker.string() + "; exec sleep 1000' & sleep 1000",
                         std::chrono::milliseconds(500)));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->seconds, 4.0);
  const int sleeper = pid_in(marker);
  ASSERT_GT(sleeper, 0);
  EXPECT_TRUE(ends(sleeper)) << "sleep " << sleeper << " outlived the timeout";
}

TEST(ProcessRunner, EndlessOutputIsCutAtTheLimit) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  SystemProcessRunner runner;
  Command c = sh("yes nvidia-smi-line");
  c.output_limit = 1 << 20;
  auto r = runner.run(c);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->overflowed);
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(r->out.size(), std::size_t{1} << 20);
  EXPECT_LT(r->seconds, 5.0);
}

TEST(ProcessRunner, InterruptKillsTheWholeTreeAndRefusesNewRuns) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  testing::TempDir dir;
  const auto child_pid = dir / "child.pid";
  const auto sleeper_pid = dir / "sleeper.pid";
  SystemProcessRunner runner;
  auto running_run = std::async(std::launch::async, [&] {
    return runner.run(sh("echo $$ > " + child_pid.string() + "; setsid sh -c 'echo $$ > " + sleeper_pid.string() +
                             "; exec sleep 1000' & sleep 1000",
                         std::chrono::seconds(60)));
  });
  const int child = pid_in(child_pid);
  const int sleeper = pid_in(sleeper_pid);
  ASSERT_GT(child, 0);
  ASSERT_GT(sleeper, 0);
  ::kill(::getpid(), SIGINT);  // what the terminal sends on Ctrl-C
  auto r = running_run.get();
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->interrupted);
  EXPECT_LT(r->seconds, 10.0);
  EXPECT_EQ(interrupt_signal(), SIGINT);
  EXPECT_TRUE(ends(child));
  EXPECT_TRUE(ends(sleeper)) << "the setsid grandchild " << sleeper << " survived Ctrl-C";
  EXPECT_FALSE(runner.run(sh("true")));  // torchfix is stopping: nothing new starts
  clear_interrupt();
  EXPECT_TRUE(runner.run(sh("true")));
}

TEST(ProcessRunner, ExecFailureIsAnErrorWithTheReason) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  testing::TempDir dir;
  testing::write_file(dir / "not-a-program",
                      "\x7f"
                      "ELF garbage");
  ::chmod((dir / "not-a-program").c_str(), 0755);
  SystemProcessRunner runner;
  auto r = runner.run(Command{(dir / "not-a-program").string(), {}, Environment{}, {}, std::chrono::seconds(5)});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not-a-program"), std::string::npos) << r.error().message;
}

TEST(ProcessRunner, PassesOnlyTheGivenEnvironment) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  SystemProcessRunner runner;
  Command c = sh("echo \"[$TORCHFIX_X][$HOME]\"");
  c.env->emplace("TORCHFIX_X", "a b$c");
  auto r = runner.run(c);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->out, "[a b$c][]\n");
  // Plus the variable that marks its descendants for the kill of the tree.
  auto marked = runner.run(sh("echo \"$TORCHFIX_RUN_ID\""));
  ASSERT_TRUE(marked);
  EXPECT_TRUE(marked->out.starts_with(std::to_string(::getpid()) + "-")) << marked->out;
}

TEST(ProcessRunner, MissingProgramIsAnError) {
  TORCHFIX_LINUX_ONLY("runs /bin/sh children and reads /proc");
  SystemProcessRunner runner;
  auto r =
      runner.run(Command{"no-such-program-xyz", {}, Environment{{"PATH", "/usr/bin"}}, {}, std::chrono::seconds(1)});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no-such-program-xyz"), std::string::npos);
}

}  // namespace
}  // namespace torchfix

#endif  // _WIN32
