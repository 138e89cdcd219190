// torchfix fix, pure part: the plan's argv per installer, the user's mirror
// of the PyTorch index, pip freeze records and the rollback they give.

#include "core/diagnosis/fix_plan.hpp"

#include <gtest/gtest.h>

namespace torchfix {
namespace {

// One environment with a cu126 torch, situated with empty tables (what
// plan_fix reads: the interpreter, the platform's shell, the torch facts).
struct Machine {
  Snapshot snapshot;
  Situation x;
  explicit Machine(std::string interpreter, std::string os = "Debian GNU/Linux 12") {
    PythonEnv env;
    env.interpreter = std::move(interpreter);
    env.torch.emplace();
    env.torch->version = "2.7.1+cu126";
    env.distributions["torchvision"] = "0.22.1+cu126";
    snapshot.platform.os = std::move(os);
    snapshot.pythons.push_back(std::move(env));
    x = situate(snapshot, Knowledge{});
  }
  InstallTarget target(Installer installer = Installer::pip, std::string uv = "") const {
    return install_target(x, 0, installer, std::move(uv), {});
  }
};

Fix wheel_fix() {
  Fix fix;
  fix.summary = "Install torch 2.7.1 from the cu128 index";
  fix.steps.push_back({.requirements = {"torch==2.7.1", "torchvision"},
                       .index_url = "https://download.pytorch.org/whl/cu128",
                       .variant = "cu128",
                       .command = "python -m pip install ..."});
  fix.steps.push_back({.kind = StepKind::driver, .command = "sudo apt install nvidia-driver-570"});
  return fix;
}

TEST(FixPlan, PipAndUvSpellTheSameInstallAndTheDriverIsOnlyShown) {
  const Machine m("/v/bin/python");
  const FixPlan pip = plan_fix(wheel_fix(), {"PTX JIT"}, m.x, 0, m.target());
  ASSERT_EQ(pip.commands.size(), 1u);
  EXPECT_EQ(pip.commands[0].shown,
            "/v/bin/python -m pip install --force-reinstall torch==2.7.1 torchvision --index-url "
            "https://download.pytorch.org/whl/cu128");
  EXPECT_EQ(pip.shown_only, std::vector<std::string>{"sudo apt install nvidia-driver-570"});
  EXPECT_EQ(pip.leaves_behind, std::vector<std::string>{"PTX JIT"});
  EXPECT_FALSE(pip.refused);
  // What changes is the Situation's torch of that environment.
  EXPECT_EQ(pip.changes, std::vector<std::string>{"torch 2.7.1+cu126 (cu126) -> torch==2.7.1 from the cu128 index"});
  const FixPlan uv = plan_fix(wheel_fix(), {}, m.x, 0, m.target(Installer::uv, "/usr/bin/uv"));
  EXPECT_EQ(uv.commands[0].argv, (std::vector<std::string>{"/usr/bin/uv", "pip", "install", "--python", "/v/bin/python",
                                                           "--reinstall", "torch==2.7.1", "torchvision", "--index-url",
                                                           "https://download.pytorch.org/whl/cu128"}));
}

TEST(FixPlan, ADriverOnlyFixIsRefused) {
  Fix fix;
  fix.steps.push_back({.kind = StepKind::driver, .command = "sudo apt install nvidia-driver-570"});
  const Machine m("python");
  EXPECT_TRUE(plan_fix(fix, {}, m.x, 0, m.target()).refused);
}

TEST(FixPlan, TheSituationsShellQuotesTheLinesAndNativeWindowsIsRefused) {
  const Machine linux("/home/a b/v/bin/python");
  EXPECT_EQ(plan_fix(wheel_fix(), {}, linux.x, 0, linux.target()).commands[0].argv[0], "/home/a b/v/bin/python");
  EXPECT_TRUE(plan_fix(wheel_fix(), {}, linux.x, 0, linux.target())
                  .commands[0]
                  .shown.starts_with("'/home/a b/v/bin/python' -m pip install"));
  const Machine windows("C:\\Program Files\\Python312\\python.exe", "Windows 11");
  EXPECT_EQ(windows.target().shell, CommandShell::powershell);
  const FixPlan plan = plan_fix(wheel_fix(), {}, windows.x, 0, windows.target());
  EXPECT_TRUE(plan.refused);
  EXPECT_TRUE(plan.commands.empty());
}

TEST(FixPlan, AnEditableCheckoutIsRebuiltInPlaceWithTheArchList) {
  Fix fix;
  fix.summary = "Rebuild toyext for 9.0";
  fix.steps.push_back(
      {.mode = InstallMode::editable, .requirements = {"/src/toy ext"}, .env = {{"TORCH_CUDA_ARCH_LIST", "9.0"}}});
  const Machine m("/v/bin/python");
  const FixPlan plan = plan_fix(fix, {}, m.x, 0, m.target());
  ASSERT_EQ(plan.commands.size(), 1u);
  EXPECT_EQ(plan.commands[0].argv,
            (std::vector<std::string>{"/v/bin/python", "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                                      "-e", "/src/toy ext"}));
  EXPECT_EQ(plan.commands[0].shown,
            "TORCH_CUDA_ARCH_LIST=9.0 /v/bin/python -m pip install --no-build-isolation --no-deps -e '/src/toy ext'");
  EXPECT_EQ(plan.changes, std::vector<std::string>{"the editable checkout /src/toy ext -> rebuilt in place with "
                                                   "TORCH_CUDA_ARCH_LIST=9.0 (its old build is not kept)"});
  EXPECT_FALSE(plan.refused);
}

TEST(FixPlan, AMirrorOfThePyTorchIndexKeepsItsBase) {
  IndexConfig config;
  add_pip_conf(config,
               "[global]\nindex-url = https://pypi.tuna.tsinghua.edu.cn/simple\n"
               "extra-index-url =\n    https://mirrors.nju.edu.cn/pytorch/whl/cu121/\n",
               "/etc/pip.conf");
  ASSERT_EQ(config.urls.size(), 2u);
  const ChosenIndex chosen = choose_index("https://download.pytorch.org/whl/cu128", "cu128", config);
  EXPECT_EQ(chosen.url, "https://mirrors.nju.edu.cn/pytorch/whl/cu128");
  EXPECT_EQ(chosen.origin, "/etc/pip.conf");
  IndexConfig none;
  add_index_variables(none, {{"PIP_INDEX_URL", "https://download.pytorch.org/whl/cu126"}});
  EXPECT_EQ(choose_index("https://download.pytorch.org/whl/cu128", "cu128", none).url,
            "https://download.pytorch.org/whl/cu128");
  IndexConfig uv;
  add_uv_toml(uv, "[[index]]\nname = \"torch\"\nurl = \"https://mirror.sjtu.edu.cn/pytorch-wheels/cu118\"\n",
              "uv.toml");
  EXPECT_EQ(choose_index("https://download.pytorch.org/whl/cu126", "cu126", uv).url,
            "https://mirror.sjtu.edu.cn/pytorch-wheels/cu126");
}

// A nightly torch's companions come from the nightly channel (field trial
// 2026-12-06b, report 6): pip takes --pre, uv --prerelease allow, and a
// mirror of the release index configured in pip.conf does not replace it.
TEST(FixPlan, TheNightlyChannelTakesPreReleasesAndNoReleaseMirror) {
  const Machine m("/v/bin/python");
  Fix fix;
  fix.summary = "reinstall torch with its companions from the nightly cu130 channel";
  fix.steps.push_back({.mode = InstallMode::nightly,
                       .requirements = {"torch", "torchvision"},
                       .index_url = "https://download.pytorch.org/whl/nightly/cu130"});
  IndexConfig mirror;
  add_pip_conf(mirror, "[global]\nextra-index-url = https://mirrors.nju.edu.cn/pytorch/whl/cu121/\n", "/etc/pip.conf");
  const FixPlan pip = plan_fix(fix, {}, m.x, 0, install_target(m.x, 0, Installer::pip, "", mirror));
  ASSERT_EQ(pip.commands.size(), 1u);
  EXPECT_EQ(pip.commands[0].shown,
            "/v/bin/python -m pip install --force-reinstall --pre torch torchvision --index-url "
            "https://download.pytorch.org/whl/nightly/cu130");
  const FixPlan uv = plan_fix(fix, {}, m.x, 0, m.target(Installer::uv, "/usr/bin/uv"));
  EXPECT_EQ(uv.commands[0].argv,
            (std::vector<std::string>{"/usr/bin/uv", "pip", "install", "--python", "/v/bin/python", "--reinstall",
                                      "--prerelease", "allow", "torch", "torchvision", "--index-url",
                                      "https://download.pytorch.org/whl/nightly/cu130"}));
}

TEST(FixPlan, TheInstallerIsUvWhenUvMadeTheEnvironment) {
  EXPECT_EQ(installer_from_pyvenv_cfg("home = /usr/bin\nimplementation = CPython\nuv = 0.8.3\n"), Installer::uv);
  EXPECT_EQ(installer_from_pyvenv_cfg("home = /usr/bin\ninclude-system-site-packages = false\n"), Installer::pip);
}

TEST(FixPlan, RestoreUninstallsWhatCameAndReinstallsTheRecordedLinesFromTheirIndex) {
  const auto before = parse_freeze("pip==23.0.1\ntorch==2.7.1+cu126\nNumPy==1.26.4\n");
  const auto after = parse_freeze("pip==23.0.1\ntorch==2.7.1+cu128\nnvidia_cublas_cu12==12.8.3\n");
  EXPECT_EQ(freeze_differences(before, after), (std::vector<std::string>{"numpy", "nvidia-cublas-cu12", "torch"}));
  const Machine m("py");
  const auto commands = restore_commands(before, after, m.target());
  ASSERT_EQ(commands.size(), 3u);
  EXPECT_EQ(commands[0].shown, "py -m pip uninstall -y nvidia-cublas-cu12");
  EXPECT_EQ(commands[1].shown, "py -m pip install --no-deps --force-reinstall NumPy==1.26.4");
  EXPECT_EQ(commands[2].shown,
            "py -m pip install --no-deps --force-reinstall torch==2.7.1+cu126 --index-url "
            "https://download.pytorch.org/whl/cu126");
  EXPECT_TRUE(restore_commands(before, before, m.target()).empty());
}

}  // namespace
}  // namespace torchfix
