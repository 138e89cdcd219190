// The field trials of 2026-12-04 and 2026-12-06 (docs/gpu-runs/field-trial-*.md):
// public bug reports described as snapshots (or, where the kind is in the
// binary, real nvcc-built libraries in a real venv), run through the real
// binary, with the verdict and the first fix ("Run first:") the report's
// confirmed resolution names.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/data_copy.hpp"
#include "../support/extension_venv.hpp"
#include "../support/linux_only.hpp"
#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::fixture;
using testing::k_fixtures;
using testing::run_first;
using testing::save;
using testing::TempDir;

ProcessResult doctor(std::vector<std::string> args) {
  args.insert(args.begin(), "doctor");
  return testing::torchfix(std::move(args));
}

// Builds `name` in `dir` with the real nvcc: one loop kernel, SASS for
// `arch` ("80") only, its fatbin compressed with --compress-mode=`mode`.
std::filesystem::path compressed_library(const std::filesystem::path& dir, const std::string& name,
                                         const std::string& arch, const std::string& mode) {
  testing::write_file(dir / "k.cu",
                      "__global__ void k(float* x) { for (int i = 0; i < 64; ++i) x[threadIdx.x + i] *= 2.0f + i; }\n"
                      "void launch(float* x) { k<<<1, 32>>>(x); }\n");
  const std::filesystem::path out = dir / name;
  testing::run_ok(testing::k_nvcc.string(),
                  {"-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_" + arch + ",code=sm_" + arch,
                   "-Xfatbin=-compress-all", "--compress-mode=" + mode, (dir / "k.cu").string(), "-o", out.string()},
                  dir);
  return out;
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

// lllyasviel/stable-diffusion-webui-forge#2712 (field trial 2026-12-06,
// report 4): bitsandbytes loads libbitsandbytes_cudaXY for torch.version.cuda
// X.Y and falls back to its CPU library when the file is missing; 0.45.0 has
// none for CUDA 12.8, 0.45.3 is the first that has (recipes/extensions.toml
// [[cuda_library]], from the real wheels' file lists). The fixture's libraries
// are those of the real bitsandbytes-0.45.0-py3-none-win_amd64.whl as
// `torchfix inspect` reads them (sm_50..sm_90: no rebuild of 0.45.0 is the fix).
TEST(FieldTrial, AnExtensionWithoutTheLibraryOfTorchsCudaMovesToTheFirstReleaseWithIt) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  const std::string python = "C:\\StabilityMatrix\\Packages\\stable-diffusion-webui-forge\\venv\\Scripts\\python.exe";
  auto r = doctor({"--snapshot", k_fixtures + "T5-rtx5080-win-torch27-cu128-bitsandbytes0450.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[x] bitsandbytes 0.45.0 has no libbitsandbytes_cuda128 library for torch's CUDA 12.8: it "
                       "loads its CPU library instead"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_first(r.out), python + " -m pip install --no-deps 'bitsandbytes==0.45.3'") << r.out;
  // torch runs here: the reason names the package, not torch's wheel.
  EXPECT_NE(r.out.find("why first: torch has nothing to fix first: this makes bitsandbytes run"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("bitsandbytes 0.45.0 cannot run on GPU 0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("COMPUTE_CAPABILITY"), std::string::npos) << r.out;

  // The fixed machine: 0.45.3 adds libbitsandbytes_cuda128.dll (sm_70..sm_120 in
  // the real win_amd64 wheel). It is judged by that library alone, not by the
  // older CUDAs' libraries without sm_120.
  TempDir dir;
  nlohmann::json fixed = fixture("T5-rtx5080-win-torch27-cu128-bitsandbytes0450.json");
  auto& bnb = fixed["pythons"][0]["kernels"][0];
  bnb["version"] = "0.45.3";
  fixed["pythons"][0]["distributions"]["bitsandbytes"] = "0.45.3";
  nlohmann::json cuda128 = bnb["binaries"].back();
  std::string path = cuda128["path"];
  path.replace(path.find("cuda126"), 7, "cuda128");
  cuda128["path"] = path;
  cuda128["groups"] = nlohmann::json::parse(
      R"([{"images": ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"], "modules": 1}])");
  bnb["binaries"].push_back(cuda128);
  r = doctor({"--snapshot", save(dir, "fixed.json", fixed)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[ok] bitsandbytes 0.45.3 runs on GPU 0"), std::string::npos) << r.out;

  // The rule is per CUDA version: torch for CUDA 12.9 needs libbitsandbytes_cuda129, first in 0.46.1.
  nlohmann::json cu129 = fixed;
  cu129["pythons"][0]["torch"]["cuda"] = "12.9";
  r = doctor({"--snapshot", save(dir, "cu129.json", cu129)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("bitsandbytes 0.45.3 has no libbitsandbytes_cuda129 library"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out), python + " -m pip install --no-deps 'bitsandbytes==0.46.1'") << r.out;

  // The what-if form (`--with`, no library to read): the table says 0.45.0 has none for 12.8.
  r = testing::what_if({"--platform", "windows", "--gpu", "RTX 5080", "--driver", "572.47", "--torch", "2.7.0+cu128",
                        "--with", "bitsandbytes==0.45.0"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(run_first(r.out), "python3 -m pip install --no-deps 'bitsandbytes==0.45.3'") << r.out;
}

// Dao-AILab/flash-attention#1749 (field trial 2026-12-06, report 9): flash-attn
// 2.8.1's setup.py compresses its kernels with -compress-mode=size, which CUDA
// 12 drivers before 550.54.14 cannot load ("device kernel image is invalid";
// recipes/toolkits.toml [[fatbin_compression]]). A library built by the real
// nvcc the same way (sm_80 SASS, which the RTX 3060's 8.6 runs) is installed
// as flash-attn 2.8.1 in a real venv (METADATA "Name: flash_attn", as its
// setup.py names it; the tables' "flash-attn" matches it): on driver 535.247.01 it cannot run and
// the first fix moves to 2.8.2, whose build does not compress. The same
// library on a 550.54.14 driver runs, and so does one compressed with
// --compress-mode=speed (LZ4, no newer driver needed) on 535.
TEST(FieldTrial, KernelsCompressedForSizeNeedTheDriverOfCuda124) {
  TORCHFIX_LINUX_ONLY("builds with the real nvcc and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = testing::make_venv(dir.path());
  ASSERT_TRUE(v);
  auto build = [&](const std::string& mode) {
    return compressed_library(dir.path(), "fa_" + mode + ".so", "80", mode);
  };
  testing::install_as_wheel(*v, "flash_attn", {{"flash_attn_2_cuda.so", build("size")}}, "2.8.1");
  auto r = testing::doctor(*v, {"--driver", "535.247.01"}, "RTX 3060");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("flash_attn 2.8.1 cannot run: its kernels are compressed in a format that needs a driver "
                       "for CUDA 12.4 or newer, and the driver supports CUDA 12.2"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_first(r.out), v->python.string() + " -m pip install --no-build-isolation --no-deps flash-attn==2.8.2")
      << r.out;
  EXPECT_NE(r.out.find("Install an NVIDIA driver that supports CUDA 12.4 (>= 550.54.14 on Linux"), std::string::npos)
      << r.out;
  r = testing::doctor(*v, {"--driver", "550.54.14"}, "RTX 3060");
  EXPECT_NE(r.out.find("flash_attn 2.8.1 runs on GPU 0"), std::string::npos) << r.out;

  std::filesystem::copy_file(build("speed"), v->site / "flash_attn" / "flash_attn_2_cuda.so",
                             std::filesystem::copy_options::overwrite_existing);
  r = testing::doctor(*v, {"--driver", "535.247.01"}, "RTX 3060");
  EXPECT_NE(r.out.find("flash_attn 2.8.1 runs on GPU 0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("device kernel image is invalid"), std::string::npos) << r.out;
}

// The same decision for torch's own kernels (issue 16): a torch whose
// libtorch_cuda.so the real nvcc compressed with --compress-mode=size (sm_86
// SASS for the RTX 3060), installed as pip leaves torch 2.6.0+cu126, imports on
// driver 535.247.01 (CUDA 12.2, through minor-version compatibility) and
// cannot run a kernel; the first fix is an official wheel the driver loads
// (the resolver's choice by driver), with the reason. On 550.54.14 it runs.
TEST(FieldTrial, TorchCompressedForSizeNeedsTheDriverOfCuda124) {
  TORCHFIX_LINUX_ONLY("builds with the real nvcc and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = testing::make_venv(dir.path());
  ASSERT_TRUE(v);
  const std::filesystem::path lib = compressed_library(dir.path(), "libtorch_cuda.so", "86", "size");
  std::filesystem::create_directories(v->site / "torch/lib");
  testing::install_as_wheel(*v, "torch", {{"lib/libtorch_cuda.so", lib}}, "2.6.0+cu126");
  auto r = testing::doctor(*v, {"--driver", "535.247.01"}, "RTX 3060");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[✗] torch 2.6.0+cu126 cannot run on GPU 0 (RTX 3060, 8.6): its kernels are compressed in a "
                       "format that needs a driver for CUDA 12.4 or newer, and the driver supports CUDA 12.2"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("torch for CUDA 12.6 itself runs on this driver: an official wheel (not compressed so"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_first(r.out), v->python.string() +
                                  " -m pip install --force-reinstall torch==2.6.0 --index-url "
                                  "https://download.pytorch.org/whl/cu118")
      << r.out;
  r = testing::doctor(*v, {"--driver", "550.54.14"}, "RTX 3060");
  EXPECT_EQ(r.out.find("device kernel image is invalid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("torch 2.6.0+cu126 runs on GPU 0"), std::string::npos) << r.out;
}

// Dao-AILab/flash-attention#2168 and facebookresearch/xformers#1251 (field
// trial 2026-12-06, report 11): xformers 0.0.29 to 0.0.32.post2 dispatch their
// FlashAttention-3 kernels, built for Hopper only, on every GPU above 9.0, so
// fp16 attention fails on an RTX 5090 (recipes/extensions.toml
// [[broken_release]]); 0.0.33 stops picking FA3 there. The venv holds what the
// real PyPI 0.0.30 wheel holds, built by the real nvcc: xformers/_C.so (sm_80
// and compute_80 PTX, so it reaches 12.0) and xformers/_C_flashattention3.so
// (sm_90a only), beside a torch 2.7.0+cu128. Before, the doctor said
// "lacks kernels ... in 1 of 2 modules", a warning with a rebuild of 0.0.30.
// 0.0.33 pins torch 2.9.0 (its METADATA; 0.0.33.post2 pins 2.9.1): the first
// fix moves torch to 2.9 and xformers with it, and the machine it leaves,
// built as the 0.0.33.post2 wheel lays out its files, has no finding on xformers.
TEST(FieldTrial, AReleaseThatFailsOnTheGpuMovesToTheFixedOneWithItsTorch) {
  TORCHFIX_LINUX_ONLY("builds with the real nvcc and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = testing::make_venv(dir.path());
  ASSERT_TRUE(v);
  const auto set_torch = [&](const std::string& version) {
    testing::write_file(v->site / "torch/version.py",
                        "__version__ = '" + version + "'\ncuda = '12.8'\nhip = None\ndebug = False\n");
  };
  testing::write_file(dir / "k.cu",
                      "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n"
                      "void launch(float* x) { k<<<1, 32>>>(x); }\n");
  auto build = [&](const std::string& name, std::vector<std::string> gencodes) {
    const std::filesystem::path out = dir / name;
    std::vector<std::string> args = {"-shared", "-Xcompiler", "-fPIC"};
    for (const std::string& g : gencodes) args.insert(args.end(), {"-gencode", g});
    args.insert(args.end(), {(dir / "k.cu").string(), "-o", out.string()});
    testing::run_ok(testing::k_nvcc.string(), args, dir.path());
    return out;
  };
  const auto sm80_ptx = build("c.so", {"arch=compute_80,code=sm_80", "arch=compute_80,code=compute_80"});
  const auto hopper = build("fa3.so", {"arch=compute_90a,code=sm_90a"});
  const auto pin = [&](const std::string& version, const std::string& torch) {
    testing::write_file(
        v->site / ("xformers-" + version + ".dist-info/METADATA"),
        "Metadata-Version: 2.1\nName: xformers\nVersion: " + version + "\nRequires-Dist: torch==" + torch + "\n\n");
  };
  set_torch("2.7.0+cu128");
  testing::install_as_wheel(*v, "xformers", {{"_C.so", sm80_ptx}, {"_C_flashattention3.so", hopper}}, "0.0.30");
  pin("0.0.30", "2.7.0");

  auto r = testing::doctor(*v, {"--driver", "575.57.08"}, "RTX 5090");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("xformers 0.0.30 fails on GPU 0 (RTX 5090, 12.0): it dispatches its FlashAttention-3 "
                       "kernels, built for Hopper (sm_90a), on every GPU above 9.0"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("xformers 0.0.30 lacks kernels"), std::string::npos) << r.out;
  EXPECT_EQ(run_first(r.out), v->python.string() +
                                  " -m pip install --force-reinstall 'torch==2.9.*' --index-url "
                                  "https://download.pytorch.org/whl/cu128")
      << r.out;
  const std::string fix = testing::fix_block(r.out, "      fix: Install torch 2.9.x from the cu128 index");
  EXPECT_NE(fix.find("xformers 0.0.30 moves to 0.0.33.post2"), std::string::npos) << r.out;
  EXPECT_NE(fix.find(v->python.string() + " -m pip install --no-deps xformers==0.0.33.post2"), std::string::npos)
      << fix;
  EXPECT_EQ(r.out.find("--no-binary xformers"), std::string::npos) << r.out;

  // Hopper is what FA3 was built for: 0.0.30 runs there.
  r = testing::doctor(*v, {"--driver", "575.57.08"}, "H100");
  EXPECT_EQ(r.out.find("fails on"), std::string::npos) << r.out;

  // The machine the fix leaves: torch 2.9.1 and 0.0.33.post2's files
  // (xformers/_C.so, xformers/flash_attn_3/_C.so with sm_80, sm_90a and compute_80).
  std::filesystem::remove_all(v->site / "xformers");
  std::filesystem::remove_all(v->site / "xformers-0.0.30.dist-info");
  std::filesystem::create_directories(v->site / "xformers/flash_attn_3");
  const auto fa3 = build(
      "fa3b.so", {"arch=compute_80,code=sm_80", "arch=compute_90a,code=sm_90a", "arch=compute_80,code=compute_80"});
  set_torch("2.9.1+cu128");
  testing::install_as_wheel(*v, "xformers", {{"_C.so", sm80_ptx}, {"flash_attn_3/_C.so", fa3}}, "0.0.33.post2");
  pin("0.0.33.post2", "2.9.1");
  r = testing::doctor(*v, {"--driver", "575.57.08"}, "RTX 5090");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.find("fails on"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("was built for torch"), std::string::npos) << r.out;

  // The what-if form: no binaries, the same row and the same first fix.
  r = testing::what_if(
      {"--gpu", "RTX 5090", "--driver", "575.57.08", "--torch", "2.7.0+cu128", "--with", "xformers==0.0.30"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("xformers 0.0.30 fails on GPU 0 (RTX 5090, 12.0)"), std::string::npos) << r.out;
  EXPECT_EQ(
      run_first(r.out),
      "python3 -m pip install --force-reinstall 'torch==2.9.*' --index-url https://download.pytorch.org/whl/cu128")
      << r.out;
  EXPECT_NE(r.out.find("python3 -m pip install --no-deps xformers==0.0.33.post2"), std::string::npos) << r.out;
  // A release of the fixed line is not judged by the row.
  r = testing::what_if(
      {"--gpu", "RTX 5090", "--driver", "575.57.08", "--torch", "2.9.0+cu128", "--with", "xformers==0.0.33"});
  EXPECT_EQ(r.out.find("fails on"), std::string::npos) << r.out;
}

// The same table where the first fixed release runs on the installed torch:
// the fix moves the extension alone. A row planted in a copy of the tables
// (xformers 0.0.28.post3 and 0.0.29 both pin torch 2.5.1; the row covers 0.0.28.x).
TEST(FieldTrial, AFixedReleaseForTheInstalledTorchMovesTheExtensionAlone) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  const testing::DataCopy data;
  data.append("extensions.toml",
              "\n[[broken_release]]\ndistribution = \"xformers\"\nmin = \"0.0.28\"\nmax = \"0.0.28\"\n"
              "min_cc = \"9.0\"\nmax_cc = \"9.0\"\nfixed = \"0.0.29\"\nwhat = \"planted\"\nsource = \"test\"\n");
  TempDir dir;
  testing::write_file(dir / "empty.json", R"({"schema_version": 1})");
  SystemProcessRunner runner;
  const Environment env{{"PATH", "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}, {"TORCHFIX_DATA_DIR", data.dir()}};
  auto r = runner.run(Command{TORCHFIX_BINARY,
                              {"doctor", "--snapshot", (dir / "empty.json").string(), "--gpu", "H100", "--driver",
                               "570.124.06", "--torch", "2.5.1+cu124", "--with", "xformers==0.0.28.post3"},
                              env,
                              {},
                              std::chrono::seconds(60)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 1) << r->out << r->err;
  EXPECT_NE(r->out.find("xformers 0.0.28.post3 fails on GPU 0 (H100, 9.0): planted"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("fix: Install xformers 0.0.29 in place of 0.0.28.post3, the first release that runs "
                        "on every GPU here"),
            std::string::npos)
      << r->out;
  EXPECT_EQ(run_first(r->out), "python3 -m pip install --no-deps xformers==0.0.29") << r->out;
}

}  // namespace
}  // namespace torchfix
