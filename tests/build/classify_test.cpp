// Classifier on real log excerpts: produced here by the real tools where this
// machine can (nvcc 13.0, cmake), else quoted from the public reports cited in
// shared/facts/pytorch-build.md and shared/cases/field-cases.md.
#include "builder/classify.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

std::vector<FailureKind> kinds(std::string_view log) {
  std::vector<FailureKind> out;
  for (const BuildFailure& f : classify_log(log)) out.push_back(f.kind);
  return out;
}

std::string run_failing(const std::string& program, std::vector<std::string> args, const std::filesystem::path& cwd) {
  StreamCommand c;
  c.program = program;
  c.args = std::move(args);
  c.env = read_process_environment();
  c.working_directory = cwd.string();
  c.log_path = cwd / "run.log";
  auto r = run_streaming(c);
  EXPECT_TRUE(r && !r->succeeded());
  return testing::read_file(c.log_path);
}

TEST(Classify, RealNvccRejectingAnArch) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  TempDir tmp;
  write_file(tmp / "k.cu", "__global__ void k() {}\n");
  // nvcc 13.0 dropped Maxwell: the same message F9 shows for a too-old nvcc.
  const std::string log =
      run_failing("/usr/local/cuda/bin/nvcc", {"-c", "k.cu", "-gencode", "arch=compute_50,code=sm_50"}, tmp.path());
  auto failures = classify_log(log);
  ASSERT_EQ(failures.size(), 1u) << log;
  EXPECT_EQ(failures[0].kind, FailureKind::unsupported_arch);
  EXPECT_NE(failures[0].evidence.find("compute_50"), std::string::npos) << failures[0].evidence;
  EXPECT_NE(failures[0].fix.find("--arch auto"), std::string::npos);
}

TEST(Classify, RealCmakeWithAMissingSubmodule) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  TempDir tmp;
  write_file(tmp / "src/CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.20)\nproject(x NONE)\nadd_subdirectory(third_party/nccl)\n");
  std::filesystem::create_directories(tmp / "src/third_party/nccl");
  const std::string log = run_failing("cmake", {"-S", "src", "-B", "b"}, tmp.path());
  EXPECT_EQ(kinds(log), (std::vector<FailureKind>{FailureKind::missing_submodules})) << log;
}

TEST(Classify, PublicReportExcerpts) {
  struct Case {
    const char* log;
    FailureKind kind;
  };
  const Case cases[] = {
      // F11; PyTorch/flash-attn OOM reports.
      {"[1234/7000] Building CUDA object caffe2/CMakeFiles/torch_cuda.dir/...\n"
       "c++: fatal error: Killed signal terminated program cc1plus\ncompilation terminated.\n",
       FailureKind::oom_killed},
      {"FAILED: csrc/flash_attn/src/flash_fwd_hdim128_fp16_sm80.o\nKilled\nninja: build stopped: subcommand failed.\n",
       FailureKind::oom_killed},
      // F9.
      {"nvcc fatal   : Unsupported gpu architecture 'compute_120a'\n", FailureKind::unsupported_arch},
      // F10.
      {"/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later "
       "than 13 are not supported! The nvcc flag '-allow-unsupported-compiler' can be used to override this version "
       "check\n",
       FailureKind::host_compiler_too_new},
      {"RuntimeError: The detected CUDA version (12.4) mismatches the version that was used to compile\n"
       "PyTorch (13.0). Please make sure to use the same CUDA versions.\n",
       FailureKind::cuda_version_mismatch},
      {"Did you run 'git submodule update --init --recursive'?\n", FailureKind::missing_submodules},
      {"/usr/bin/ld: final link failed: No space left on device\n", FailureKind::disk_full},
      {"CMake Error at cmake/select_compute_arch.cmake:171 (message):\n  Unknown CUDA Architecture Name 12.0 in "
       "CUDA_SELECT_NVCC_ARCH_FLAGS\n",
       FailureKind::stale_arch_names},
      {"ValueError: Unknown CUDA arch (10.1) or GPU not supported\n", FailureKind::extension_arch_list},
      {"ValueError: invalid literal for int() with base 10: '90a'\n", FailureKind::extension_arch_list},
      {"make[2]: *** internal error: invalid --jobserver-auth string 'fifo:/tmp/GMfifo123'.  Stop.\n",
       FailureKind::jobserver},
  };
  for (const Case& c : cases) EXPECT_EQ(kinds(c.log), (std::vector<FailureKind>{c.kind})) << c.log;
}

TEST(Classify, OrdinaryOutputAndErrorsAreNotMisread) {
  const char* benign =
      "[12/345] Building CXX object c10/CMakeFiles/c10.dir/core/Allocator.cpp.o\n"
      "-- Found CUDA: /usr/local/cuda (found version \"13.0\")\n"
      "warning: the killed-process counter is 0\n"
      "error: 'foo' was not declared in this scope\n"
      "Processing 137 files\n";
  EXPECT_TRUE(classify_log(benign).empty());
  // Several kinds in one log: each once, in order of appearance.
  EXPECT_EQ(kinds("No space left on device\nKilled\nNo space left on device\n"),
            (std::vector<FailureKind>{FailureKind::disk_full, FailureKind::oom_killed}));
  EXPECT_EQ(to_string(FailureKind::oom_killed), "out of memory");
}

}  // namespace
}  // namespace torchfix
