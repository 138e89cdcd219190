// Extensions whose kernels cover the GPU but that do not load beside the
// installed torch (core/diagnosis/extension_loading.cpp): one linking the
// CUDA runtime of another major than torch's (torchvision 0.22.0, a cu128
// wheel, over torch 2.11.0+cu130: "libcudart.so.12: cannot open shared
// object file", docs/gpu-runs/h100-torch-abi.md), and torch's companions
// built for another torch, which come back from torch's own index. The
// kernels are built by the real nvcc; the CUDA 12 runtime they link is a
// stub libcudart.so.12 built by gcc (no CUDA 12 toolkit is installed here,
// which is the case the check is about), and torch's libc10.so a stub too. Each venv is real; the doctor runs
// as the real binary.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "../support/extension_venv.hpp"
#include "../support/linux_only.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_file;
using namespace testing;  // tests/support/extension_venv.hpp

// Makes the venv's fake torch `version` built for CUDA `cuda` ("13.0").
void set_torch(const Venv& v, const std::string& version, const std::string& cuda) {
  write_file(v.site / "torch/version.py", "from typing import Optional\n__version__ = '" + version +
                                              "'\ndebug = False\ncuda: Optional[str] = '" + cuda +
                                              "'\ngit_version = 'x'\nhip: Optional[str] = None\n");
}

// Builds dir/_C.so: sm_90 kernels by the real nvcc, linked to a stub
// libcudart.so.12 (DT_NEEDED libcudart.so.12, as a CUDA 12 build links it)
// and, for a torch C++ extension (`torch_extension`), to libc10.so as
// torch.utils.cpp_extension links it.
fs::path build_cuda12_linked(const fs::path& dir, bool torch_extension = true) {
  write_file(dir / "stub/cudart.c", "int cudart_stub;\n");
  run_ok("/usr/bin/env",
         {"gcc", "-shared", "-fPIC", "-Wl,-soname,libcudart.so.12", "-o", (dir / "stub/libcudart.so").string(),
          "cudart.c"},
         dir / "stub");
  write_file(dir / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n");
  std::vector<std::string> nvcc = {"-shared",
                                   "-Xcompiler",
                                   "-fPIC",
                                   "-cudart",
                                   "none",
                                   "-gencode",
                                   "arch=compute_90,code=sm_90",
                                   "k.cu",
                                   "-Xlinker",
                                   "--no-as-needed",
                                   "-L" + (dir / "stub").string(),
                                   "-lcudart",
                                   "-o",
                                   "_C.so"};
  if (torch_extension) nvcc.push_back("-lc10");  // link_libc10 puts libc10.so in the same stub folder
  if (torch_extension) link_libc10(dir);
  run_ok(k_nvcc.string(), nvcc, dir);
  return dir / "_C.so";
}

// Builds dir/_C.so: sm_90 kernels by the real nvcc with the static runtime.
fs::path build_static_runtime(const fs::path& dir) {
  write_file(dir / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n");
  run_ok(k_nvcc.string(),
         {"-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_90,code=sm_90", "k.cu", "-o", "_C.so"}, dir);
  return dir / "_C.so";
}

// Writes the METADATA of `name` `version` in `v` with Requires-Dist `requirement`.
void require(const Venv& v, const std::string& name, const std::string& version, const std::string& requirement) {
  write_file(
      v.site / (name + "-" + version + ".dist-info/METADATA"),
      "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\nRequires-Dist: " + requirement + "\n\n");
}

TEST(ExtensionLoadingCli, ACudaTwelveTorchvisionBesideACu130TorchCannotLoadAndComesBackFromTorchsIndex) {
  TORCHFIX_LINUX_ONLY("builds ELF libraries with gcc and nvcc and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  set_torch(*v, "2.9.0+cu130", "13.0");
  install_as_wheel(*v, "torchvision", {{"_C.so", build_cuda12_linked(dir.path())}}, "0.22.0");
  require(*v, "torchvision", "0.22.0", "torch==2.7.0");
  const ProcessResult r = doctor(*v);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[✗] torchvision 0.22.0 cannot load: it links libcudart.so.12 (CUDA 12) and torch "
                       "2.9.0+cu130 brings the CUDA 13 runtime"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("torchvision 0.22.0 runs"), std::string::npos) << r.out;
  // Not a rebuild: torch's own index holds the torchvision built for it.
  EXPECT_NE(r.out.find("Run first: " + v->python.string() +
                       " -m pip install --force-reinstall torch==2.9.0 torchvision --index-url "
                       "https://download.pytorch.org/whl/cu130\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fix: torchvision 0.22.0 does not match the installed torch 2.9.0+cu130: reinstall torch "
                       "2.9.0 with its companions from the cu130 index"),
            std::string::npos)
      << r.out;
}

TEST(ExtensionLoadingCli, AnExtensionLinkingTorchsOwnCudaMajorLoads) {
  TORCHFIX_LINUX_ONLY("builds ELF libraries with gcc and nvcc and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  set_torch(*v, "2.7.0+cu128", "12.8");
  install_as_wheel(*v, "kext", {{"_C.so", build_cuda12_linked(dir.path())}});
  const ProcessResult r = doctor(*v);
  EXPECT_NE(r.out.find("[✓] kext 0.1 runs on GPU 0 (H200, 9.0)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libcudart.so.12"), std::string::npos) << r.out;
}

// A library that is no torch extension (JAX's jax-cuda12-plugin beside a
// CUDA 13 torch) brings its own runtime (nvidia-cuda-runtime-cu12, through its
// RUNPATH): it is judged by its kernels alone.
TEST(ExtensionLoadingCli, ALibraryThatDoesNotLinkTorchIsNotJudgedByTorchsRuntime) {
  TORCHFIX_LINUX_ONLY("builds ELF libraries with gcc and nvcc and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());
  ASSERT_TRUE(v);
  set_torch(*v, "2.9.0+cu130", "13.0");
  install_as_wheel(*v, "plugin12", {{"_C.so", build_cuda12_linked(dir.path(), false)}});
  const ProcessResult r = doctor(*v);
  EXPECT_NE(r.out.find("[✓] plugin12 0.1 runs on GPU 0 (H200, 9.0)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("libcudart.so.12"), std::string::npos) << r.out;
}

TEST(ExtensionLoadingCli, ACompanionPinnedToAnotherTorchComesBackFromTorchsIndex) {
  TORCHFIX_LINUX_ONLY("builds ELF libraries with nvcc and makes a venv with the Linux python3");
  REQUIRE_TOOLS();
  TempDir dir;
  auto v = make_venv(dir.path());  // torch 2.6.0+cu126
  ASSERT_TRUE(v);
  install_as_wheel(*v, "torchvision", {{"_C.so", build_static_runtime(dir.path())}}, "0.20.1");
  require(*v, "torchvision", "0.20.1", "torch==2.5.1");
  const ProcessResult r = doctor(*v);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("[✗] torchvision 0.20.1 was built for torch 2.5.1, not the installed 2.6.0+cu126"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Run first: " + v->python.string() +
                       " -m pip install --force-reinstall torch==2.6.0 torchvision --index-url "
                       "https://download.pytorch.org/whl/cu126\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("rebuild torchvision"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace torchfix
