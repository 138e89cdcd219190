// Jetson (Tegra) and WSL2 through the real binary: the NGC container a
// Jetson gets follows its L4T release (never a desktop driver number, never a
// Linux driver command), and WSL2 reads the Windows host's driver in Windows
// numbering, with "WSL2 without GPU support" as its own finding; native
// Windows layouts get PowerShell fixes for their own interpreter.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "../build/test_support.hpp"
#include "../support/linux_only.hpp"
#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::commands_of;
using testing::fixture;
using testing::has;
using testing::k_fixtures;
using testing::save;
using testing::TempDir;
using testing::torchfix;
using testing::write_file;

// A Jetson of the F16 kind (Orin, or Thor) on L4T `l4t` with `driver` ("":
// unknown) and no measured CUDA: the Situation reads the driver through L4T.
std::string jetson(const TempDir& dir, const std::string& l4t, const std::string& driver, const std::string& gpu = "",
                   const std::string& cc = "") {
  nlohmann::json s = fixture("F16-orin-jetpack6-pypi-torch211.json");
  s["platform"]["l4t"] = l4t;
  s["driver"] = {{"version", driver.empty() ? nlohmann::json() : nlohmann::json(driver)},
                 {"cuda_version", nullptr},
                 {"source", "nvml"}};
  if (!gpu.empty()) {
    s["gpus"][0]["name"] = gpu;
    s["gpus"][0]["compute_capability"] = cc;
  }
  return save(dir, "jetson-" + l4t + ".json", s);
}

void expect_no_desktop_driver(const std::string& text) {
  for (const char* bad : {"apt install nvidia-driver", "dnf install akmod-nvidia", "575.51.03", "(R575)", "595.45.04",
                          "580.65.06", "upgrade the NVIDIA driver", "Upgrade the driver to"}) {
    EXPECT_FALSE(has(text, bad)) << bad << " in:\n" << text;
  }
}

// F16: JetPack 6 (L4T R36) Orin with a PyPI CUDA 13 wheel. The container fix
// is the -igpu image run through Jetson's forward compatibility; 637f9db's
// said "needs host driver 575.51.03 (R575)", a desktop floor.
TEST(PlatformCli, JetPack6OrinGetsAnIgpuImageWithoutDesktopDriverFloors) {
  TempDir dir;
  const std::string orin = jetson(dir, "36.4.3", "540.4.0");
  auto r = torchfix({"doctor", "--json", "--snapshot", orin});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["situation"]["platform"], "tegra");
  EXPECT_EQ(j["situation"]["driver"]["cuda"], "12.6");
  const std::string commands = commands_of(j);
  EXPECT_TRUE(has(commands, "-py3-igpu")) << commands;
  EXPECT_TRUE(has(commands, "--runtime nvidia")) << commands;
  expect_no_desktop_driver(j.dump());
  auto text = torchfix({"doctor", "-v", "--snapshot", orin});
  expect_no_desktop_driver(text.out);
  EXPECT_TRUE(has(text.out, "Jetson forward compatibility")) << text.out;
}

// Thor on JetPack 7 (L4T R38, driver 580.00 = CUDA 13.0): plain arm64 images;
// 26.05 (CUDA 13.2) runs there (a user log on Thor), not "needs driver
// 595.45.04"; a missing image is a newer JetPack, never a driver number.
TEST(PlatformCli, ThorContainersFollowJetPack7) {
  TempDir dir;
  const std::string thor = jetson(dir, "38.2.0", "580.00", "NVIDIA Thor", "11.0");
  auto r = torchfix({"doctor", "--json", "--snapshot", thor, "--container", "26.05"});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  bool judged = false;
  for (const auto& f : j["findings"]) {
    if (f["id"] != "container.what-if") continue;
    judged = true;
    // It runs, within CUDA 13 (the warning torch on the same driver gets).
    EXPECT_EQ(f["severity"], "warning") << f.dump();
    EXPECT_TRUE(has(f["title"].get<std::string>(), "only through minor-version compatibility")) << f.dump();
  }
  EXPECT_TRUE(judged);
  expect_no_desktop_driver(j.dump());
  // A broken Thor (a CUDA 12.8 wheel has no sm_110): no Linux driver command.
  auto broken = torchfix({"doctor", "--json", "--snapshot", thor, "--torch", "2.8.0+cu128"});
  ASSERT_NE(broken.exit_code, 2) << broken.err;
  const auto b = nlohmann::json::parse(broken.out);
  const std::string commands = commands_of(b);
  EXPECT_TRUE(has(commands, "nvcr.io/nvidia/pytorch:")) << commands;
  EXPECT_FALSE(has(commands, "-igpu")) << commands;
  expect_no_desktop_driver(b.dump());
  // The -igpu image on Thor is judged, not run: Thor pulls the arm64 images.
  auto igpu = torchfix({"doctor", "--snapshot", thor, "--container", "25.06-py3-igpu"});
  ASSERT_NE(igpu.exit_code, 2) << igpu.err;
  expect_no_desktop_driver(igpu.out);
}

// JetPack 5 (L4T R35, CUDA 11.4) has no NGC PyTorch image: no -igpu image
// is offered, and no desktop driver either.
TEST(PlatformCli, JetPack5GetsNoNgcImage) {
  TempDir dir;
  auto r = torchfix({"doctor", "--json", "--snapshot", jetson(dir, "35.6.0", "")});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["situation"]["platform"], "tegra");
  const std::string commands = commands_of(j);
  EXPECT_FALSE(has(commands, "docker run")) << commands;
  expect_no_desktop_driver(j.dump());
}

// The "Run first:" line of a doctor report, "" when there is none.
std::string run_first(const std::string& report) {
  const auto at = report.find("\nRun first: ");
  return at == std::string::npos ? "" : report.substr(at + 1, report.find('\n', at + 1) - at - 1);
}

// F16 as reported: Orin with a PyPI aarch64 CUDA 13 wheel (no sm_87) and no
// /etc/nv_tegra_release read; its driver 540.4.0 is L4T R36.4's. The first
// fix installs NVIDIA's JetPack 6.1 wheel for its Python 3.10 by URL, for a
// CPU wheel too (637f9db and the session before offered the -igpu container
// first, and only a directory of wheels beside a source build). Another
// Python gets no wheel built for 3.10; JetPack 5 with Python 3.8 gets the
// JetPack 5.1.2 one.
TEST(PlatformCli, JetsonWithAPypiWheelInstallsNvidiasJetPackWheelFirst) {
  const std::string v61 =
      "torch @ https://developer.download.nvidia.com/compute/redist/jp/v61/pytorch/"
      "torch-2.5.0a0+872d972e41.nv24.08.17622132-cp310-cp310-linux_aarch64.whl";
  auto r = torchfix({"doctor", "--snapshot", k_fixtures + "F16-orin-jetpack6-pypi-torch211.json"});
  ASSERT_NE(r.exit_code, 2) << r.err;
  EXPECT_TRUE(has(run_first(r.out), "/home/u/venv/bin/python -m pip install --force-reinstall '" + v61 + "'")) << r.out;
  EXPECT_TRUE(has(r.out, "wheel for JetPack 6.1 (L4T R36.4, Python 3.10, CUDA 12.6")) << r.out;
  auto json = torchfix({"doctor", "--json", "--snapshot", k_fixtures + "F16-orin-jetpack6-pypi-torch211.json"});
  const auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j["situation"]["l4t"]["release"], "36.4") << j["situation"].dump();
  expect_no_desktop_driver(j.dump());
  // A CPU wheel there gets the same first fix.
  auto cpu =
      torchfix({"doctor", "--snapshot", k_fixtures + "F16-orin-jetpack6-pypi-torch211.json", "--torch", "2.5.1+cpu"});
  EXPECT_TRUE(has(cpu.out, "is a CPU-only build")) << cpu.out;
  EXPECT_TRUE(has(run_first(cpu.out), v61)) << cpu.out;

  TempDir dir;
  auto py312 = torchfix({"doctor", "--snapshot", jetson(dir, "36.4.3", "540.4.0"), "--python-version", "3.12"});
  ASSERT_NE(py312.exit_code, 2) << py312.err;
  EXPECT_FALSE(has(py312.out, "/jp/v61/")) << py312.out;
  EXPECT_TRUE(has(run_first(py312.out), "-py3-igpu")) << py312.out;

  auto jp5 = torchfix({"doctor", "--snapshot", jetson(dir, "35.4.1", ""), "--python-version", "3.8"});
  ASSERT_NE(jp5.exit_code, 2) << jp5.err;
  EXPECT_TRUE(has(run_first(jp5.out), "jp/v512/pytorch/torch-2.1.0a0+41361538.nv23.06-cp38-cp38-linux_aarch64.whl"))
      << jp5.out;
  expect_no_desktop_driver(jp5.out);
}

// F17: WSL2 reads the Windows host driver in Windows numbering everywhere,
// the container judge included (637f9db quoted the Linux 570.26 there), and
// prints no Linux driver command.
TEST(PlatformCli, Wsl2ReadsTheWindowsDriverInWindowsNumbers) {
  const std::string f17 = k_fixtures + "F17-wsl2-rtx5080-laptop-driver566.json";
  auto r = torchfix({"doctor", "--json", "--snapshot", f17, "--container", "25.01"});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["situation"]["platform"], "wsl2");
  const std::string all = j.dump();
  EXPECT_FALSE(has(all, "570.26")) << "the Linux floor of CUDA 12.8";
  EXPECT_TRUE(has(all, "570.65")) << all;
  const std::string commands = commands_of(j);
  EXPECT_FALSE(has(commands, "apt ")) << commands;
  EXPECT_TRUE(has(commands, "on Windows (not inside WSL)")) << commands;
  for (const auto& f : j["findings"]) EXPECT_NE(f["id"], "gpu.wsl-no-gpu-support");
  // With the host driver 576.40 the same machine passes (F17).
  auto fixed = torchfix({"doctor", "--snapshot", f17, "--driver", "576.40"});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
}

// WSL2 known by its kernel, but Windows maps no /dev/dxg or libcuda into it:
// its own finding, fixed on Windows (`wsl --update`), never inside WSL.
TEST(PlatformCli, Wsl2WithoutGpuSupportIsItsOwnFinding) {
  TempDir dir;
  nlohmann::json s = fixture("F17-wsl2-rtx5080-laptop-driver566.json");
  s["platform"]["wsl_dxg"] = false;
  s["platform"]["wsl_libcuda"] = false;
  s["platform"]["libcuda_loadable"] = false;
  s["gpus"] = nlohmann::json::array();
  s["driver"] = {{"version", nullptr}, {"cuda_version", nullptr}, {"source", ""}};
  auto r = torchfix({"doctor", "--json", "--snapshot", save(dir, "wsl-no-dxg.json", s)});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  int found = 0;
  for (const auto& f : j["findings"]) {
    EXPECT_NE(f["id"], "gpu.none");
    if (f["id"] != "gpu.wsl-no-gpu-support") continue;
    ++found;
    EXPECT_EQ(f["severity"], "problem");
    EXPECT_TRUE(has(f["title"], "WSL2 without GPU support")) << f["title"];
  }
  EXPECT_EQ(found, 1) << r.out;
  const std::string commands = commands_of(j);
  EXPECT_TRUE(has(commands, "wsl --update")) << commands;
  EXPECT_FALSE(has(commands, "apt")) << commands;
  // --platform wsl2 on another machine is a WSL2 with GPU support.
  auto what_if = torchfix(
      {"doctor", "--json", "--snapshot", k_fixtures + "F2-gtx1080ti-torch28-cu128.json", "--platform", "wsl2"});
  ASSERT_NE(what_if.exit_code, 2) << what_if.err;
  EXPECT_FALSE(has(what_if.out, "gpu.wsl-no-gpu-support"));
}

// A container under Docker Desktop shares the WSL2 kernel (its release says
// microsoft-standard-WSL2) but is not WSL: without /dev/dxg it was started
// without GPUs, and the fix is `docker run --gpus all`, not `wsl --update`.
TEST(PlatformCli, AContainerOnTheWsl2KernelWithoutDxgIsAContainerWithoutGpus) {
  TempDir dir;
  nlohmann::json s = fixture("F17-wsl2-rtx5080-laptop-driver566.json");
  s["platform"]["container"] = true;
  s["platform"]["nvidia_device_nodes"] = false;
  s["platform"]["wsl_dxg"] = false;
  s["platform"]["wsl_libcuda"] = false;
  s["platform"]["libcuda_loadable"] = false;
  s["gpus"] = nlohmann::json::array();
  s["driver"] = {{"version", nullptr}, {"cuda_version", nullptr}, {"source", ""}};
  auto r = torchfix({"doctor", "--json", "--snapshot", save(dir, "docker-desktop.json", s)});
  ASSERT_NE(r.exit_code, 2) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> ids;
  for (const auto& f : j["findings"]) ids.push_back(f["id"]);
  EXPECT_NE(std::ranges::find(ids, "gpu.container-without-gpus"), ids.end()) << r.out;
  EXPECT_EQ(std::ranges::find(ids, "gpu.wsl-no-gpu-support"), ids.end()) << r.out;
  EXPECT_EQ(std::ranges::find(ids, "gpu.wsl-no-driver"), ids.end()) << r.out;
  EXPECT_TRUE(has(commands_of(j), "docker run --gpus all")) << commands_of(j);
}

// Native Windows layouts (issue 22), each as the Windows doctor records it:
// ComfyUI's portable python_embeded, a Python found through its PEP 514
// registry key, a venv with xformers left behind by a torch upgrade. Each
// gets its verdict and a first fix for PowerShell that runs its own
// interpreter; nothing Linux-only (apt, sudo, export, /usr, NGC images, a
// torchfix source build of PyTorch) is offered.
TEST(PlatformCli, WindowsLayoutsGetTheirVerdictAndAPowerShellFirstFix) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  struct Case {
    std::string fixture;
    std::string problem;
    std::string first;
  };
  const std::vector<Case> cases = {
      {"win-comfyui-portable-rtx5070ti-torch26-cu124.json",
       "torch 2.6.0+cu124 cannot run on GPU 0 (NVIDIA GeForce RTX 5070 Ti, 12.0)",
       "C:\\Users\\u\\ComfyUI_windows_portable\\python_embeded\\python.exe -m pip install --force-reinstall "
       "'torch==2.11.*' torchvision torchaudio --index-url https://download.pytorch.org/whl/cu128"},
      {"win-registry-python-rtx3060-cpu-torch.json", "torch 2.7.1+cpu is a CPU-only build",
       "C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python312\\python.exe -m pip install "
       "--force-reinstall 'torch==2.7.1' --index-url https://download.pytorch.org/whl/cu126"},
      {"win-venv-rtx4090-xformers-pinned-to-torch26.json",
       "xformers 0.0.29.post3 was built for torch 2.6.0, not the installed 2.7.0+cu128",
       "C:\\Users\\u\\proj\\.venv\\Scripts\\python.exe -m pip install --no-deps 'xformers==0.0.30'"},
  };
  for (const Case& c : cases) {
    auto r = torchfix({"doctor", "-v", "--snapshot", k_fixtures + c.fixture});
    EXPECT_EQ(r.exit_code, 1) << c.fixture << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.out, c.problem)) << c.fixture << "\n" << r.out;
    EXPECT_TRUE(has(r.out, "Run first: " + c.first + "\n")) << c.fixture << "\n" << r.out;
    auto json = torchfix({"doctor", "--json", "--snapshot", k_fixtures + c.fixture});
    const auto j = nlohmann::json::parse(json.out);
    EXPECT_EQ(j["situation"]["platform"], "windows") << c.fixture;
    const std::string commands = commands_of(j);
    for (const char* linux_only : {"apt ", "sudo ", "export ", "/usr/", "nvcr.io", "torchfix build pytorch"}) {
      EXPECT_FALSE(has(commands, linux_only)) << c.fixture << ": " << linux_only << " in\n" << commands;
    }
  }
}

// MSVC on native Windows (issue 22): nvcc 13.0's host_config.h accepts
// _MSC_VER 1920 to 1949, so Visual Studio 2026's MSVC 19.50 (the newest
// install, which distutils' vswhere -latest picks) stops extension builds.
// Beside VS 2022 Build Tools' 19.44 the fix is to build with that one;
// alone, to install a toolset of the range. Both name nvcc's own escape
// hatch, and nothing tells a Windows user to install gcc.
TEST(PlatformCli, MsvcOutsideNvccsRangeIsAWarningWithTheFixThatFits) {
  TORCHFIX_LINUX_ONLY("expects LF line ends; torchfix.exe writes CRLF");
  const std::string vs2026 =
      "C:\\Program Files\\Microsoft Visual "
      "Studio\\18\\Community\\VC\\Tools\\MSVC\\14.50.35717\\bin\\Hostx64\\x64\\cl.exe";
  const std::string title =
      "MSVC 19.50.35717 (" + vs2026 + ") is newer than nvcc 13.0.88 accepts (MSVC 19.20 to 19.49)";
  const std::string hatch = "fix: Or pass -allow-unsupported-compiler to nvcc";
  auto both =
      torchfix({"doctor", "-v", "--snapshot", k_fixtures + "win-vs2026-beside-buildtools2022-nvcc130-rtx4090.json"});
  EXPECT_TRUE(has(both.out, "[!] " + title + "\n")) << both.out;
  EXPECT_TRUE(has(both.out,
                  "fix: Build with MSVC 19.44.35217 (C:\\Program Files (x86)\\Microsoft Visual "
                  "Studio\\2022\\BuildTools\\VC\\Tools\\MSVC\\14.44.35217\\bin\\Hostx64\\x64\\cl.exe), "
                  "inside the range"))
      << both.out;
  EXPECT_TRUE(has(both.out, hatch)) << both.out;
  auto alone = torchfix({"doctor", "-v", "--snapshot", k_fixtures + "win-vs2026-msvc1950-nvcc130-rtx4090.json"});
  EXPECT_TRUE(has(alone.out, "[!] " + title + "\n")) << alone.out;
  EXPECT_TRUE(has(alone.out, "fix: Install an MSVC toolset nvcc 13.0.88 accepts (MSVC 19.20 to 19.49)")) << alone.out;
  EXPECT_TRUE(has(alone.out, hatch)) << alone.out;
  EXPECT_FALSE(has(alone.out, "gcc 15")) << alone.out;
  auto json = torchfix({"doctor", "--json", "--snapshot", k_fixtures + "win-vs2026-msvc1950-nvcc130-rtx4090.json"});
  const auto j = nlohmann::json::parse(json.out);
  std::vector<std::string> ids;
  for (const auto& f : j["findings"]) ids.push_back(f["id"]);
  EXPECT_NE(std::ranges::find(ids, "compiler.outside-nvcc-bounds"), ids.end()) << json.out;
}

// A machine without nvcc: the one toolchain decision says where the probe
// looked, and on native Windows that is what the Windows probe reads
// (probe/toolkit_paths_win.cpp), not the Linux folders; WSL2 runs the Linux
// probe and keeps the Linux wording. Through `build --dry-run`, whose plan
// stops at the toolkit.
TEST(PlatformCli, NoNvccNamesThePlacesThePlatformsProbeLooksAt) {
  TempDir dir;
  const auto src = dir / "ext";
  write_file(src / "setup.py", "from setuptools import setup\nsetup(name='ext')\n");
  const auto build = [&](const std::string& snapshot) {
    return torchfix({"build", "--dry-run", "--snapshot", k_fixtures + snapshot, "--src", src.string()});
  };
  const std::string windows_places =
      "looked at PATH, CUDA_PATH, CUDA_HOME, CUDA_PATH_V*, "
      "%ProgramFiles%\\NVIDIA GPU Computing Toolkit\\CUDA\\v*, %CONDA_PREFIX%\\Library\\bin, "
      "pip's nvidia wheels)";
  const std::string linux_places = "looked at CUDA_HOME, PATH, /usr/local/cuda*)";

  for (const char* snapshot :
       {"win-comfyui-portable-rtx5070ti-torch26-cu124.json", "win-venv-rtx4090-xformers-pinned-to-torch26.json"}) {
    auto r = build(snapshot);
    EXPECT_EQ(r.exit_code, 2) << snapshot << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "no nvcc found (" + windows_places)) << snapshot << "\n" << r.err;
    EXPECT_FALSE(has(r.err, "/usr/local/cuda")) << snapshot << "\n" << r.err;
  }
  for (const char* snapshot : {"F1-rtx5090d-torch26-cu126.json", "F17-wsl2-rtx5080-laptop-driver566.json"}) {
    auto r = build(snapshot);
    EXPECT_EQ(r.exit_code, 2) << snapshot << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "no nvcc found (" + linux_places)) << snapshot << "\n" << r.err;
    EXPECT_FALSE(has(r.err, "CUDA_PATH_V*")) << snapshot << "\n" << r.err;
  }
}

// A Linux driver installed inside WSL2 (its libcuda.so.535.309.01 shadows the
// Windows driver's, microsoft/WSL#40680): its own problem, fixed by removing
// the dpkg package that owns it, never by a Linux driver or a Windows driver
// install; the snapshot keeps what the probe recorded.
TEST(PlatformCli, ALinuxDriverInsideWsl2IsRemoved) {
  const std::string snapshot = k_fixtures + "wsl2-linux-driver-535-inside-wsl.json";
  auto r = torchfix({"doctor", "--json", "--snapshot", snapshot});
  ASSERT_EQ(r.exit_code, 1) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["situation"]["platform"], "wsl2");
  bool found = false;
  for (const auto& f : j["findings"]) {
    EXPECT_NE(f["id"], "gpu.wsl-no-driver") << "the Linux driver explains the missing GPU";
    if (f["id"] != "gpu.wsl-linux-driver") continue;
    found = true;
    EXPECT_EQ(f["severity"], "problem");
    EXPECT_TRUE(has(f["title"].get<std::string>(), "libcuda.so.535.309.01")) << f.dump();
  }
  EXPECT_TRUE(found) << r.out;
  const std::string commands = commands_of(j);
  EXPECT_TRUE(has(commands, "sudo apt-get remove --purge libnvidia-compute-535\n")) << commands;
  EXPECT_TRUE(has(commands, "wsl --shutdown")) << commands;
  EXPECT_FALSE(has(commands, "apt install nvidia-driver")) << commands;
  EXPECT_FALSE(has(commands, "apt-get install")) << commands;
  auto text = torchfix({"doctor", "--snapshot", snapshot});
  EXPECT_TRUE(has(text.out, "Run first: sudo apt-get remove --purge libnvidia-compute-535")) << text.out;
}

}  // namespace
}  // namespace torchfix
