// probe_gpus end to end: real child processes running fake nvidia-smi
// programs, a fake NVML/libcuda shared library (fake_gpu_driver.c) loaded
// with dlopen, and fake /sys and /proc trees.

#include "probe/gpu_probe.hpp"

#include <gtest/gtest.h>

#ifndef _WIN32
#include <dlfcn.h>
#endif

#include <chrono>
#include <cstdlib>

#include "../support/linux_only.hpp"
#include "../support/repo_knowledge.hpp"
#include "probe/knowledge_files.hpp"
#include "probe_test_support.hpp"

namespace torchfix {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::write_file;
using testing::write_script;

const std::string k_missing_nvml = "/nonexistent/torchfix-test/libnvidia-ml.so.1";
const std::string k_missing_cuda = "/nonexistent/torchfix-test/libcuda.so.1";

const Knowledge& knowledge() {
  return torchfix::testing::repo_knowledge();
}

// Sets FAKE_GPU_MODE for the fake library for one test.
class FakeGpuMode {
 public:
#ifdef _WIN32
  explicit FakeGpuMode(const char* mode) {
    ::_putenv_s("FAKE_GPU_MODE", mode);
  }
  ~FakeGpuMode() {
    ::_putenv_s("FAKE_GPU_MODE", "");
  }
#else
  explicit FakeGpuMode(const char* mode) {
    ::setenv("FAKE_GPU_MODE", mode, 1);
  }
  ~FakeGpuMode() {
    ::unsetenv("FAKE_GPU_MODE");
  }
#endif
};

// Counts runs and answers "not found", like a machine without nvidia-smi.
class CountingRunner final : public ProcessRunner {
 public:
  Expected<ProcessResult> run(const Command& command) override {
    ++runs;
    return fail("cannot run '" + command.program + "': no such executable on PATH");
  }
  int runs = 0;
};

bool has_note(const GpuProbeResult& result, const std::string& probe, const std::string& part) {
  for (const ProbeNote& note : result.notes) {
    if (note.probe == probe && note.message.find(part) != std::string::npos) return true;
  }
  return false;
}

std::string notes_text(const GpuProbeResult& result) {
  std::string text;
  for (const ProbeNote& note : result.notes) text += note.probe + ": " + note.message + "\n";
  return text;
}

// A PATH holding only the fake program's folder and the shell's tools.
Environment env_with_bin(const std::filesystem::path& bin) {
  return {{"PATH", bin.string() + ":/usr/bin:/bin"}};
}

GpuLibraries missing_libraries() {
  return {k_missing_nvml, k_missing_cuda};
}

#ifndef _WIN32
TEST(ProbeGpus, ThisMachineWithoutGpuGivesNoGpusAndNotes) {
  TORCHFIX_LINUX_ONLY("loads this machine's libnvidia-ml.so.1 with dlopen and looks for /dev/nvidiactl");
  if (void* nvml = ::dlopen("libnvidia-ml.so.1", RTLD_LAZY)) {
    ::dlclose(nvml);
    GTEST_SKIP() << "this machine has NVML: the GPU-less case does not apply";
  }
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has /dev/nvidiactl";
  SystemProcessRunner runner;
  const Environment env = read_process_environment();
  const GpuProbeResult result = probe_gpus(env, runner, knowledge(), 5s);
  EXPECT_TRUE(result.gpus.empty());
  EXPECT_FALSE(result.driver.version);
  EXPECT_TRUE(has_note(result, "nvml", "cannot load libnvidia-ml.so.1")) << notes_text(result);
  EXPECT_TRUE(has_note(result, "cuda", "cannot load libcuda.so.1")) << notes_text(result);
  EXPECT_TRUE(has_note(result, "driver", "no NVIDIA driver found")) << notes_text(result);
}
#endif

TEST(ProbeGpus, NvidiaSmiWithComputeCapListsEveryGpu) {
  TempDir dir;
  // Answers only the exact query the probe must send; the table header is
  // the one pasted in https://github.com/canonical/inference-snaps/issues/128
  write_script(
      dir.path() / "bin/nvidia-smi",
      "echo \"$*\" >> \"" + (dir.path() / "calls").string() +
          "\"\n"
          "if [ \"$*\" = '--query-gpu=index,name,compute_cap,driver_version,memory.total "
          "--format=csv,noheader,nounits' ]; then\n"
          "  echo '0, NVIDIA H100 80GB HBM3, 9.0, 570.133.07, 81559'\n"
          "  echo '1, NVIDIA GeForce RTX 4070, 8.9, 570.133.07, 12282'\n"
          "  exit 0\n"
          "fi\n"
          "if [ $# -eq 0 ]; then\n"
          "  echo '| NVIDIA-SMI 570.133.07             Driver Version: 570.133.07     CUDA Version: 12.8     |'\n"
          "  exit 0\n"
          "fi\n"
          "echo \"unexpected arguments: $*\"; exit 1\n");
  SystemProcessRunner runner;
  const GpuProbeResult result =
      probe_gpus(env_with_bin(dir.path() / "bin"), runner, knowledge(), 5s, dir.path(), missing_libraries());
  ASSERT_EQ(result.gpus.size(), 2u) << notes_text(result);
  EXPECT_EQ(result.gpus[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(result.gpus[0].cc, (ComputeCapability{9, 0}));
  EXPECT_EQ(result.gpus[0].memory_bytes, 81559ull * 1024 * 1024);
  EXPECT_EQ(result.gpus[0].source, "nvidia-smi");
  EXPECT_EQ(result.gpus[1].index, 1);
  EXPECT_EQ(result.gpus[1].cc, (ComputeCapability{8, 9}));
  ASSERT_TRUE(result.driver.version);
  EXPECT_EQ(result.driver.version->str(), "570.133.07");
  ASSERT_TRUE(result.driver.cuda_version);
  EXPECT_EQ(result.driver.cuda_version->str(), "12.8");
  EXPECT_EQ(result.driver.source, "nvidia-smi");
  EXPECT_FALSE(has_note(result, "nvidia-smi", "")) << notes_text(result);
}

TEST(ProbeGpus, AbsurdValuesAreRefusedWithNotes) {
  // 10,000 GPUs, compute capability 99.9 and a driver version with 50 dots
  // were taken as they came.
  TempDir dir;
  std::string dots = "570";
  for (int i = 0; i < 50; ++i) dots += ".1";
  write_script(dir.path() / "bin/nvidia-smi",
               "if [ \"$1\" = --query-gpu=index,name,compute_cap,driver_version,memory.total ]; then\n"
               "  i=0; while [ $i -lt 10000 ]; do echo \"$i, NVIDIA H100, 9.0, 570.1, 81559\"; i=$((i+1)); done\n"
               "  exit 0\n"
               "fi\n"
               "echo '| NVIDIA-SMI 570.1  Driver Version: 570.1  CUDA Version: 12.8 |'\n");
  write_script(dir.path() / "bin2/nvidia-smi",
               "if [ \"$1\" = --query-gpu=index,name,compute_cap,driver_version,memory.total ]; then\n"
               "  echo '0, NVIDIA X, 99.9, " +
                   dots +
                   ", 81559'\n"
                   "  exit 0\n"
                   "fi\n"
                   "echo '| NVIDIA-SMI 570.1  Driver Version: 570.1  CUDA Version: 12.8 |'\n");
  SystemProcessRunner runner;
  const GpuProbeResult many =
      probe_gpus(env_with_bin(dir.path() / "bin"), runner, knowledge(), 30s, dir.path(), missing_libraries());
  EXPECT_TRUE(many.gpus.empty()) << many.gpus.size() << " GPUs accepted";
  EXPECT_TRUE(has_note(many, "gpus", "10000 GPUs reported")) << notes_text(many);
  const GpuProbeResult odd =
      probe_gpus(env_with_bin(dir.path() / "bin2"), runner, knowledge(), 5s, dir.path(), missing_libraries());
  ASSERT_EQ(odd.gpus.size(), 1u) << notes_text(odd);
  EXPECT_FALSE(odd.gpus[0].cc) << odd.gpus[0].cc->str();
  EXPECT_TRUE(has_note(odd, "gpus", "compute capability 99.9")) << notes_text(odd);
  EXPECT_FALSE(odd.driver.version) << odd.driver.version->str();
  EXPECT_TRUE(has_note(odd, "driver", "is not an NVIDIA driver version")) << notes_text(odd);
}

TEST(ProbeGpus, EndlessNvidiaSmiOutputIsCapped) {
  // `yes` as nvidia-smi: 3.5 GB were kept before the timeout.
  TempDir dir;
  write_script(dir.path() / "bin/nvidia-smi", "exec yes '0, NVIDIA H100, 9.0, 570.1, 81559'\n");
  SystemProcessRunner runner;
  const auto start = std::chrono::steady_clock::now();
  const GpuProbeResult result =
      probe_gpus(env_with_bin(dir.path() / "bin"), runner, knowledge(), 30s, dir.path(), missing_libraries());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  EXPECT_TRUE(result.gpus.empty());
}

TEST(ProbeGpus, OldNvidiaSmiWithoutComputeCapFallsBackToProductNames) {
  TempDir dir;
  // Drivers before 510 reject compute_cap with exit status 2
  // (https://github.com/canonical/inference-snaps/issues/128); header from
  // mxochicale/code gpu/nvidia/LOGS.md (470.63.01).
  write_script(
      dir.path() / "bin/nvidia-smi",
      "case \"$1\" in\n"
      "  *compute_cap*) echo 'Field \"compute_cap\" is not a valid field to query.'; exit 2 ;;\n"
      "  --query-gpu=index,name,driver_version,memory.total)\n"
      "    echo '0, Tesla K80, 470.63.01, 11441'\n"
      "    echo '1, Tesla T4, 470.63.01, 15109'\n"
      "    echo '2, Quadro Imaginary 9000, 470.63.01, 8192'\n"
      "    exit 0 ;;\n"
      "  '') echo '| NVIDIA-SMI 470.63.01    Driver Version: 470.63.01    CUDA Version: 11.4     |'; exit 0 ;;\n"
      "esac\n"
      "exit 1\n");
  SystemProcessRunner runner;
  const GpuProbeResult result =
      probe_gpus(env_with_bin(dir.path() / "bin"), runner, knowledge(), 5s, dir.path(), missing_libraries());
  ASSERT_EQ(result.gpus.size(), 3u) << notes_text(result);
  EXPECT_EQ(result.gpus[0].cc, (ComputeCapability{3, 7}));
  EXPECT_EQ(result.gpus[0].source, "nvidia-smi+name");
  EXPECT_EQ(result.gpus[1].cc, (ComputeCapability{7, 5}));
  EXPECT_FALSE(result.gpus[2].cc);
  EXPECT_TRUE(has_note(result, "nvidia-smi", "GPU 2: compute capability unknown")) << notes_text(result);
  EXPECT_EQ(result.driver.version->str(), "470.63.01");
  EXPECT_EQ(result.driver.cuda_version->str(), "11.4");
}

TEST(ProbeGpus, HungNvidiaSmiIsKilledWithinTheTimeout) {
  TempDir dir;
  write_script(dir.path() / "bin/nvidia-smi", "sleep 60\n");
  SystemProcessRunner runner;
  const auto start = std::chrono::steady_clock::now();
  const GpuProbeResult result =
      probe_gpus(env_with_bin(dir.path() / "bin"), runner, knowledge(), 1s, dir.path(), missing_libraries());
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, 5s);
  EXPECT_GE(elapsed, 1s);
  EXPECT_TRUE(result.gpus.empty());
  EXPECT_TRUE(has_note(result, "nvidia-smi", "timed out after 1 s")) << notes_text(result);
}

TEST(ProbeGpus, NvidiaSmiThatCannotReachTheDriverBecomesANote) {
  TempDir dir;
  // Message and exit status 9 of a machine whose kernel module is not loaded
  // (https://github.com/ci-for-research/self-hosted-runners/issues/40).
  write_script(dir.path() / "bin/nvidia-smi",
               "echo \"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
               "Make sure that the latest NVIDIA driver is installed and running.\"\nexit 9\n");
  SystemProcessRunner runner;
  const GpuProbeResult result =
      probe_gpus(env_with_bin(dir.path() / "bin"), runner, knowledge(), 5s, dir.path(), missing_libraries());
  EXPECT_TRUE(result.gpus.empty());
  EXPECT_TRUE(has_note(result, "nvidia-smi", "exited with code 9: NVIDIA-SMI has failed because"))
      << notes_text(result);
}

// The CUDA a driver version supports is a table answer: the probe keeps only
// what it measured, and the Situation (core/situation/situation.hpp) looks it up with
// today's tables in the platform's numbering.
TEST(ProbeGpus, DriverFromProcAndNoTableAnswerInTheSnapshot) {
  TempDir dir;
  write_file(dir.path() / "proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  \n");
  CountingRunner runner;
  const GpuProbeResult result = probe_gpus({}, runner, knowledge(), 5s, dir.path(), missing_libraries());
  ASSERT_TRUE(result.driver.version) << notes_text(result);
  EXPECT_EQ(result.driver.version->str(), "580.159.04");
  EXPECT_FALSE(result.driver.cuda_version);
  EXPECT_NE(result.driver.source.find("/proc/driver/nvidia/version"), std::string::npos);
  EXPECT_EQ(runner.runs, 1);  // nvidia-smi was tried for the GPU list
}

TEST(ProbeGpus, SysModuleVersionWinsOverProc) {
  TempDir dir;
  write_file(dir.path() / "sys/module/nvidia/version", "570.133.07\n");
  write_file(dir.path() / "proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX x86_64 Kernel Module  384.98  Thu Oct 26 15:16:01 PDT 2017\n");
  CountingRunner runner;
  const GpuProbeResult result = probe_gpus({}, runner, knowledge(), 5s, dir.path(), missing_libraries());
  EXPECT_EQ(result.driver.version->str(), "570.133.07");
  EXPECT_FALSE(result.driver.cuda_version);  // a table answer: the Situation's (core/situation/situation.hpp)
}

TEST(ProbeGpus, NvmlAnswersEverythingWithoutStartingProcesses) {
  FakeGpuMode mode("ok");
  TempDir dir;
  CountingRunner runner;
  const GpuProbeResult result =
      probe_gpus({}, runner, knowledge(), 5s, dir.path(), {TORCHFIX_FAKE_GPU_DRIVER, k_missing_cuda});
  ASSERT_EQ(result.gpus.size(), 2u) << notes_text(result);
  EXPECT_EQ(result.gpus[0].name, "NVIDIA H200");
  EXPECT_EQ(result.gpus[0].cc, (ComputeCapability{9, 0}));
  EXPECT_EQ(result.gpus[0].memory_bytes, 143771ull * 1024 * 1024);
  EXPECT_EQ(result.gpus[0].source, "nvml");
  EXPECT_EQ(result.gpus[1].cc, (ComputeCapability{12, 0}));
  EXPECT_EQ(result.driver.version->str(), "580.159.04");
  EXPECT_EQ(result.driver.cuda_version->str(), "13.0");
  EXPECT_EQ(result.driver.source, "nvml");
  EXPECT_EQ(runner.runs, 0);
  EXPECT_TRUE(result.notes.empty()) << notes_text(result);
}

TEST(ProbeGpus, CudaDriverApiWhenNvmlIsMissing) {
  FakeGpuMode mode("ok");
  TempDir dir;
  write_file(dir.path() / "sys/module/nvidia/version", "580.159.04\n");
  CountingRunner runner;
  const GpuProbeResult result =
      probe_gpus({}, runner, knowledge(), 5s, dir.path(), {k_missing_nvml, TORCHFIX_FAKE_GPU_DRIVER});
  ASSERT_EQ(result.gpus.size(), 2u) << notes_text(result);
  EXPECT_EQ(result.gpus[1].name, "NVIDIA GeForce RTX 5090");
  EXPECT_EQ(result.gpus[1].cc, (ComputeCapability{12, 0}));
  EXPECT_EQ(result.gpus[1].memory_bytes, 32607ull * 1024 * 1024);
  EXPECT_EQ(result.gpus[1].source, "cuda");
  EXPECT_EQ(result.driver.version->str(), "580.159.04");
  EXPECT_EQ(result.driver.cuda_version->str(), "13.0");
  EXPECT_EQ(result.driver.source, "/sys/module/nvidia/version; CUDA version: cuda");
  EXPECT_TRUE(has_note(result, "nvml", "cannot load")) << notes_text(result);
  EXPECT_EQ(runner.runs, 0);
}

TEST(ProbeGpus, LibraryErrorCodesBecomeNotes) {
  FakeGpuMode mode("init_fails");
  TempDir dir;
  CountingRunner runner;
  const GpuProbeResult result =
      probe_gpus({}, runner, knowledge(), 5s, dir.path(), {TORCHFIX_FAKE_GPU_DRIVER, TORCHFIX_FAKE_GPU_DRIVER});
  EXPECT_TRUE(result.gpus.empty());
  EXPECT_TRUE(has_note(result, "nvml", "nvmlInit_v2 failed: NVML_ERROR_DRIVER_NOT_LOADED (9): Driver Not Loaded"))
      << notes_text(result);
  EXPECT_TRUE(has_note(result, "cuda", "cuInit failed: CUDA_ERROR_NO_DEVICE (100)")) << notes_text(result);
  // cuDriverGetVersion needs no cuInit: the CUDA version is still known.
  ASSERT_TRUE(result.driver.cuda_version);
  EXPECT_EQ(result.driver.cuda_version->str(), "13.0");
  EXPECT_EQ(result.driver.source, "CUDA version: cuda");
}

TEST(ProbeGpus, HungLibraryCallsTimeOut) {
  FakeGpuMode mode("hang");
  TempDir dir;
  CountingRunner runner;
  const auto start = std::chrono::steady_clock::now();
  const GpuProbeResult result =
      probe_gpus({}, runner, knowledge(), 500ms, dir.path(), {TORCHFIX_FAKE_GPU_DRIVER, TORCHFIX_FAKE_GPU_DRIVER});
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, 5s);  // the fake sleeps 30 s in each init
  EXPECT_TRUE(result.gpus.empty());
  EXPECT_TRUE(has_note(result, "nvml", "timed out after 0.5 s")) << notes_text(result);
  EXPECT_TRUE(has_note(result, "cuda", "timed out after 0.5 s")) << notes_text(result);
  EXPECT_TRUE(has_note(result, "nvidia-smi", "not run: NVML hung")) << notes_text(result);
  EXPECT_EQ(runner.runs, 0);
}

TEST(ProbeGpus, Wsl2LibraryFolderIsTriedWhenTheLoaderMissesIt) {
  FakeGpuMode mode("ok");
  TempDir dir;
  const std::string name = "libtorchfix-test-nvml.so.1";
  std::filesystem::create_directories(dir.path() / "usr/lib/wsl/lib");
  std::filesystem::copy_file(TORCHFIX_FAKE_GPU_DRIVER, dir.path() / "usr/lib/wsl/lib" / name);
  CountingRunner runner;
  const GpuProbeResult result = probe_gpus({}, runner, knowledge(), 5s, dir.path(), {name, k_missing_cuda});
  ASSERT_EQ(result.gpus.size(), 2u) << notes_text(result);
  EXPECT_EQ(result.gpus[0].source, "nvml");
  EXPECT_TRUE(has_note(result, "nvml", "cannot load " + name)) << notes_text(result);
}

}  // namespace
}  // namespace torchfix
