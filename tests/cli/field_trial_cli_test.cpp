// The field trial of 2026-12-04 (docs/gpu-runs/field-trial-2026-12-04.md):
// public bug reports described as snapshots, run through the real binary,
// with the verdict and the first fix ("Run first:") the report's confirmed
// resolution names.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/linux_only.hpp"
#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::fixture;
using testing::k_fixtures;
using testing::save;
using testing::TempDir;

ProcessResult doctor(std::vector<std::string> args) {
  args.insert(args.begin(), "doctor");
  return testing::torchfix(std::move(args));
}

// The line after "Run first: ", or "" when the summary has none.
std::string run_first(const std::string& out) {
  const auto at = out.find("Run first: ");
  if (at == std::string::npos) return "";
  const auto start = at + std::string("Run first: ").size();
  return out.substr(start, out.find('\n', start) - start);
}

// open-mmlab/mmcv#2201: mmcv-full built in place on an A100 (sm_80 only), run
// on a V100. Its 1.x setup.py builds no ops and renames the package 'mmcv'
// without MMCV_WITH_OPS=1, so the rebuild must set it.
TEST(FieldTrial, MmcvFullCheckoutRebuildKeepsItsOps) {
  auto r = doctor({"--snapshot", k_fixtures + "T1-v100-mmcv-full-editable-built-for-a100.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] mmcv-full 1.6.1 cannot run on GPU 0 (Tesla V100-SXM2-32GB, 7.0)"), std::string::npos)
      << r.out;
  const std::string first = run_first(r.out);
  EXPECT_TRUE(first.starts_with("cd /root/mmcv && ")) << first;
  EXPECT_NE(first.find("MMCV_WITH_OPS=1"), std::string::npos) << first;
  EXPECT_NE(first.find("FORCE_CUDA=1"), std::string::npos) << first;
  EXPECT_NE(first.find("TORCH_CUDA_ARCH_LIST=7.0"), std::string::npos) << first;
  EXPECT_NE(first.find("-m pip install --no-build-isolation --no-deps -e ."), std::string::npos) << first;
}

// rusty1s/pytorch_scatter#391: torch 2.1.0 with torch-scatter from PyG's
// torch 2.0 page: "undefined symbol" at import. The wheel for the installed
// torch comes from its own page; torch stays.
TEST(FieldTrial, PygWheelForAnotherTorchMovesToItsPage) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = doctor({"--snapshot", k_fixtures + "T2-a100-torch210-torch-scatter-for-torch20.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] torch-scatter 2.1.1+pt20cu118 was built for torch 2.0.x, not the installed 2.1.0+cu118"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("local tag +pt20cu118 names torch 2.0"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out),
            "/home/u/venv/bin/python -m pip install --force-reinstall --no-deps --only-binary torch-scatter "
            "torch-scatter -f https://data.pyg.org/whl/torch-2.1.0+cu118.html")
      << r.out;
}

// The tag names a torch series: every patch release of it is the same ABI
// (one page serves 2.1.x), and a three-digit tag is major 1 (pt111: 1.11).
TEST(FieldTrial, PygLocalTagNamesATorchSeries) {
  TempDir dir;
  nlohmann::json same = fixture("T2-a100-torch210-torch-scatter-for-torch20.json");
  same["pythons"][0]["torch"]["version"] = "2.1.2+cu118";
  same["pythons"][0]["distributions"]["torch"] = "2.1.2+cu118";
  same["pythons"][0]["distributions"]["torch-scatter"] = "2.1.2+pt21cu118";
  same["pythons"][0]["kernels"][0]["version"] = "2.1.2+pt21cu118";
  auto r = doctor({"--snapshot", save(dir, "same.json", same)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("was built for torch"), std::string::npos) << r.out;

  nlohmann::json old = same;
  old["pythons"][0]["distributions"]["torch-scatter"] = "2.0.9+pt111cu113";
  old["pythons"][0]["kernels"][0]["version"] = "2.0.9+pt111cu113";
  r = doctor({"--snapshot", save(dir, "old.json", old)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("torch-scatter 2.0.9+pt111cu113 was built for torch 1.11.x"), std::string::npos) << r.out;
}

// state-spaces/mamba#745 (field trial 2026-12-06): PyPI's mamba-ssm 2.2.4
// on an RTX 5090. Its setup.py downloads the prebuilt wheel again unless
// MAMBA_FORCE_BUILD=TRUE and passes a fixed -gencode list, so
// TORCH_CUDA_ARCH_LIST=12.0 rebuilt the same sm_53..sm_90 kernels; the
// rebuild forces the build and adds sm_120 through NVCC_APPEND_FLAGS
// (recipes/build/mamba-ssm.toml).
TEST(FieldTrial, MambaRebuildForcesTheBuildAndAddsTheArchThroughNvcc) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  auto r = doctor({"--snapshot", k_fixtures + "T4-rtx5090-torch271-mamba-ssm224.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] mamba-ssm 2.2.4 cannot run on GPU 0"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out), "torchfix build mamba-ssm --arch 12.0 --ref v2.2.4");
  EXPECT_NE(r.out.find("NVCC_APPEND_FLAGS='-gencode arch=compute_120,code=sm_120' MAMBA_FORCE_BUILD=TRUE "
                       "/home/u/venv/bin/python -m pip install --no-build-isolation --no-binary mamba-ssm"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("TORCH_CUDA_ARCH_LIST=12.0 /home/u/venv/bin/python -m pip install --no-build-isolation "
                       "--no-binary mamba-ssm"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace torchfix
