// torchfix standing in for nvcc: projects that hard-code their own -gencode
// list (a CMake project, a torch.utils.cpp_extension project) built with
// --arch 8.6+PTX by the real nvcc through the stand-in, read back with
// `torchfix inspect`; a compile that bypasses it fails verification; a
// setuptools project with ninja off builds its extensions concurrently.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "../support/linux_only.hpp"
#include "builder/execute.hpp"
#include "builder/project_scan.hpp"
#include "builder/verify.hpp"
#include "test_support.hpp"
#include "toolchain.hpp"

namespace torchfix {
namespace {

using testing::read_file;
using testing::TempDir;
using testing::write_file;

// Plans a --src build of `src` for `arch` with torchfix (the real binary) as the stand-in.
BuildInputs wrapped_inputs(const testing::LocalToolchain& toolchain, const testing::Shipped& shipped,
                           const std::filesystem::path& src, const std::filesystem::path& work,
                           const std::string& arch) {
  BuildInputs in = testing::local_extension_inputs(toolchain, shipped, src, work);
  in.request.arch = {ArchMode::list, arch, std::nullopt};
  in.resources = read_resources("/", affinity_cpu_count(), work.parent_path());
  in.project = scan_project(src);
  in.wrapper_program = TORCHFIX_BINARY;
  return in;
}

// `torchfix inspect FILE`: the images its report names.
std::string inspect_text(const std::filesystem::path& file) {
  return testing::run_ok(TORCHFIX_BINARY, {"inspect", file.string()}, "/");
}

std::vector<std::string> image_names(const LibraryCheck& lib) {
  std::vector<std::string> out;
  for (const Arch& a : lib.images) out.push_back(a.name());
  return out;
}

TEST(ProjectScan, FindsHardCodedArchsNinjaOffAndExtensions) {
  const ProjectScan s = analyse_project_files(
      {{"setup.py",
        "# -gencode in a comment does not count\n"
        "cc_flag = ['-gencode', 'arch=compute_75,code=sm_75', '-gencode', 'arch=compute_121,code=sm_121']\n"
        "ext = [CUDAExtension('a', ['a.cu']), CppExtension('b', ['b.cpp'])]\n"
        "cmdclass={'build_ext': BuildExtension.with_options(use_ninja=False)}\n"},
       {"csrc/CMakeLists.txt", "set(CMAKE_CUDA_ARCHITECTURES 80 90a)\n"},
       {"cmake/Other.cmake", "set(CMAKE_CUDA_ARCHITECTURES ${LIST})\n"}},
      7);
  EXPECT_EQ(s.arch_files, (std::vector<std::string>{"setup.py", "csrc/CMakeLists.txt"}));
  EXPECT_EQ(s.asked, (std::vector<std::string>{"compute_75", "sm_75", "sm_80", "sm_90a", "compute_121", "sm_121"}));
  EXPECT_EQ(s.ninja_off, "setup.py:4");
  EXPECT_EQ(s.extensions, 2);
  EXPECT_FALSE(s.extension_loop);
  EXPECT_EQ(s.sources, 7);
  // A project that honours TORCH_CUDA_ARCH_LIST: nothing to stand in for.
  const ProjectScan plain = analyse_project_files({{"setup.py", "ext_modules=[CUDAExtension('a', ['a.cu'])]\n"}}, 1);
  EXPECT_TRUE(plain.arch_files.empty());
  EXPECT_TRUE(plain.ninja_off.empty());
}

TEST(Progress, CompilerInvocationsAreCounted) {
  EXPECT_TRUE(is_compiler_invocation("/usr/local/cuda/bin/nvcc -I/x -c csrc/a.cu -o build/a.o -O3"));
  EXPECT_TRUE(is_compiler_invocation("  x86_64-linux-gnu-gcc-12 -Wall -fPIC -c a.c -o a.o"));
  EXPECT_TRUE(is_compiler_invocation("ccache g++ -O2 -c b.cpp -o b.o"));
  EXPECT_FALSE(is_compiler_invocation("x86_64-linux-gnu-g++ -shared a.o b.o -o a.so"));
  EXPECT_FALSE(is_compiler_invocation("[3/10] /usr/local/cuda/bin/nvcc -c a.cu"));
  EXPECT_FALSE(is_compiler_invocation("running build_ext -c"));
}

TEST(ArchWrap, ProjectThatHonoursTheListGetsNoStandIn) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  TempDir tmp;
  write_file(tmp / "p/CMakeLists.txt", "project(p LANGUAGES CUDA)\nadd_library(p SHARED k.cu)\n");
  const testing::Shipped shipped = testing::load_shipped();
  auto plan = make_plan(wrapped_inputs(*toolchain, shipped, tmp / "p", tmp / "work", "8.6"));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->nvcc_wrap);
  EXPECT_EQ(plan->child_env.at("CUDACXX"), toolchain->toolkit.nvcc);
  EXPECT_TRUE(plan->files.empty());
}

TEST(ParallelExtensions, OneExtensionWithNinjaOffIsSaidToCompileSerially) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  TempDir tmp;
  write_file(tmp / "p/setup.py", "x = 1\n");
  const testing::Shipped shipped = testing::load_shipped();
  BuildInputs in = wrapped_inputs(*toolchain, shipped, tmp / "p", tmp / "work", "8.6");
  in.request.jobs = 8;
  in.project =
      analyse_project_files({{"setup.py",
                              "setup(ext_modules=[CUDAExtension('a', SOURCES)],\n"
                              "      cmdclass={'build_ext': BuildExtension.with_options(use_ninja=False)})\n"}},
                            12);
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->files.empty());
  EXPECT_EQ(plan->parallel_note,
            "can only compile serially: ninja is off (setup.py:2) and setup.py declares one extension, so its 12 "
            "source files compile one after another; a build with ninja and 8 jobs would be up to 8x faster");
  EXPECT_NE(render_plan_text(*plan).find("  parallel    can only compile serially"), std::string::npos);
}

TEST(ArchWrap, CMakeProjectWithItsOwnGencodeBuildsOnlySm86) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  TempDir tmp;
  const auto src = tmp / "kernels";
  // Hard-coded twice over: a numeric CMAKE_CUDA_ARCHITECTURES (CMake writes
  // --generate-code=...) and -gencode options. (No separable compilation: a
  // device link keeps no PTX, docs/gpu-runs/h200-build-real.md.)
  write_file(src / "CMakeLists.txt",
             "cmake_minimum_required(VERSION 3.20)\nproject(kernels LANGUAGES CXX CUDA)\n"
             "set(CMAKE_CUDA_ARCHITECTURES 75)\n"
             "add_library(kernels SHARED scale.cu add.cu)\n"
             "target_compile_options(kernels PRIVATE \"SHELL:-gencode arch=compute_80,code=sm_80\")\n");
  write_file(src / "scale.cu", "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n");
  write_file(src / "add.cu", "__global__ void add(float* x, const float* y) { x[threadIdx.x] += y[threadIdx.x]; }\n");
  const testing::Shipped shipped = testing::load_shipped();
  auto plan = make_plan(wrapped_inputs(*toolchain, shipped, src, tmp / "work", "8.6+PTX"));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->nvcc_wrap);
  EXPECT_NE(plan->nvcc_wrap->summary.find("project asks for sm_75, sm_80 (CMakeLists.txt); building sm_86 + "
                                          "compute_86"),
            std::string::npos)
      << plan->nvcc_wrap->summary;
  EXPECT_EQ(plan->child_env.at("CUDACXX"), (plan->nvcc_wrap->cuda_home / "bin/nvcc").string());
  EXPECT_NE(render_plan_text(*plan).find("project     project asks for"), std::string::npos);

  BuildObserver quiet;
  auto outcome = execute_plan(*plan, quiet);
  ASSERT_TRUE(outcome) << outcome.error().message;
  const std::string log = read_file(plan->log_path);
  ASSERT_EQ(outcome->status, BuildStatus::succeeded) << outcome->message << "\n" << log;
  ASSERT_EQ(outcome->verify->libraries.size(), 1u);
  EXPECT_EQ(image_names(outcome->verify->libraries[0]), (std::vector<std::string>{"sm_86", "compute_86"}));
  // Each compile's rewrite is in the build log.
  EXPECT_NE(log.find("torchfix nvcc: "), std::string::npos) << log;
  EXPECT_NE(log.find("arch=compute_80,code=sm_80"), std::string::npos) << log;
  const std::string inspected = inspect_text(plan->build_dir / "libkernels.so");
  EXPECT_NE(inspected.find("sm_86"), std::string::npos) << inspected;
  for (const char* absent : {"sm_75", "sm_80", "compute_75", "compute_80"}) {
    EXPECT_EQ(inspected.find(absent), std::string::npos) << absent << " in\n" << inspected;
  }
}

TEST(ArchWrap, CppExtensionWithItsOwnGencodeBuildsOnlySm86) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  if (!std::filesystem::exists("/usr/lib/python3/dist-packages/torch/utils/cpp_extension.py")) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (torch.utils.cpp_extension)";
  }
  TempDir tmp;
  const auto src = tmp / "scalek";
  // causal-conv1d's shape: a fixed -gencode list in extra_compile_args, so
  // cpp_extension leaves TORCH_CUDA_ARCH_LIST out. Debian's torch is
  // CPU-only (torch.version.cuda is None), so its CUDA version check is skipped.
  write_file(src / "setup.py",
             "import os\nimport torch.utils.cpp_extension as ce\n"
             "ce._check_cuda_version = lambda *args: None  # CPU-only torch: no CUDA version to match\n"
             "from setuptools import setup, Extension\n"
             "setup(name='scalek', version='0.1', ext_modules=[Extension('scalek', ['scalek.cu'],\n"
             "      libraries=['cudart'], library_dirs=[os.path.join(ce.CUDA_HOME, 'lib64')],\n"
             "      extra_compile_args={'cxx': [], 'nvcc': ['-gencode', 'arch=compute_75,code=sm_75',\n"
             "                                              '-gencode=arch=compute_90,code=sm_90']})],\n"
             "      cmdclass={'build_ext': ce.BuildExtension})\n");
  write_file(src / "scalek.cu",
             "#include <Python.h>\n__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n"
             "static PyModuleDef module = {PyModuleDef_HEAD_INIT, \"scalek\", nullptr, -1, nullptr};\n"
             "PyMODINIT_FUNC PyInit_scalek() { return PyModule_Create(&module); }\n");
  const testing::Shipped shipped = testing::load_shipped();
  BuildInputs in = wrapped_inputs(*toolchain, shipped, src, tmp / "work", "8.6+PTX");
  in.request.python = "/usr/bin/python3";
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->nvcc_wrap);
  EXPECT_EQ(plan->child_env.at("TORCH_CUDA_ARCH_LIST"), "8.6+PTX");
  EXPECT_EQ(plan->child_env.at("CUDA_HOME"), plan->nvcc_wrap->cuda_home.string());

  BuildObserver quiet;
  auto outcome = execute_plan(*plan, quiet);
  ASSERT_TRUE(outcome) << outcome.error().message;
  const std::string log = read_file(plan->log_path);
  ASSERT_EQ(outcome->status, BuildStatus::succeeded) << outcome->message << "\n" << log;
  EXPECT_NE(log.find("scalek.cu: replaced [-gencode arch=compute_75,code=sm_75"), std::string::npos) << log;
  ASSERT_FALSE(outcome->verify->libraries.empty());
  for (const LibraryCheck& lib : outcome->verify->libraries) {
    EXPECT_EQ(image_names(lib), (std::vector<std::string>{"sm_86", "compute_86"})) << lib.path;
  }
  const auto built = expand_glob(src, "build/lib*/*.so");
  ASSERT_EQ(built.size(), 1u);
  const std::string inspected = inspect_text(built[0]);
  EXPECT_NE(inspected.find("sm_86"), std::string::npos) << inspected;
  EXPECT_EQ(inspected.find("sm_75"), std::string::npos) << inspected;
  EXPECT_EQ(inspected.find("sm_90"), std::string::npos) << inspected;
}

TEST(ArchWrap, ACompileThatBypassesTheStandInFailsVerification) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  TempDir tmp;
  const auto src = tmp / "direct";
  write_file(src / "setup.py", "cc_flag = ['-gencode', 'arch=compute_75,code=sm_75']\n");
  write_file(src / "k.cu", "__global__ void k(float* x) { x[threadIdx.x] *= 2; }\n");
  const testing::Shipped shipped = testing::load_shipped();
  auto plan = make_plan(wrapped_inputs(*toolchain, shipped, src, tmp / "work", "8.6"));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->nvcc_wrap);
  // The project calls the real nvcc by its path: the stand-in never sees it.
  std::filesystem::create_directories(src / "build/lib.linux");
  testing::run_ok(toolchain->toolkit.nvcc,
                  {"-shared", "-Xcompiler", "-fPIC", "-gencode", "arch=compute_75,code=sm_75", "-gencode",
                   "arch=compute_86,code=sm_86", "k.cu", "-o", "build/lib.linux/k.so"},
                  src);
  const VerifyResult v = verify_outputs(*plan);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.problems[0].find("holds sm_75, which the plan does not build: a compile bypassed"), std::string::npos)
      << v.problems[0];
  // The same library is fine for a plan without the stand-in (--keep-project-archs).
  BuildInputs keep = wrapped_inputs(*toolchain, shipped, src, tmp / "work", "8.6");
  keep.request.project_archs = ProjectArchs::keep;
  auto kept = make_plan(keep);
  ASSERT_TRUE(kept);
  EXPECT_FALSE(kept->nvcc_wrap);
  EXPECT_TRUE(std::ranges::any_of(kept->warnings, [](const std::string& w) {
    return w.find("setup.py hard-codes sm_75; --keep-project-archs") != std::string::npos;
  })) << render_plan_text(*kept);
  EXPECT_TRUE(verify_outputs(*kept).ok());
}

// Start and end times of each compile, written by the compiler script below.
std::map<std::string, std::pair<double, double>> compile_times(const std::string& text) {
  std::map<std::string, std::pair<double, double>> out;
  std::istringstream lines(text);
  for (std::string what, file; lines >> what >> file;) {
    double t = 0;
    lines >> t;
    (what == "start" ? out[file].first : out[file].second) = t;
  }
  return out;
}

TEST(ParallelExtensions, NinjaOffProjectCompilesItsExtensionsConcurrently) {
  TORCHFIX_LINUX_ONLY("runs a Linux program (nvcc, git, cmake, python3, gcc) as a child");
  const auto toolchain = testing::local_toolchain();
  if (!toolchain) GTEST_SKIP() << "nvcc not installed at /usr/local/cuda";
  if (!std::filesystem::exists("/usr/lib/python3/dist-packages/wheel")) {
    GTEST_SKIP() << "/usr/bin/python3 has no wheel package (pip wheel needs it)";
  }
  TempDir tmp;
  const auto src = tmp / "ops";
  // A compiler that records when each compile starts and ends; each takes >= 2 s.
  write_file(tmp / "cc-record",
             "#!/bin/sh\ncase \" $* \" in *\" -c \"*) ;; *) exec gcc \"$@\";; esac\n"
             "for a; do case \"$a\" in *.c) src=$(basename \"$a\");; esac; done\n"
             "echo \"start $src $(date +%s.%N)\" >> " +
                 (tmp / "times").string() +
                 "\n"
                 "sleep 2; gcc \"$@\"; rc=$?\n"
                 "echo \"end $src $(date +%s.%N)\" >> " +
                 (tmp / "times").string() + "\nexit $rc\n");
  testing::make_executable(tmp / "cc-record");
  // pytorch_scatter's shape: ninja off (it passes use_ninja=False to
  // BuildExtension.with_options), one extension per op.
  std::string setup =
      "import os\nfrom setuptools import setup, Extension\n"
      "os.environ['CC'] = '" +
      (tmp / "cc-record").string() +
      "'\n"
      "build_ext_options = dict(no_python_abi_suffix=True, use_ninja=False)\n"
      "setup(name='ops', version='0.1', ext_modules=[\n";
  for (const char* op : {"scatter", "segment", "gather"}) {
    write_file(src / (std::string(op) + ".c"), std::string("int ") + op + "(void) { return 1; }\n");
    setup += std::string("    Extension('ops_") + op + "', ['" + op + ".c']),\n";
  }
  write_file(src / "setup.py", setup + "])\n");
  const testing::Shipped shipped = testing::load_shipped();
  BuildInputs in = wrapped_inputs(*toolchain, shipped, src, tmp / "work", "8.6");
  in.request.python = "/usr/bin/python3";
  in.request.jobs = 3;
  auto plan = make_plan(in);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_FALSE(plan->nvcc_wrap);
  EXPECT_NE(plan->parallel_note.find("ninja is off (setup.py:4)"), std::string::npos) << plan->parallel_note;
  ASSERT_EQ(plan->files.size(), 1u);
  EXPECT_EQ(plan->files[0].content, "[build_ext]\nparallel = 3\n");
  EXPECT_EQ(plan->child_env.at("DIST_EXTRA_CONFIG"), plan->files[0].path.string());
  EXPECT_EQ(with_jobs(*plan, 1).files[0].content, "[build_ext]\nparallel = 1\n");

  BuildObserver quiet;
  auto outcome = execute_plan(*plan, quiet);
  ASSERT_TRUE(outcome) << outcome.error().message;
  ASSERT_FALSE(outcome->steps.empty());
  ASSERT_TRUE(outcome->steps[0].result.succeeded()) << read_file(plan->log_path);
  const auto times = compile_times(read_file(tmp / "times"));
  ASSERT_EQ(times.size(), 3u) << read_file(tmp / "times");
  int overlapping = 0;
  for (const auto& [a, ta] : times) {
    for (const auto& [b, tb] : times) {
      if (a < b && ta.first < tb.second && tb.first < ta.second) ++overlapping;
    }
  }
  EXPECT_GE(overlapping, 1) << read_file(tmp / "times");
}

}  // namespace
}  // namespace torchfix
