// The one toolchain decision (core/situation/toolchain.hpp) on field-case snapshots and
// the real knowledge tables and recipes (recipes/).
#include "core/situation/toolchain.hpp"
#include "core/situation/situation.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/repo_knowledge.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return torchfix::testing::repo_knowledge();
}

Snapshot fixture(const std::string& name) {
  std::ifstream in(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  auto s = snapshot_from_json(nlohmann::json::parse(text.str()));
  EXPECT_TRUE(s) << name;
  return s ? *s : Snapshot{};
}

Toolchain decide(const Snapshot& s) {
  ToolchainRequest request;
  request.recipe = knowledge().build_recipe(k_generic_recipe);
  EXPECT_NE(request.recipe, nullptr);
  return decide_toolchain(situate(s, knowledge()).toolchain_facts(), knowledge(), request);
}

bool listed(const Snapshot& s, const std::string& path) {
  return std::ranges::any_of(s.compilers, [&](const HostCompiler& c) { return c.path == path; });
}

// F15: CXX=clang++-19 is outside nvcc 12.6's bounds (clang < 18); the choice
// stays in the clang family (clang++-17 with clang-17), never a made-up path.
TEST(Toolchain, F15PicksAnInBoundsCompilerOfTheSameFamily) {
  const Snapshot s = fixture("F15-rtx4090-clang19-nvcc126");
  const Toolchain t = decide(s);
  ASSERT_TRUE(t.toolkit);
  EXPECT_EQ(t.toolkit->nvcc, "/usr/local/cuda-12.6/bin/nvcc");
  ASSERT_TRUE(t.current);
  EXPECT_EQ(t.current->path, "/usr/bin/clang++-19");
  EXPECT_TRUE(t.current_outside_bounds);
  ASSERT_TRUE(t.compiler) << t.compiler_error;
  EXPECT_EQ(t.compiler->cxx.path, "/usr/bin/clang++-17");
  EXPECT_EQ(t.compiler->cc, "/usr/bin/clang-17");
  EXPECT_TRUE(listed(s, t.compiler->cxx.path) && listed(s, t.compiler->cc));
  EXPECT_EQ(render(t.arch, ArchFormat::torch), "8.9+PTX");
}

// The old env code turned clang++-17 into "clangcc-17" by replacing "g++".
TEST(Toolchain, NoPrintedCompilerPathIsMadeUp) {
  for (const char* name : {"F15-rtx4090-clang19-nvcc126", "env-mixed-a6000-5090", "toolchain-container-cgroup",
                           "env-gb10-triton35", "F10-rtx4090-gcc14-nvcc125"}) {
    const Snapshot s = fixture(name);
    const Toolchain t = decide(s);
    if (!t.compiler) continue;
    EXPECT_TRUE(listed(s, t.compiler->cxx.path)) << name << ": " << t.compiler->cxx.path;
    if (!t.compiler->cc.empty()) {
      EXPECT_TRUE(listed(s, t.compiler->cc)) << name << ": " << t.compiler->cc;
    }
  }
}

TEST(Toolchain, GccOnlyMachineWithTooNewGccGetsNoCompiler) {
  const Toolchain t = decide(fixture("F10-rtx4090-gcc14-nvcc125"));
  ASSERT_TRUE(t.toolkit);
  EXPECT_FALSE(t.compiler);
  EXPECT_TRUE(t.current_outside_bounds);
  EXPECT_NE(t.compiler_error.find("gcc < 14"), std::string::npos) << t.compiler_error;
  // The install advice is the doctor's (compiler_install), for the
  // snapshot's distribution (Fedora 40 here): one command, and the compiler
  // it installs.
  EXPECT_NE(t.compiler_error.find("Install gcc 13 (sudo dnf install gcc13-c++)"), std::string::npos)
      << t.compiler_error;
  EXPECT_EQ(t.compiler_error.find("apt"), std::string::npos) << t.compiler_error;
  Snapshot rocky = fixture("F10-rtx4090-gcc14-nvcc125");
  rocky.platform.os = "Rocky Linux 9.4 (Blue Onyx)";
  const Toolchain on_rocky = decide(rocky);
  EXPECT_NE(on_rocky.compiler_error.find("(sudo dnf install gcc-toolset-13-gcc-c++)"), std::string::npos)
      << on_rocky.compiler_error;
  EXPECT_NE(on_rocky.compiler_error.find("finds /opt/rh/gcc-toolset-13/root/usr/bin/g++"), std::string::npos)
      << on_rocky.compiler_error;
  // Once installed, gcc-toolset-13 is the choice, with its own gcc as CC,
  // and never the compiler a build would use without torchfix.
  rocky.compilers.push_back({"/opt/rh/gcc-toolset-13/root/usr/bin/g++", std::string(k_gcc_toolset_origin),
                             CompilerFamily::gcc, Version::parse("13.3.1")});
  rocky.compilers.push_back({"/opt/rh/gcc-toolset-13/root/usr/bin/gcc", std::string(k_gcc_toolset_origin),
                             CompilerFamily::gcc, Version::parse("13.3.1")});
  const Toolchain installed = decide(rocky);
  ASSERT_TRUE(installed.compiler) << installed.compiler_error;
  EXPECT_EQ(installed.compiler->cxx.path, "/opt/rh/gcc-toolset-13/root/usr/bin/g++");
  EXPECT_EQ(installed.compiler->cc, "/opt/rh/gcc-toolset-13/root/usr/bin/gcc");
  ASSERT_TRUE(installed.current);
  EXPECT_NE(installed.current->origin, k_gcc_toolset_origin);
}

// MAX_JOBS comes from the snapshot's cgroup limits, not from this machine.
TEST(Toolchain, JobsComeFromTheSnapshotsCgroupLimits) {
  const Snapshot s = fixture("toolchain-container-cgroup");
  const Resources r = resources_of(s.platform);
  EXPECT_EQ(r.cpus, 6);  // 64 CPUs, cpu.max quota 6.5
  EXPECT_NE(r.cpus_source.find("cpu.max"), std::string::npos) << r.cpus_source;
  ASSERT_TRUE(r.memory_bytes);
  EXPECT_EQ(*r.memory_bytes, 20ull << 30);  // memory.max room wins over 400 GiB MemAvailable
  const Toolchain t = decide(s);
  // cuda-extension: 2 GiB per job, 1 nvcc thread; (20 GiB - 2 GiB reserve)
  // / 2 GiB = 9 by memory, 6 by the CPU quota.
  EXPECT_EQ(t.jobs.jobs, 6) << t.jobs.reason;
  // Two toolkits: the one matching torch's CUDA 12.8.
  ASSERT_TRUE(t.toolkit);
  EXPECT_EQ(t.toolkit->nvcc, "/usr/local/cuda-12.8/bin/nvcc");
}

// A CUDA 13 nvcc on a driver that supports CUDA 12.9 builds a torch that
// cannot load ("CUDA driver version is insufficient"): the decision takes
// the installed 12.x nvcc, or says which CUDA to install.
TEST(Toolchain, NoNvccOfANewerMajorThanTheDriver) {
  Snapshot s;
  s.gpus = {{0, "NVIDIA GeForce RTX 5090", ComputeCapability{12, 0}, std::nullopt, "nvml"}};
  s.driver.version = Version::parse("575.51.03");
  s.driver.cuda_version = Version({12, 9});
  s.toolkits = {{"/usr/local/cuda/bin/nvcc", "PATH", Version::parse("13.0.88"), {}, "table"}};
  ToolchainRequest request;
  request.recipe = knowledge().build_recipe("pytorch");
  ASSERT_NE(request.recipe, nullptr);
  const Toolchain none = decide_toolchain(situate(s, knowledge()).toolchain_facts(), knowledge(), request);
  EXPECT_FALSE(none.toolkit);
  EXPECT_NE(none.toolkit_reason.find("this driver supports CUDA 12.9"), std::string::npos) << none.toolkit_reason;
  EXPECT_NE(none.toolkit_reason.find("Install CUDA >= 12.8 with major <= 12"), std::string::npos)
      << none.toolkit_reason;
  s.toolkits.push_back({"/usr/local/cuda-12.8/bin/nvcc", "/usr/local/cuda-*", Version::parse("12.8.93"), {}, "table"});
  const Toolchain t = decide_toolchain(situate(s, knowledge()).toolchain_facts(), knowledge(), request);
  ASSERT_TRUE(t.toolkit) << t.toolkit_reason;
  EXPECT_EQ(t.toolkit->nvcc, "/usr/local/cuda-12.8/bin/nvcc");
  // With the driver unknown, the newest nvcc is taken as before.
  s.driver = {};
  const Toolchain unknown = decide_toolchain(situate(s, knowledge()).toolchain_facts(), knowledge(), request);
  ASSERT_TRUE(unknown.toolkit);
  EXPECT_EQ(unknown.toolkit->nvcc, "/usr/local/cuda/bin/nvcc");
}

TEST(Toolchain, Gb10WithNvcc128CompilesSm120) {
  Snapshot s;
  s.gpus = {{0, "NVIDIA GB10", ComputeCapability{12, 1}, std::nullopt, "nvml"}};
  s.toolkits = {{"/usr/local/cuda-12.8/bin/nvcc", "PATH", Version::parse("12.8.93"), {}, "table"}};
  const Toolchain t = decide(s);
  ASSERT_TRUE(t.toolkit) << t.toolkit_reason;
  EXPECT_EQ(render(t.arch, ArchFormat::torch), "12.0+PTX");
  EXPECT_NE(t.arch_reason.find("no sm_121"), std::string::npos) << t.arch_reason;
}

TEST(Toolchain, ToolkitMatchingTorchCudaMajorWinsOverNewer) {
  Snapshot s;
  s.gpus = {{0, "NVIDIA H100", ComputeCapability{9, 0}, std::nullopt, "nvml"}};
  s.toolkits = {{"/usr/local/cuda-13.0/bin/nvcc", "PATH", Version::parse("13.0.88"), {}, "table"},
                {"/usr/local/cuda-12.8/bin/nvcc", "PATH", Version::parse("12.8.93"), {}, "table"}};
  PythonEnv env;
  env.torch = TorchBuild{"2.7.1+cu128", "12.8", std::nullopt, {}, std::nullopt, ""};
  s.pythons = {env};
  EXPECT_EQ(decide(s).toolkit->nvcc, "/usr/local/cuda-12.8/bin/nvcc");
  s.pythons.clear();
  EXPECT_EQ(decide(s).toolkit->nvcc, "/usr/local/cuda-13.0/bin/nvcc");
}

// sm_61 ends at CUDA 12.9: the window has a last version and no first one,
// never "CUDA >= 1.0".
TEST(Toolchain, NvccWindowsHaveBothEnds) {
  const auto pascal = knowledge().nvcc_window_for({6, 1});
  ASSERT_TRUE(pascal);
  EXPECT_EQ(pascal->str(), "CUDA <= 12.9");
  EXPECT_FALSE(knowledge().first_nvcc_for({6, 1}));
  EXPECT_EQ(knowledge().nvcc_window_for({8, 6})->str(), "CUDA >= 11.0");
  EXPECT_EQ(knowledge().nvcc_window_for({3, 5})->str(), "CUDA <= 11.8");
  Toolkit cuda13{"/usr/local/cuda-13.0/bin/nvcc", "PATH", Version::parse("13.0.88"), {}, "table"};
  auto none = choose_toolkit({cuda13}, arch_list_for_gpus({{7, 0}}, PtxPolicy::newest), &knowledge(), std::nullopt);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("Install CUDA <= 12.9"), std::string::npos) << none.error().message;
  EXPECT_EQ(none.error().message.find("1.0"), std::string::npos) << none.error().message;
}

// 'a' targets from nvcc 12.0 (sm_90a), 'f' targets from 12.9, as
// recipes/toolkits.toml lists them; `nvcc --list-gpu-code` prints only the
// generic targets, so a probed 12.8 that lists sm_120 still cannot build 12.0f.
TEST(Toolchain, VariantTargetsNeedTheFirstNvccTheTableListsThemIn) {
  EXPECT_EQ(knowledge().first_nvcc_for_variant(ArchVariant::specific), Version({12, 0}));
  EXPECT_EQ(knowledge().first_nvcc_for_variant(ArchVariant::family), Version({12, 9}));
  EXPECT_FALSE(knowledge().first_nvcc_for_variant(ArchVariant::generic));
  const std::vector<Arch> listed = {*Arch::parse("sm_90"), *Arch::parse("sm_100"), *Arch::parse("sm_120")};
  const Toolkit cuda118{"/usr/local/cuda-11.8/bin/nvcc", "PATH", Version::parse("11.8.89"), listed, "probe"};
  const Toolkit cuda120{"/usr/local/cuda-12.0/bin/nvcc", "PATH", Version::parse("12.0.140"), listed, "probe"};
  const Toolkit cuda128{"/usr/local/cuda-12.8/bin/nvcc", "PATH", Version::parse("12.8.93"), listed, "probe"};
  const Toolkit cuda129{"/usr/local/cuda-12.9/bin/nvcc", "PATH", Version::parse("12.9.86"), listed, "probe"};
  const ArchList family = *parse_arch_list("12.0f");
  const auto old = choose_toolkit({cuda128}, family, &knowledge(), std::nullopt);
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message.find("Install CUDA >= 12.9"), std::string::npos) << old.error().message;
  EXPECT_TRUE(choose_toolkit({cuda129}, family, &knowledge(), std::nullopt));
  const ArchList specific = *parse_arch_list("9.0a");
  EXPECT_FALSE(choose_toolkit({cuda118}, specific, &knowledge(), std::nullopt));
  EXPECT_TRUE(choose_toolkit({cuda120}, specific, &knowledge(), std::nullopt));
  EXPECT_FALSE(choose_toolkit({cuda120}, specific, nullptr, std::nullopt));
}

TEST(Toolchain, RecipesAreKnownToCore) {
  for (const char* name : {"pytorch", "flash-attn", "causal-conv1d", "xformers", "vllm", "bitsandbytes"}) {
    const Recipe* r = knowledge().build_recipe(name);
    ASSERT_NE(r, nullptr) << name;
    EXPECT_FALSE(r->arch_variable.empty()) << name;
  }
  EXPECT_EQ(knowledge().build_recipe("no-such-recipe"), nullptr);
}

// MSVC against nvcc's _MSC_VER range (core/situation/toolchain_msvc.cpp).
HostCompiler msvc(const std::string& version) {
  return {"C:\\VS\\cl.exe", "vswhere", CompilerFamily::msvc, Version::parse(version)};
}

// _MSC_VER is major * 100 + minor; nvcc 13.0 takes 1920 to 1949 inclusive,
// as its header's `_MSC_VER < 1920 || _MSC_VER >= 1950` rejects the rest.
TEST(ToolchainMsvc, Nvcc130AcceptsMscVer1920To1949) {
  const HostCompilerBounds* bounds = knowledge().host_bounds_for(*Version::parse("13.0.88"));
  ASSERT_NE(bounds, nullptr);
  EXPECT_EQ(msc_ver(*Version::parse("19.44.35217")), 1944);
  EXPECT_EQ(msvc_fit(msvc("19.19.27054"), bounds), MsvcFit::too_old);
  EXPECT_EQ(msvc_fit(msvc("19.20"), bounds), MsvcFit::inside);
  EXPECT_EQ(msvc_fit(msvc("19.49.1"), bounds), MsvcFit::inside);
  EXPECT_EQ(msvc_fit(msvc("19.50.35717"), bounds), MsvcFit::too_new);
  EXPECT_EQ(msvc_range_text(*bounds), "19.20 to 19.49");
  HostCompiler unknown = msvc("19.44");
  unknown.version.reset();
  EXPECT_EQ(msvc_fit(unknown, bounds), MsvcFit::unknown);
  // CUDA 13.1/13.2: no header read, so no range and no verdict.
  const HostCompilerBounds* later = knowledge().host_bounds_for(*Version::parse("13.2"));
  ASSERT_NE(later, nullptr);
  EXPECT_EQ(msvc_fit(msvc("19.44"), later), MsvcFit::unknown);
  EXPECT_EQ(msvc_range_text(*later), "");
}

// VS 2026 beside VS 2022 Build Tools: the build would use the newest (19.50,
// outside the range); the decision takes 19.44, the one nvcc 13.0 accepts.
TEST(ToolchainMsvc, TheNewestMsvcIsCurrentAndTheOneInsideTheRangeIsChosen) {
  const Snapshot s = fixture("win-vs2026-beside-buildtools2022-nvcc130-rtx4090");
  const Toolchain t = decide(s);
  ASSERT_TRUE(t.current);
  EXPECT_EQ(t.current->version->str(), "19.50.35717");
  EXPECT_TRUE(t.current_outside_bounds);
  ASSERT_TRUE(t.compiler) << t.compiler_error;
  EXPECT_EQ(t.compiler->cxx.version->str(), "19.44.35217");
  EXPECT_EQ(t.compiler->cc, "");

  const Snapshot alone = fixture("win-vs2026-msvc1950-nvcc130-rtx4090");
  const Toolchain none = decide(alone);
  EXPECT_FALSE(none.compiler);
  EXPECT_NE(none.compiler_error.find("nvcc 13.0.88 accepts MSVC 19.20 to 19.49. Install an MSVC toolset of 19.20 to "
                                     "19.49 with the Visual Studio Installer"),
            std::string::npos)
      << none.compiler_error;
}

}  // namespace
}  // namespace torchfix
