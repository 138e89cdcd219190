// Toolkit and host compiler probes: parsers on real output samples, and the
// probes on the real nvcc 13.0 and compilers here, and on fake programs.

#include "probe/toolchain_probe.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "../support/repo_knowledge.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "probe/knowledge_files.hpp"
#include "probe_test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_script;

const Knowledge& knowledge() {
  return torchfix::testing::repo_knowledge();
}

TEST(NvccVersion, ParsesRealOutputsOfSeveralReleases) {
  // nvcc 13.0 as installed here (/usr/local/cuda/bin/nvcc --version).
  EXPECT_EQ(parse_nvcc_version("nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2025 NVIDIA Corporation\n"
                               "Built on Wed_Aug_20_01:58:59_PM_PDT_2025\n"
                               "Cuda compilation tools, release 13.0, V13.0.88\n"
                               "Build cuda_13.0.r13.0/compiler.36424714_0\n")
                ->str(),
            "13.0.88");
  // 12.5 (field case F10), 11.8 and 10.1 as printed by those releases.
  EXPECT_EQ(
      parse_nvcc_version("Cuda compilation tools, release 12.5, V12.5.82\nBuild cuda_12.5.r12.5/compiler.34385749_0")
          ->str(),
      "12.5.82");
  EXPECT_EQ(
      parse_nvcc_version("Cuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0")
          ->str(),
      "11.8.89");
  EXPECT_EQ(parse_nvcc_version("Cuda compilation tools, release 10.1, V10.1.243")->str(), "10.1.243");
  EXPECT_FALSE(parse_nvcc_version("bash: nvcc: command not found"));
}

TEST(NvccListGpuCode, ParsesOneArchPerLine) {
  // nvcc 13.0.88 --list-gpu-code, verbatim.
  auto archs =
      parse_list_gpu_code("sm_75\nsm_80\nsm_86\nsm_87\nsm_88\nsm_89\nsm_90\nsm_100\nsm_110\nsm_103\nsm_120\nsm_121\n");
  ASSERT_EQ(archs.size(), 12u);
  EXPECT_EQ(archs.front().name(), "sm_75");
  EXPECT_EQ(archs.back().name(), "sm_121");
  EXPECT_TRUE(parse_list_gpu_code("nvcc fatal   : Unknown option '--list-gpu-code'").empty());
}

TEST(CompilerVersion, ParsesGccAndClangBanners) {
  struct Sample {
    const char* banner;
    CompilerFamily family;
    const char* version;
  };
  const Sample samples[] = {
      {"gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022", CompilerFamily::gcc, "12.2.0"},  // here
      {"g++ (GCC) 14.2.1 20240912 (Red Hat 14.2.1-3)", CompilerFamily::gcc, "14.2.1"},               // Fedora 40
      {"gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0", CompilerFamily::gcc, "13.2.0"},                       // Ubuntu 24.04
      {"c++ (GCC) 11.4.1 20231218 (Red Hat 11.4.1-3)", CompilerFamily::gcc, "11.4.1"},               // RHEL 9
      {"x86_64-conda-linux-gnu-c++ (conda-forge gcc 12.3.0-3) 12.3.0", CompilerFamily::gcc, "12.3.0"},
      {"Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu", CompilerFamily::clang, "14.0.6"},  // here
      {"Ubuntu clang version 18.1.3 (1ubuntu1)", CompilerFamily::clang, "18.1.3"},
      {"clang version 19.1.7 (Fedora 19.1.7-3.fc41)", CompilerFamily::clang, "19.1.7"},
  };
  for (const Sample& s : samples) {
    auto parsed = parse_compiler_version(s.banner);
    ASSERT_TRUE(parsed) << s.banner;
    EXPECT_EQ(parsed->first, s.family) << s.banner;
    EXPECT_EQ(parsed->second.str(), s.version) << s.banner;
  }
  EXPECT_FALSE(parse_compiler_version("icpx: command not found"));
}

TEST(ProbeToolkits, FindsTheRealNvccAndItsArchs) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  if (!std::filesystem::exists("/usr/local/cuda/bin/nvcc")) GTEST_SKIP() << "no CUDA toolkit at /usr/local/cuda";
  SystemProcessRunner runner;
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}};
  auto toolkits = probe_toolkits(env, runner, knowledge(), {}, std::chrono::seconds(30), notes);
  ASSERT_FALSE(toolkits.empty());
  EXPECT_EQ(toolkits[0].origin, "PATH");
  ASSERT_TRUE(toolkits[0].version);
  EXPECT_GE(toolkits[0].version->major(), 11);
  EXPECT_EQ(toolkits[0].archs_source, "nvcc --list-gpu-code");
  EXPECT_FALSE(toolkits[0].archs.empty());
  // /usr/local/cuda and /usr/local/cuda-13.0 are the same nvcc: listed once.
  for (const Toolkit& t : toolkits) EXPECT_NE(t.origin, "/usr/local/cuda");
}

TEST(ProbeToolkits, OldNvccFallsBackToTheTableAndCudaHomeMismatchIsFound) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  TempDir dir;
  // An nvcc 10.2 has no --list-gpu-code: the archs come from recipes/toolkits.toml.
  write_script(dir / "old/bin/nvcc",
               "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 10.2, V10.2.89'; exit 0; fi\n"
               "echo \"nvcc fatal   : Unknown option '$1'\" >&2; exit 1\n");
  write_script(dir / "new/bin/nvcc",
               "if [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 12.8, V12.8.93'; exit 0; fi\n"
               "printf 'sm_75\\nsm_80\\nsm_86\\nsm_90\\nsm_100\\nsm_120\\n'\n");
  SystemProcessRunner runner;
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", (dir / "old/bin").string() + ":/usr/bin:/bin"}, {"CUDA_HOME", (dir / "new").string()}};
  auto toolkits = probe_toolkits(env, runner, knowledge(), {}, std::chrono::seconds(10), notes, dir.path().string());
  ASSERT_EQ(toolkits.size(), 2u);
  EXPECT_EQ(toolkits[0].origin, "PATH");
  EXPECT_EQ(toolkits[0].version->str(), "10.2.89");
  EXPECT_EQ(toolkits[0].archs_source, "table (recipes/toolkits.toml)");
  EXPECT_TRUE(std::ranges::find(toolkits[0].archs, Arch::parse("sm_75").value()) != toolkits[0].archs.end());
  EXPECT_TRUE(std::ranges::find(toolkits[0].archs, Arch::parse("sm_80").value()) == toolkits[0].archs.end());
  EXPECT_EQ(toolkits[1].origin, "CUDA_HOME");
  EXPECT_EQ(toolkits[1].archs.size(), 6u);

  Snapshot s;
  s.toolkits = toolkits;
  s.environment["CUDA_HOME"] = (dir / "new").string();
  const Diagnosis d = diagnose(s, knowledge());
  EXPECT_TRUE(std::ranges::any_of(d.findings, [](const Finding& f) { return f.id == "toolkit.cuda-home-path"; }));
}

TEST(ProbeToolkits, HangingNvccIsANoteNotAHang) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  TempDir dir;
  write_script(dir / "bin/nvcc", "sleep 30\n");
  SystemProcessRunner runner;
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", (dir / "bin").string() + ":/usr/bin:/bin"}};
  const auto start = std::chrono::steady_clock::now();
  auto toolkits =
      probe_toolkits(env, runner, knowledge(), {}, std::chrono::milliseconds(500), notes, dir.path().string());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_EQ(toolkits.size(), 1u);
  EXPECT_FALSE(toolkits[0].version);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].message.find("timed out"), std::string::npos) << notes[0].message;
}

TEST(ToolVersions, A30KbVersionLineIsParsedWithoutRecursion) {
  // std::regex recursed once per character here and overflowed the stack
  // (exit 139) on a compiler whose --version printed one 30 KB line.
  const std::string digits(30'000, '9');
  const std::string spaces = "gcc (" + std::string(30'000, ' ') + ") 12.2.0";
  EXPECT_FALSE(parse_nvcc_version("release " + digits));
  EXPECT_FALSE(parse_nvcc_version(std::string(30'000, 'r')));
  EXPECT_FALSE(parse_compiler_version("clang version " + std::string(30'000, '.')));
  auto long_word = parse_compiler_version(std::string(30'000, 'x') + "gcc (x) 12");
  ASSERT_TRUE(long_word);
  EXPECT_EQ(long_word->second.str(), "12");
  auto gcc = parse_compiler_version(spaces);
  ASSERT_TRUE(gcc);
  EXPECT_EQ(gcc->second.str(), "12.2.0");
  auto nvcc = parse_nvcc_version(std::string(30'000, 'x') + "Cuda compilation tools, release 13.0, V13.0.88");
  ASSERT_TRUE(nvcc);
  EXPECT_EQ(nvcc->str(), "13.0.88");
}

TEST(ProbeCompilers, ThirtyKilobyteVersionLineFromARealProgram) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  TempDir dir;
  // One 30 KB word before the version, and a 30 KB run of digits after "release ".
  write_script(dir / "bin/g++",
               "printf 'g++'; /usr/bin/head -c 30000 /dev/zero | /usr/bin/tr '\\0' 'x'; echo ' (GCC) 12.2.0'\n");
  write_script(dir / "bin/nvcc",
               "printf 'release '; /usr/bin/head -c 30000 /dev/zero | /usr/bin/tr '\\0' '1'; echo\n"
               "echo 'Cuda compilation tools, release 13.0, V13.0.88'\n");
  SystemProcessRunner runner;
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", (dir / "bin").string()}};
  auto compilers = probe_compilers(env, runner, std::chrono::seconds(10), notes);
  ASSERT_EQ(compilers.size(), 1u);
  EXPECT_EQ(compilers[0].family, CompilerFamily::gcc);
  ASSERT_TRUE(compilers[0].version);
  EXPECT_EQ(compilers[0].version->str(), "12.2.0");
  auto toolkits = probe_toolkits(env, runner, knowledge(), {}, std::chrono::seconds(10), notes, dir.path().string());
  ASSERT_EQ(toolkits.size(), 1u);
  ASSERT_TRUE(toolkits[0].version);
  EXPECT_EQ(toolkits[0].version->str(), "13.0.88");
}

// RHEL's older gcc lives in /opt/rh/gcc-toolset-N, off PATH: the probe
// finds it there (compiler_install's fix on RHEL installs it).
TEST(ProbeCompilers, FindsGccToolsetOffPath) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  TempDir dir;
  const std::string version = "printf 'g++ (GCC) 13.3.1 20240611 (Red Hat 13.3.1-2)\\n'\n";
  write_script(dir / "bin/g++", "printf 'g++ (GCC) 14.2.1 20240912 (Red Hat 14.2.1-3)\\n'\n");
  write_script(dir / "opt/rh/gcc-toolset-13/root/usr/bin/g++", version);
  write_script(dir / "opt/rh/gcc-toolset-13/root/usr/bin/gcc", version);
  SystemProcessRunner runner;
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", (dir / "bin").string()}};
  auto compilers = probe_compilers(env, runner, std::chrono::seconds(10), notes, dir.path().string());
  ASSERT_EQ(compilers.size(), 3u);
  EXPECT_EQ(compilers[0].path, (dir / "bin/g++").string());
  EXPECT_EQ(compilers[0].origin, "PATH");
  EXPECT_EQ(compilers[1].path, (dir / "opt/rh/gcc-toolset-13/root/usr/bin/g++").string());
  EXPECT_EQ(compilers[1].origin, k_gcc_toolset_origin);
  ASSERT_TRUE(compilers[1].version);
  EXPECT_EQ(compilers[1].version->str(), "13.3.1");
  EXPECT_TRUE(notes.empty());
}

TEST(ProbeCompilers, CrashingOrHangingCompilerIsBrokenNotHealthy) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  TempDir dir;
  write_script(dir / "bin/g++", "kill -SEGV $$\n");
  write_script(dir / "bin/clang++", "exec /bin/sleep 30\n");
  write_script(dir / "bin/nvcc", "exit 139\n");
  SystemProcessRunner runner;
  Snapshot s;
  Environment env{{"PATH", (dir / "bin").string()}};
  s.compilers = probe_compilers(env, runner, std::chrono::milliseconds(500), s.notes);
  s.toolkits =
      probe_toolkits(env, runner, knowledge(), {}, std::chrono::milliseconds(500), s.notes, dir.path().string());
  ASSERT_EQ(s.compilers.size(), 2u);
  const Diagnosis d = diagnose(s, knowledge());
  auto finding_for = [&](const std::string& path) -> const Finding* {
    for (const Finding& f : d.findings) {
      if (f.title.find(path) != std::string::npos && (f.id == "compiler.found" || f.id == "toolkit.found")) return &f;
    }
    return nullptr;
  };
  for (const char* tool : {"g++", "clang++", "nvcc"}) {
    const Finding* f = finding_for((dir / "bin" / tool).string());
    ASSERT_TRUE(f) << tool;
    EXPECT_EQ(f->severity, Severity::warning) << tool << ": " << f->title;
    EXPECT_NE(f->title.find("does not work"), std::string::npos) << f->title;
  }
  const Finding* gxx = finding_for((dir / "bin/g++").string());
  ASSERT_FALSE(gxx->details.empty());
  EXPECT_NE(gxx->details.back().find("killed by signal 11"), std::string::npos) << gxx->details.back();
  const Finding* clang = finding_for((dir / "bin/clang++").string());
  ASSERT_FALSE(clang->details.empty());
  std::string all;
  for (const std::string& d : clang->details) all += d + "\n";
  EXPECT_NE(all.find("timed out"), std::string::npos) << all;
}

TEST(ProbeCompilers, FindsTheRealCompilersAndReportsABadCxx) {
  TORCHFIX_LINUX_ONLY("probes this machine's Linux tools (nvcc, g++, python3)");
  SystemProcessRunner runner;
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}, {"CXX", "/nonexistent/g++-99"}};
  auto compilers = probe_compilers(env, runner, std::chrono::seconds(10), notes);
  if (!std::filesystem::exists("/usr/bin/g++")) GTEST_SKIP() << "no g++ in /usr/bin";
  auto gxx = std::ranges::find_if(compilers, [](const HostCompiler& c) { return c.path == "/usr/bin/g++"; });
  ASSERT_NE(gxx, compilers.end());
  EXPECT_EQ(gxx->family, CompilerFamily::gcc);
  ASSERT_TRUE(gxx->version);
  EXPECT_GE(gxx->version->major(), 9);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].message.find("/nonexistent/g++-99"), std::string::npos);
}

}  // namespace
}  // namespace torchfix
