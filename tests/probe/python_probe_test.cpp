// Python probe: real interpreters, a real (CPU-only) torch from Debian's
// python3-torch, and fake torch packages whose import crashes, hangs or fails.

#include "probe/python_probe.hpp"

#include <gtest/gtest.h>

#include "../support/linux_only.hpp"
#include "probe_test_support.hpp"

namespace torchfix {
namespace {

using testing::TempDir;
using testing::write_file;

// A fake torch package: version.py as real wheels write it, and an __init__
// that does `body` on import.
void fake_torch(const std::filesystem::path& site, const std::string& body) {
  write_file(site / "torch/version.py",
             "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
             "__version__ = '2.6.0+cu126'\ndebug = False\ncuda: Optional[str] = '12.6'\n"
             "git_version = '1eba9b3aa3c43f86f4a2c807ac8e12c4a7767340'\nhip: Optional[str] = None\n");
  write_file(site / "torch/__init__.py", body);
}

std::vector<PythonEnv> probe(const Environment& env, TorchImport import, std::chrono::milliseconds timeout,
                             std::vector<ProbeNote>& notes) {
  SystemProcessRunner runner;
  PythonProbeOptions options;
  options.interpreters = {"/usr/bin/python3"};
  options.import = import;
  options.timeout = timeout;
  return probe_pythons(options, env, runner, notes);
}

class PythonProbe : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  }
};

TEST_F(PythonProbe, ReadsDebiansCpuOnlyTorchWithAndWithoutImport) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  if (!std::filesystem::exists("/usr/lib/python3/dist-packages/torch/version.py")) {
    GTEST_SKIP() << "Debian's python3-torch is not installed (apt-get install python3-torch)";
  }
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}};
  for (TorchImport import : {TorchImport::skip, TorchImport::run}) {
    auto envs = probe(env, import, std::chrono::seconds(120), notes);
    ASSERT_EQ(envs.size(), 1u);
    const PythonEnv& p = envs[0];
    EXPECT_EQ(p.status, PythonStatus::ok) << p.error;
    ASSERT_TRUE(p.torch);
    EXPECT_TRUE(p.torch->version.starts_with("1.") || p.torch->version.starts_with("2.")) << p.torch->version;
    EXPECT_FALSE(p.torch->cuda) << "Debian's torch is CPU-only";
    EXPECT_EQ(p.torch->location, "/usr/lib/python3/dist-packages/torch");
    ASSERT_TRUE(p.python_version);
    EXPECT_TRUE(p.python_version->starts_with("3."));
  }
}

TEST_F(PythonProbe, DistributionsComeFromTheirFolderNamesFirstOnPathWins) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  TempDir dir;
  const auto first = dir.path() / "first";
  const auto second = dir.path() / "second";
  write_file(first / "flash_attn-2.5.6.dist-info/METADATA", "Name: flash_attn\nVersion: 2.5.6\n\n");
  write_file(first / "nvidia_cublas-13.0.0.19.dist-info/METADATA", "Name: nvidia-cublas\n\n");
  write_file(first / "xformers.egg-info/PKG-INFO", "Metadata-Version: 1.1\nName: xformers\nVersion: 0.0.29\n\n");
  write_file(first / "requests-2.31.0.dist-info/METADATA", "Name: requests\nVersion: 2.31.0\n\n");
  write_file(second / "flash_attn-1.0.0.dist-info/METADATA", "Name: flash_attn\nVersion: 1.0.0\n\n");
  write_file(second / "Mamba_SSM-2.2.2-py3.11.egg-info/PKG-INFO", "Name: mamba_ssm\nVersion: 2.2.2\n\n");
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}, {"PYTHONPATH", first.string() + ":" + second.string()}};
  auto envs = probe(env, TorchImport::skip, std::chrono::seconds(60), notes);
  ASSERT_EQ(envs.size(), 1u);
  const auto& d = envs[0].distributions;
  EXPECT_EQ(d.at("flash-attn"), "2.5.6");  // the one Python imports
  EXPECT_EQ(d.at("nvidia-cublas"), "13.0.0.19");
  EXPECT_EQ(d.at("xformers"), "0.0.29");  // no version in the name: read from PKG-INFO
  EXPECT_EQ(d.at("mamba-ssm"), "2.2.2");
  EXPECT_FALSE(d.contains("requests"));
}

// PEP 610's direct_url.json as pip writes it: SGLang's image installs sglang
// editable from its checkout (recipes/app-images.toml marker_editable); a
// local non-editable install and a PyPI one (no file) are not editable.
TEST_F(PythonProbe, EditableInstallsAreRecordedWithTheirDirectUrl) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  TempDir dir;
  const auto site = dir.path() / "site";
  write_file(site / "sglang-0.5.5.dist-info/METADATA", "Name: sglang\nVersion: 0.5.5\n\n");
  write_file(site / "sglang-0.5.5.dist-info/direct_url.json",
             R"({"dir_info": {"editable": true}, "url": "file:///sgl-workspace/sglang/python"})");
  write_file(site / "flash_attn-2.8.3.dist-info/METADATA", "Name: flash_attn\nVersion: 2.8.3\n\n");
  write_file(site / "flash_attn-2.8.3.dist-info/direct_url.json", R"({"dir_info": {}, "url": "file:///src/fa"})");
  write_file(site / "sgl_kernel-0.3.16.post5.dist-info/METADATA", "Name: sgl-kernel\nVersion: 0.3.16.post5\n\n");
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}, {"PYTHONPATH", site.string()}};
  auto envs = probe(env, TorchImport::skip, std::chrono::seconds(60), notes);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].distributions.at("sgl-kernel"), "0.3.16.post5");
  const auto& e = envs[0].editable_urls;
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e.at("sglang"), "file:///sgl-workspace/sglang/python");
}

TEST_F(PythonProbe, ImportThatKillsTheInterpreterIsACrashWithTheVersionKept) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  TempDir dir;
  fake_torch(dir.path(), "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n");
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}, {"PYTHONPATH", dir.path().string()}};
  auto envs = probe(env, TorchImport::run, std::chrono::seconds(60), notes);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].status, PythonStatus::crashed);
  EXPECT_NE(envs[0].error.find("signal 11"), std::string::npos) << envs[0].error;
  ASSERT_TRUE(envs[0].torch);
  EXPECT_EQ(envs[0].torch->version, "2.6.0+cu126");
  EXPECT_EQ(envs[0].torch->cuda, "12.6");
}

TEST_F(PythonProbe, ImportThatHangsIsTimedOutWithinTheLimit) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  TempDir dir;
  fake_torch(dir.path(), "import time\ntime.sleep(120)\n");
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}, {"PYTHONPATH", dir.path().string()}};
  const auto start = std::chrono::steady_clock::now();
  auto envs = probe(env, TorchImport::run, std::chrono::seconds(3), notes);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].status, PythonStatus::timed_out);
  ASSERT_TRUE(envs[0].torch);
  EXPECT_EQ(envs[0].torch->version, "2.6.0+cu126");
}

TEST_F(PythonProbe, ImportErrorKeepsItsMessage) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  TempDir dir;
  fake_torch(dir.path(),
             "raise ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')\n");
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}, {"PYTHONPATH", dir.path().string()}};
  auto envs = probe(env, TorchImport::run, std::chrono::seconds(60), notes);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].status, PythonStatus::import_failed);
  EXPECT_NE(envs[0].error.find("libcudart.so.12"), std::string::npos) << envs[0].error;
}

TEST_F(PythonProbe, WithoutImportTheBrokenTorchIsStillDescribed) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  TempDir dir;
  fake_torch(dir.path(), "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n");
  std::vector<ProbeNote> notes;
  Environment env{{"PATH", "/usr/bin:/bin"}, {"PYTHONPATH", dir.path().string()}};
  auto envs = probe(env, TorchImport::skip, std::chrono::seconds(60), notes);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].status, PythonStatus::ok);
  EXPECT_EQ(envs[0].torch->version, "2.6.0+cu126");
}

TEST_F(PythonProbe, MissingInterpreterIsNotRunnable) {
  TORCHFIX_LINUX_ONLY("runs fake Pythons that are /bin/sh scripts");
  SystemProcessRunner runner;
  PythonProbeOptions options;
  options.interpreters = {"/nonexistent/bin/python"};
  std::vector<ProbeNote> notes;
  auto envs = probe_pythons(options, {{"PATH", "/usr/bin"}}, runner, notes);
  ASSERT_EQ(envs.size(), 1u);
  EXPECT_EQ(envs[0].status, PythonStatus::not_runnable);
  EXPECT_NE(envs[0].error.find("/nonexistent/bin/python"), std::string::npos);
}

TEST(PythonDiscovery, OrdersActiveEnvironmentsFirst) {
  TORCHFIX_LINUX_ONLY("finds Pythons in the Linux layout (bin/python)");
  TempDir dir;
  testing::write_script(dir / "venv/bin/python", "exit 0\n");
  testing::write_script(dir / "bin/python3", "exit 0\n");
  PythonProbeOptions options;
  auto found = discover_pythons(options, {{"VIRTUAL_ENV", (dir / "venv").string()}, {"PATH", (dir / "bin").string()}});
  ASSERT_GE(found.size(), 2u);
  EXPECT_EQ(found[0].second, "VIRTUAL_ENV");
  EXPECT_EQ(found[1].second, "PATH");
  options.interpreters = {"/x/python"};
  EXPECT_EQ(discover_pythons(options, {}).size(), 1u);
}

// uv's Windows folders are throwaway environments like its Linux ones:
// the cache under %LOCALAPPDATA% and the tools under %APPDATA%, with
// backslashes (as Windows writes them) or slashes; a folder whose name
// merely starts like one is not.
TEST(PythonDiscovery, UvsWindowsFoldersAreThrowawayEnvironments) {
  const Environment env = {{"LOCALAPPDATA", "C:\\Users\\ana\\AppData\\Local"},
                           {"APPDATA", "C:\\Users\\ana\\AppData\\Roaming"}};
  for (const char* path :
       {"C:\\Users\\ana\\AppData\\Roaming\\uv\\tools\\torchfix-gpu\\Scripts\\python.exe",
        "C:\\Users\\ana\\AppData\\Local\\uv\\cache\\archive-v0\\Xq3b\\Scripts\\python.exe",
        "C:\\Users\\ana\\AppData\\Roaming\\uv\\tools", "D:\\cache\\uv\\archive-v0\\Xq3b\\Scripts\\python.exe",
        "D:/cache/uv/builds-v0/.tmpA1/Scripts/python.exe"}) {
    EXPECT_TRUE(throwaway_environment(path, env)) << path;
  }
  for (const char* path :
       {"C:\\venvs\\sd\\Scripts\\python.exe", "C:\\Users\\ana\\AppData\\Roaming\\uv\\toolsmith\\python.exe",
        "C:\\Users\\ana\\AppData\\Roaming\\uv\\python\\cpython-3.12\\python.exe",
        "D:\\cache\\myuv\\archive-v0\\python.exe"}) {
    EXPECT_FALSE(throwaway_environment(path, env)) << path;
  }
  EXPECT_FALSE(throwaway_environment("C:\\Users\\ana\\AppData\\Roaming\\uv\\tools\\x\\python.exe", {}));
}

// pipx's Windows homes are throwaway environments too, as its docs name
// them: `%USERPROFILE%\pipx`, the older `%LOCALAPPDATA%\pipx\pipx` and
// `%USERPROFILE%\.local\pipx`; a user's own folder beside them is not.
TEST(PythonDiscovery, PipxsWindowsFoldersAreThrowawayEnvironments) {
  const Environment env = {{"LOCALAPPDATA", "C:\\Users\\ana\\AppData\\Local"}, {"USERPROFILE", "C:\\Users\\ana"}};
  for (const char* path : {"C:\\Users\\ana\\pipx\\venvs\\torchfix-gpu\\Scripts\\python.exe",
                           "C:\\Users\\ana\\AppData\\Local\\pipx\\pipx\\venvs\\black\\Scripts\\python.exe",
                           "C:\\Users\\ana\\.local\\pipx\\venvs\\ruff\\Scripts\\python.exe",
                           "C:\\Users\\ana\\pipx\\.cache\\1f2e3d\\Scripts\\python.exe"}) {
    EXPECT_TRUE(throwaway_environment(path, env)) << path;
  }
  for (const char* path :
       {"C:\\Users\\ana\\pipxenvs\\sd\\Scripts\\python.exe", "C:\\Users\\ana\\venvs\\pipx\\Scripts\\python.exe",
        "C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python312\\python.exe"}) {
    EXPECT_FALSE(throwaway_environment(path, env)) << path;
  }
  EXPECT_FALSE(throwaway_environment("C:\\Users\\ana\\pipx\\venvs\\x\\Scripts\\python.exe", {}));
}

// The folders a scan starts on before the interpreter answers, on real
// layouts: a Windows venv (Scripts\python.exe, Lib\site-packages above),
// an embedded or installed Python (Lib\site-packages beside python.exe) and
// a POSIX venv (lib/python3.N/site-packages); missing folders are left out.
TEST(PythonDiscovery, LikelySitePackagesFollowEachLayout) {
  TORCHFIX_LINUX_ONLY("expects POSIX paths (/ separators) in the output");
  TempDir dir;
  std::filesystem::create_directories(dir / "venv/Lib/site-packages");
  std::filesystem::create_directories(dir / "python_embeded/Lib/site-packages");
  std::filesystem::create_directories(dir / "posix/lib/python3.12/site-packages");
  std::filesystem::create_directories(dir / "bare");
  EXPECT_EQ(likely_site_packages_of((dir / "venv/Scripts/python.exe").string()),
            std::vector<std::string>{(dir / "venv/Lib/site-packages").string()});
  EXPECT_EQ(likely_site_packages_of((dir / "python_embeded/python.exe").string()),
            std::vector<std::string>{(dir / "python_embeded/Lib/site-packages").string()});
  EXPECT_EQ(likely_site_packages_of((dir / "posix/bin/python").string()),
            std::vector<std::string>{(dir / "posix/lib/python3.12/site-packages").string()});
  EXPECT_TRUE(likely_site_packages_of((dir / "bare/python.exe").string()).empty());
}

// `py -0p` as CPython's launcher (PC/launcher2.c, _printEnvironment) prints
// it: " " + the tag padded to 16 + " " + the path, CRLF line ends (a
// Windows console program); the default marked " *" after its tag (or,
// tolerated, after the path); a company tag wider than the padding; a path
// with a space; an entry with arguments after its executable; one with only
// an install folder (the launcher runs its python.exe); one without a path,
// and the launcher's own message, both skipped.
TEST(PythonDiscovery, PyLauncherListGivesEachInterpreterInOrder) {
  const std::string out =
      " -V:3.12 *        C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python312\\python.exe\r\n"
      " -V:3.11          C:\\Program Files\\Python311\\python.exe\r\n"
      " -V:ContinuumAnalytics/Anaconda39-64 C:\\Anaconda3\\python.exe\r\n"
      " -V:Astral/CPython3.13t C:\\uv\\cpython-3.13t\\python3.13t.exe -X gil=0\r\n"
      " -V:Custom/Portable C:\\ComfyUI_windows_portable\\python_embeded\r\n"
      " -V:3.9\r\n"
      " -3.10-64 *      C:\\Python310\\python.exe\r\n"
      " -3.8-32         C:\\Python38-32\\python.exe *\r\n";
  EXPECT_EQ(parse_py_list(out), (std::vector<std::string>{
                                    "C:\\Users\\ana\\AppData\\Local\\Programs\\Python\\Python312\\python.exe",
                                    "C:\\Program Files\\Python311\\python.exe",
                                    "C:\\Anaconda3\\python.exe",
                                    "C:\\uv\\cpython-3.13t\\python3.13t.exe",
                                    "C:\\ComfyUI_windows_portable\\python_embeded\\python.exe",
                                    "C:\\Python310\\python.exe",
                                    "C:\\Python38-32\\python.exe",
                                }));
  EXPECT_TRUE(parse_py_list("No installed Pythons found!\r\n").empty());
  EXPECT_TRUE(parse_py_list("").empty());
}

}  // namespace
}  // namespace torchfix
