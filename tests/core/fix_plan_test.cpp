// torchfix fix, pure part: the plan's argv per installer, the user's mirror
// of the PyTorch index, pip freeze records and the rollback they give.

#include "core/fix_plan.hpp"

#include <gtest/gtest.h>

namespace torchfix {
namespace {

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
  const FixPlan pip = plan_fix(wheel_fix(), {"PTX JIT"}, Installer::pip, "/v/bin/python", "", {});
  ASSERT_EQ(pip.commands.size(), 1u);
  EXPECT_EQ(pip.commands[0].shown,
            "/v/bin/python -m pip install --force-reinstall torch==2.7.1 torchvision --index-url "
            "https://download.pytorch.org/whl/cu128");
  EXPECT_EQ(pip.shown_only, std::vector<std::string>{"sudo apt install nvidia-driver-570"});
  EXPECT_EQ(pip.leaves_behind, std::vector<std::string>{"PTX JIT"});
  EXPECT_FALSE(pip.refused);
  const FixPlan uv = plan_fix(wheel_fix(), {}, Installer::uv, "/v/bin/python", "/usr/bin/uv", {});
  EXPECT_EQ(uv.commands[0].argv, (std::vector<std::string>{"/usr/bin/uv", "pip", "install", "--python", "/v/bin/python",
                                                           "--reinstall", "torch==2.7.1", "torchvision", "--index-url",
                                                           "https://download.pytorch.org/whl/cu128"}));
}

TEST(FixPlan, ADriverOnlyFixIsRefused) {
  Fix fix;
  fix.steps.push_back({.kind = StepKind::driver, .command = "sudo apt install nvidia-driver-570"});
  EXPECT_TRUE(plan_fix(fix, {}, Installer::pip, "python", "", {}).refused);
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

TEST(FixPlan, TheInstallerIsUvWhenUvMadeTheEnvironment) {
  EXPECT_EQ(installer_from_pyvenv_cfg("home = /usr/bin\nimplementation = CPython\nuv = 0.8.3\n"), Installer::uv);
  EXPECT_EQ(installer_from_pyvenv_cfg("home = /usr/bin\ninclude-system-site-packages = false\n"), Installer::pip);
}

TEST(FixPlan, RestoreUninstallsWhatCameAndReinstallsTheRecordedLinesFromTheirIndex) {
  const auto before = parse_freeze("pip==23.0.1\ntorch==2.7.1+cu126\nNumPy==1.26.4\n");
  const auto after = parse_freeze("pip==23.0.1\ntorch==2.7.1+cu128\nnvidia_cublas_cu12==12.8.3\n");
  EXPECT_EQ(freeze_differences(before, after), (std::vector<std::string>{"numpy", "nvidia-cublas-cu12", "torch"}));
  const auto commands = restore_commands(before, after, Installer::pip, "py", "", {});
  ASSERT_EQ(commands.size(), 3u);
  EXPECT_EQ(commands[0].shown, "py -m pip uninstall -y nvidia-cublas-cu12");
  EXPECT_EQ(commands[1].shown, "py -m pip install --no-deps --force-reinstall NumPy==1.26.4");
  EXPECT_EQ(commands[2].shown,
            "py -m pip install --no-deps --force-reinstall torch==2.7.1+cu126 --index-url "
            "https://download.pytorch.org/whl/cu126");
  EXPECT_TRUE(restore_commands(before, before, Installer::pip, "py", "", {}).empty());
}

}  // namespace
}  // namespace torchfix
