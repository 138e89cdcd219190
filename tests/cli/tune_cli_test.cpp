// `torchfix tune` and the NGC container answers of `torchfix doctor`, through
// the real binary: what-if container verdicts, the container beside the wheel
// fix, the notes inside an NGC image, and tune on a machine without a GPU.

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "../support/linux_only.hpp"
#include "probe/process.hpp"

namespace torchfix {
namespace {

ProcessResult torchfix(std::vector<std::string> args, Environment env = {}) {
  env.emplace("PATH", "/usr/bin:/bin");
  env.emplace("HOME", ::testing::TempDir());
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

std::vector<std::string> what_if(std::vector<std::string> extra) {
  std::vector<std::string> args = {"doctor", "--no-binaries"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(NgcCli, BlackwellOnR575GetsAnNgcImageBesideTheWheelFix) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = torchfix(what_if({"--gpu", "RTX 5070 Ti", "--driver", "575.51.03", "--torch", "2.6.0+cu124"}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const auto wheel = r.out.find("download.pytorch.org/whl/cu12");
  const auto image = r.out.find(
      "docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it --rm "
      "nvcr.io/nvidia/pytorch:25.06-py3");
  ASSERT_NE(wheel, std::string::npos) << r.out;
  ASSERT_NE(image, std::string::npos) << r.out;
  EXPECT_LT(wheel, image) << "the container comes after the wheel fix";
}

TEST(NgcCli, BlackwellOnR560GetsNoImageAndTheR570Floor) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = torchfix(what_if({"-v", "--gpu", "RTX 5070 Ti", "--driver", "560.35.03", "--torch", "2.6.0+cu124"}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.find("docker run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no NGC PyTorch image runs with this driver"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(R570) or newer"), std::string::npos) << r.out;
}

TEST(NgcCli, TheArticles2305ImageIsRefusedForA120GpuWithTheTagThatWould) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = torchfix(what_if(
      {"-v", "--gpu", "RTX 5070 Ti", "--driver", "575.51.03", "--container", "nvcr.io/nvidia/pytorch:23.05-py3"}));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("nvcr.io/nvidia/pytorch:23.05-py3 will not run here"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("predates compute capability 12.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nvcr.io/nvidia/pytorch:25.06-py3"), std::string::npos) << r.out;
  auto h200 = torchfix(what_if({"--gpu", "H200", "--driver", "580.159.04", "--container", "25.11"}));
  EXPECT_NE(h200.out.find("nvcr.io/nvidia/pytorch:25.11-py3 runs on every GPU here"), std::string::npos) << h200.out;
}

TEST(NgcCli, BadContainerValuesGetOneLineAndExitTwo) {
  auto r = torchfix(what_if({"--gpu", "H200", "--container", "pytorch/pytorch:latest"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nvcr.io/nvidia/pytorch:YY.MM-py3"), std::string::npos) << r.err;
  auto unknown = torchfix(what_if({"--gpu", "H200", "--container", "nvcr.io/nvidia/pytorch:19.01-py3"}));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("not in recipes/ngc-pytorch.toml"), std::string::npos) << unknown.err;
}

TEST(NgcCli, InsideAnNgcImageTheDoctorSaysSoAndAboutTf32) {
  auto r = torchfix(what_if({"-v", "--gpu", "RTX 5070 Ti", "--driver", "575.51.03", "--torch", "2.6.0+cu124"}),
                    {{"NVIDIA_PYTORCH_VERSION", "24.11"},
                     {"PIP_CONSTRAINT", "/etc/pip/constraint.txt"},
                     {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1"}});
  EXPECT_NE(r.out.find("Running inside NVIDIA's PyTorch container 24.11"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("will not apply inside this NGC container"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1"), std::string::npos) << r.out;
}

TEST(TuneCli, WithoutAGpuExitsTwoWithOneLine) {
  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  auto r = torchfix({"tune"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(std::ranges::count(r.err, '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("torchfix tune: no NVIDIA GPU found"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace torchfix
