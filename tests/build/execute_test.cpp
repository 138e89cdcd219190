// Execution through the real process layer: streaming, Ctrl-C, and the OOM
// retry with a compiler launcher that plays the OOM killer. The real CUDA
// compile is in real_compile_test.cpp.
#include "builder/execute.hpp"

#include <signal.h>

#include <gtest/gtest.h>

#include <thread>

#include "../support/linux_only.hpp"
#include "test_support.hpp"
#include "toolchain.hpp"

namespace torchfix {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

TEST(Stream, WritesTheLogAndHandsOverLines) {
  TORCHFIX_LINUX_ONLY("runs sh children in process groups and signals them");
  TempDir tmp;
  std::vector<std::string> lines;
  StreamCommand c;
  c.program = "sh";
  c.args = {"-c", "echo one; echo two >&2; printf 'no newline'; exit 3"};
  c.env = read_process_environment();
  c.log_path = tmp / "logs/x.log";
  c.on_line = [&](std::string_view l) { lines.emplace_back(l); };
  auto r = run_streaming(c);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_FALSE(r->succeeded());
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two", "no newline"}));
  EXPECT_EQ(read_file(tmp / "logs/x.log"), "one\ntwo\nno newline");
  c.program = "no-such-program-torchfix";
  EXPECT_FALSE(run_streaming(c));
}

// Whether `pid` still runs: a zombie (killed, waiting for its parent, here
// init, to reap it) does not, though kill(pid, 0) still finds it.
bool running(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  const auto state = stat.rfind(") ");
  return state != std::string::npos && stat[state + 2] != 'Z';
}

TEST(Stream, CtrlCStopsTheWholeProcessGroupWith130) {
  TORCHFIX_LINUX_ONLY("runs sh children in process groups and signals them");
  TempDir tmp;
  pid_t grandchild = 0;
  StreamCommand c;
  c.program = "sh";
  c.args = {"-c", "sleep 60 & echo child $!; wait"};
  c.env = read_process_environment();
  c.log_path = tmp / "x.log";
  c.on_line = [&](std::string_view l) {
    if (l.starts_with("child ")) {
      grandchild = std::stoi(std::string(l.substr(6)));
      ::raise(SIGINT);  // what the terminal sends on Ctrl-C
    }
  };
  auto r = run_streaming(c);
  clear_interrupt();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(r->exit_code, 130);
  EXPECT_LT(r->seconds, 10.0);
  ASSERT_GT(grandchild, 0);
  bool gone = false;
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = !running(grandchild);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(gone) << "sleep " << grandchild << " survived Ctrl-C";
}

TEST(Stream, CtrlCKillsJobsThatIgnoreSigintInTheirOwnProcessGroups) {
  TORCHFIX_LINUX_ONLY("runs sh children in process groups and signals them");
  // ninja runs each compile job in a process group of its own; a job that
  // ignores SIGINT, and a parent (ninja) waiting for it, outlived Ctrl-C when
  // only the build's group got SIGKILL.
  TempDir tmp;
  const auto job_pid = tmp / "job.pid";
  StreamCommand c;
  c.program = "sh";
  c.args = {"-c", "trap '' INT; setsid sh -c 'trap \"\" INT; echo $$ > " + job_pid.string() +
                      "; exec sleep 1000' & echo started; wait"};
  c.env = read_process_environment();
  c.log_path = tmp / "x.log";
  c.on_line = [&](std::string_view l) {
    if (l == "started") {
      for (int i = 0; i < 250 && read_file(job_pid).empty(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      ::raise(SIGINT);
    }
  };
  auto r = run_streaming(c);
  clear_interrupt();
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->interrupted);
  EXPECT_EQ(r->exit_code, 130);
  EXPECT_LT(r->seconds, 15.0);
  const std::string text = read_file(job_pid);
  ASSERT_FALSE(text.empty());
  const int job = std::stoi(text);
  for (int i = 0; i < 100 && running(job); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(running(job)) << "compile job " << job << " survived Ctrl-C";
}

TEST(Execute, NinjaProgressParser) {
  EXPECT_EQ(parse_ninja_progress("[12/345] Building CXX object a.o"), (std::pair{12, 345}));
  EXPECT_FALSE(parse_ninja_progress("[x/3] a"));
  EXPECT_FALSE(parse_ninja_progress("-- Configuring done"));
}

class RecordingObserver : public BuildObserver {
 public:
  void retrying(const PlanStep&, int from, int to, const BuildFailure& f) override {
    retries.push_back({from, to});
    evidence.push_back(f.evidence);
  }
  void output_line(const PlanStep&, std::string_view line) override {
    if (parse_ninja_progress(line)) ++progress_lines;
  }
  std::vector<std::pair<int, int>> retries;
  std::vector<std::string> evidence;
  int progress_lines = 0;
};

TEST(Execute, OomKillIsRetriedWithHalfTheJobsAndResumes) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda: cannot build the CUDA fixture";
  TempDir tmp;
  const auto src = tmp / "proj";
  write_file(src / "CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.20)\nproject(oom LANGUAGES CXX CUDA)\n"
             "add_library(oom SHARED a.cpp b.cpp c.cpp k.cu)\n");
  for (const char* f : {"a", "b", "c"})
    write_file(src / (std::string(f) + ".cpp"), std::string("int ") + f + "() { return 1; }\n");
  write_file(src / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n");
  // Plays the OOM killer: while MAX_JOBS > 2, compiles of the project (not
  // CMake's compiler checks) are SIGKILLed with the message gcc prints when
  // cc1plus is killed.
  const auto wrapper = tmp / "oom-launcher.sh";
  write_file(
      wrapper,
      "#!/bin/sh\ncase \"$*\" in *oom.dir*) big=1;; esac\n"
      "if [ -n \"$big\" ] && [ \"${MAX_JOBS:-1}\" -gt 2 ]; then\n"
      "  echo 'c++: fatal error: Killed signal terminated program cc1plus' >&2\n  kill -9 $$\nfi\nexec \"$@\"\n");
  testing::make_executable(wrapper);

  const testing::Shipped shipped = testing::load_shipped();
  BuildInputs in = testing::local_extension_inputs(*toolchain, shipped, src, tmp / "work");
  in.request.jobs = 8;
  in.request.arch = {ArchMode::list, "8.6", std::nullopt};
  in.resources = {8, "test", 64ull << 30, "test", 100ull << 30, "/"};
  in.launcher = wrapper.string();
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->front_end, "cmake");

  RecordingObserver observer;
  auto outcome = execute_plan(*plan, observer);
  ASSERT_TRUE(outcome) << outcome.error().message;
  EXPECT_EQ(outcome->status, BuildStatus::succeeded) << outcome->message << "\n" << read_file(plan->log_path);
  ASSERT_EQ(outcome->steps.size(), 2u);
  EXPECT_EQ(outcome->steps[0].jobs_tried, (std::vector<int>{8}));
  EXPECT_EQ(outcome->steps[1].jobs_tried, (std::vector<int>{8, 4, 2}));
  EXPECT_EQ(observer.retries, (std::vector<std::pair<int, int>>{{8, 4}, {4, 2}}));
  ASSERT_FALSE(observer.evidence.empty());
  EXPECT_NE(observer.evidence[0].find("Killed signal"), std::string::npos);
  EXPECT_EQ(outcome->final_jobs, 2);
  EXPECT_GT(observer.progress_lines, 0);
  const std::string log = read_file(plan->log_path);
  EXPECT_NE(log.find("step build (jobs 2): cmake --build"), std::string::npos);
  EXPECT_NE(log.find("-j 2"), std::string::npos);

  // With at most one retry the build gives up at 4 jobs and says why.
  std::filesystem::remove_all(plan->build_dir);
  auto limited = execute_plan(*plan, observer, run_streaming, 1);
  ASSERT_TRUE(limited) << limited.error().message;
  EXPECT_EQ(limited->status, BuildStatus::failed);
  EXPECT_EQ(limited->steps.back().jobs_tried, (std::vector<int>{8, 4}));
  ASSERT_FALSE(limited->failures.empty());
  EXPECT_EQ(limited->failures.front().kind, FailureKind::oom_killed);
}

TEST(Execute, BlockedPlansDoNotRun) {
  BuildPlan plan;
  plan.blockers.push_back("dirty tree");
  RecordingObserver observer;
  auto outcome = execute_plan(plan, observer, [](const StreamCommand&) -> Expected<StreamResult> {
    ADD_FAILURE() << "ran a blocked plan";
    return StreamResult{};
  });
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->status, BuildStatus::blocked);
  EXPECT_EQ(outcome->message, "dirty tree");
}

}  // namespace
}  // namespace torchfix
