// An extension built against another torch (its binary misses torch
// symbols) whose own torch is known, and an extension linking another CUDA
// major than torch's whose project has a build for torch's CUDA on its own
// index: reports of the field trial of 2026-12-06 (b)
// (docs/gpu-runs/field-trial-2026-12-06b.md, reports 10, 1 and 5) as
// snapshots through the real binary, with the verdict and the first fix.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::fixture;
using testing::k_fixtures;
using testing::run_first;
using testing::save;
using testing::TempDir;

// kvcache-ai/sglang PR #33, kvcache-ai/ktransformers#1960: sgl_kernel
// 0.3.21+cu130 (sgl-project/whl's release asset) beside torch 2.10.0+cu130
// misses c10_cuda_check_implementation; it was built against torch 2.9.1, and
// putting torch back to 2.9.1 fixed it. Neither a rebuild of a binary-only
// release nor the same torch from another index or an NGC image comes first.
TEST(BuiltAgainst, SglKernelMovesTorchBackToTheReleaseItWasBuiltAgainst) {
  auto r =
      testing::torchfix({"doctor", "--snapshot", k_fixtures + "T6-rtxpro6000-torch2100-cu130-sgl-kernel0321-abi.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] sgl-kernel 0.3.21+cu130 was built against another torch"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out),
            "/home/u/kt/bin/python -m pip install --force-reinstall torch==2.9.1 --index-url "
            "https://download.pytorch.org/whl/cu130")
      << r.out;
  EXPECT_NE(r.out.find("fix: Install torch 2.9.1 from the cu130 index (arch list 7.5;8.0;8.6;9.0;10.0;12.0+PTX): "
                       "sgl-kernel 0.3.21+cu130 was built against torch 2.9.1 (recipes/torch-wheels.toml"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("nvcr.io/nvidia/pytorch"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("torch==2.10.0"), std::string::npos) << r.out;
}

// A torch the wheel table lacks in the extension's CUDA gets no move: the
// +cu130 build of a release paired with torch 2.8.0 (no cu130 wheels of 2.8).
TEST(BuiltAgainst, NoMoveToATorchWithoutAWheelForTheExtensionsCuda) {
  TempDir dir;
  nlohmann::json s = fixture("T6-rtxpro6000-torch2100-cu130-sgl-kernel0321-abi.json");
  s["pythons"][0]["kernels"][0]["version"] = "0.3.17+cu130";
  s["pythons"][0]["distributions"]["sgl-kernel"] = "0.3.17+cu130";
  auto r = testing::torchfix({"doctor", "--snapshot", save(dir, "s.json", s)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] sgl-kernel 0.3.17+cu130 was built against another torch"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("torch==2.8"), std::string::npos) << r.out;
}

// Dao-AILab/flash-attention#1696 with the wheel installed from its GitHub
// release: the asset's name says torch 2.5 (and CUDA 12), so torch goes to
// 2.5.x from a CUDA 12 index; without the URL (the report as filed) the
// thread's fix stays first: the rebuild against the installed torch.
TEST(BuiltAgainst, AFlashAttnReleaseWheelNameSaysWhichTorchItWasBuiltAgainst) {
  TempDir dir;
  nlohmann::json s = fixture("T8-a100-torch270-cu126-flash-attn273-abi.json");
  s["pythons"][0]["kernels"][0]["provenance"]["url"] =
      "https://github.com/Dao-AILab/flash-attention/releases/download/v2.7.3/"
      "flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl";
  auto r = testing::torchfix({"doctor", "--snapshot", save(dir, "url.json", s)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] flash-attn 2.7.3 was built against another torch"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("flash-attn 2.7.3 was built against torch 2.5.x (the release wheel it was installed from, "
                       "flash_attn-2.7.3+cu12torch2.5cxx11abiFALSE-cp310-cp310-linux_x86_64.whl)"),
            std::string::npos)
      << r.out;
  const std::string first = run_first(r.out);
  EXPECT_TRUE(
      first.starts_with("/home/u/venv/bin/python -m pip install --force-reinstall 'torch==2.5.*' "
                        "--index-url https://download.pytorch.org/whl/cu12"))
      << r.out;

  r = testing::torchfix({"doctor", "--snapshot", k_fixtures + "T8-a100-torch270-cu126-flash-attn273-abi.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(run_first(r.out), "torchfix build flash-attn --arch 8.0 --ref v2.7.3") << r.out;
  EXPECT_EQ(r.out.find("nvcr.io/nvidia/pytorch"), std::string::npos) << r.out;
}

// vllm-project/vllm#44335: PyPI's vllm 0.22.0 links libcudart.so.13 beside
// torch 2.11.0+cu129 on a CUDA 12.9 driver. The first fix is vLLM's cu129
// build from its own index, torch staying; the driver upgrade comes after.
TEST(BuiltAgainst, VllmOfAnotherCudaMovesToItsBuildForTorchsCuda) {
  auto r =
      testing::torchfix({"doctor", "--snapshot", k_fixtures + "T7-a6000-driver575-torch211-cu129-vllm022-cu13.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] vllm 0.22.0 cannot run: it was built with CUDA 13"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out),
            "/home/u/.venv/bin/python -m pip install --force-reinstall --no-deps vllm==0.22.0 --extra-index-url "
            "https://wheels.vllm.ai/0.22.0/cu129")
      << r.out;

  // On a CUDA 13 driver: the import still fails on libcudart.so.13; the same
  // cu129 build keeps torch (a torch for CUDA 13 is the other way).
  TempDir dir;
  nlohmann::json s = fixture("T7-a6000-driver575-torch211-cu129-vllm022-cu13.json");
  s["driver"]["version"] = "580.95.05";
  s["driver"]["cuda_version"] = "13.0";
  r = testing::torchfix({"doctor", "--snapshot", save(dir, "d580.json", s)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] vllm 0.22.0 cannot load: it links libcudart.so.13 (CUDA 13)"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out),
            "/home/u/.venv/bin/python -m pip install --force-reinstall --no-deps vllm==0.22.0 --extra-index-url "
            "https://wheels.vllm.ai/0.22.0/cu129")
      << r.out;
  EXPECT_EQ(r.out.find("vllm==0.26.0"), std::string::npos) << r.out;

  // A release no source names a cu129 index for: no index is printed.
  s["pythons"][0]["kernels"][0]["version"] = "0.23.0";
  s["pythons"][0]["distributions"]["vllm"] = "0.23.0";
  r = testing::torchfix({"doctor", "--snapshot", save(dir, "v023.json", s)});
  EXPECT_EQ(r.out.find("wheels.vllm.ai"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace torchfix
