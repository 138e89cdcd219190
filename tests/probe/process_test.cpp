// The process runner on real processes: exit codes, signals, timeouts that
// kill the whole process group, and an explicit environment.

#include "probe/process.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include "probe_test_support.hpp"

namespace torchfix {
namespace {

Command sh(const std::string& script, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  return Command{"/bin/sh", {"-c", script}, Environment{{"PATH", "/usr/bin:/bin"}}, {}, timeout};
}

TEST(ProcessRunner, ReportsExitCodeAndOutput) {
  SystemProcessRunner runner;
  auto r = runner.run(sh("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->succeeded());
}

TEST(ProcessRunner, ReportsTheKillingSignal) {
  SystemProcessRunner runner;
  auto r = runner.run(sh("kill -SEGV $$"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->signal, SIGSEGV);
}

TEST(ProcessRunner, TimeoutKillsTheWholeProcessGroup) {
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

TEST(ProcessRunner, PassesOnlyTheGivenEnvironment) {
  SystemProcessRunner runner;
  Command c = sh("echo \"[$TORCHFIX_X][$HOME]\"");
  c.env->emplace("TORCHFIX_X", "a b$c");
  auto r = runner.run(c);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->out, "[a b$c][]\n");
}

TEST(ProcessRunner, MissingProgramIsAnError) {
  SystemProcessRunner runner;
  auto r =
      runner.run(Command{"no-such-program-xyz", {}, Environment{{"PATH", "/usr/bin"}}, {}, std::chrono::seconds(1)});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no-such-program-xyz"), std::string::npos);
}

}  // namespace
}  // namespace torchfix
