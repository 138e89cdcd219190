// torchfix fix for a conda-owned torch, pure part: .condarc texts and
// CONDA_* variables as conda reads them, channel names of conda-meta
// records, and the mirror a printed conda command names.

#include "core/diagnosis/conda_plan.hpp"

#include <gtest/gtest.h>

#include "../support/repo_knowledge.hpp"

namespace torchfix {
namespace {

// A mirror set up as conda's mirroring guide describes
// (docs.conda.io user-guide/configuration/mirroring): default_channels for
// `defaults`, custom_channels for a community channel.
constexpr std::string_view k_tuna = R"(channels:
  - defaults
show_channel_urls: true
default_channels:
  - https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs/main
  - https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs/r
custom_channels:
  conda-forge: https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud
  pytorch: https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud
)";

TEST(CondaPlan, CustomChannelsNameTheMirrorOfAChannel) {
  CondaChannels c;
  add_condarc(c, k_tuna, "/root/.condarc");
  const ChosenIndex forge = choose_channel("conda-forge", c);
  EXPECT_EQ(forge.url, "https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/conda-forge");
  EXPECT_EQ(forge.upstream, "https://conda.anaconda.org/conda-forge");
  EXPECT_EQ(forge.origin, "/root/.condarc");
  EXPECT_EQ(choose_channel("bioconda", c).url, "https://conda.anaconda.org/bioconda");
  EXPECT_TRUE(choose_channel("bioconda", c).origin.empty());
}

TEST(CondaPlan, AChannelUrlEndingInTheNameIsItsMirrorAndTheAliasServesTheRest) {
  CondaChannels c;
  add_condarc(c,
              "channels: [\"https://mirrors.bfsu.edu.cn/anaconda/cloud/conda-forge/\", defaults]  # BFSU\n"
              "channel_alias: https://mirror.example.org/conda/\n",
              "/etc/conda/.condarc");
  EXPECT_EQ(choose_channel("conda-forge", c).url, "https://mirrors.bfsu.edu.cn/anaconda/cloud/conda-forge");
  EXPECT_EQ(choose_channel("nvidia", c).url, "https://mirror.example.org/conda/nvidia");
  EXPECT_EQ(choose_channel("nvidia", c).origin, "/etc/conda/.condarc");
}

TEST(CondaPlan, CondaVariablesAreCommaSeparatedAndTheUpstreamAliasIsNoMirror) {
  CondaChannels c;
  add_condarc(c, "channel_alias: https://conda.anaconda.org\n", "/root/.condarc");
  EXPECT_TRUE(choose_channel("conda-forge", c).origin.empty());
  add_conda_variables(c, {{"CONDA_CHANNELS", "https://m.example/c/pytorch,conda-forge"}});
  EXPECT_EQ(choose_channel("pytorch", c).url, "https://m.example/c/pytorch");
  EXPECT_EQ(choose_channel("pytorch", c).origin, "CONDA_CHANNELS");
  add_conda_variables(c, {{"CONDA_CHANNEL_ALIAS", "http://10.0.0.1/conda"}});
  EXPECT_EQ(choose_channel("conda-forge", c).url, "http://10.0.0.1/conda/conda-forge");
}

TEST(CondaPlan, RecordChannelsGiveTheChannelName) {
  EXPECT_EQ(conda_channel_name("https://conda.anaconda.org/conda-forge/linux-64"), "conda-forge");
  EXPECT_EQ(conda_channel_name("https://conda.anaconda.org/pytorch"), "pytorch");
  EXPECT_EQ(conda_channel_name("pytorch"), "pytorch");
  EXPECT_EQ(conda_channel_name("file:///srv/channel/conda-forge/"), "conda-forge");
  EXPECT_EQ(conda_channel_name("https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud/conda-forge/noarch"),
            "conda-forge");
}

// The wheel fix torch 2.7.1 from cu128 (plan_fix's command for it), planned
// for a conda-owned torch with the repository's [[conda_torch]] rows.
FixPlan conda_plan(const CondaTorch& torch, CondaRoute& route) {
  const FixStep step{
      .requirements = {"torch==2.7.1"}, .index_url = "https://download.pytorch.org/whl/cu128", .variant = "cu128"};
  const Fix fix{.summary = "Install torch 2.7.1 from the cu128 index", .commands = {}, .steps = {step}};
  FixPlan plan;
  plan.commands.push_back({.argv = {"/env/bin/python", "-m", "pip", "install", "torch==2.7.1"},
                           .env = {},
                           .shown = "/env/bin/python -m pip install torch==2.7.1",
                           .note = {},
                           .index_check = {}});
  route = plan_for_conda(plan, fix, torch, CondaTarget{.prefix = "/env"}, testing::repo_knowledge().conda_torch,
                         CommandShell::posix);
  return plan;
}

TEST(CondaPlan, OnlyAChannelWithACudaPinAndACudaBuildGetsACondaInstall) {
  CondaRoute route{};
  const FixPlan forge = conda_plan({"pytorch", "2.5.1", "cuda126_py311h1_300", "conda-forge"}, route);
  EXPECT_EQ(route, CondaRoute::conda_build);
  ASSERT_EQ(forge.commands.size(), 1u);
  EXPECT_EQ(forge.commands[0].shown,
            "conda install -p /env -y --override-channels -c https://conda.anaconda.org/conda-forge "
            "'pytorch >=2.7.1 cuda*' 'cuda-version >=12.8'");
  // conda-forge's CPU build is not a CUDA build: its fix is the wheel.
  const FixPlan cpu = conda_plan({"pytorch", "2.5.1", "cpu_generic_py311h1_0", "conda-forge"}, route);
  EXPECT_EQ(route, CondaRoute::wheel_replaces);
  ASSERT_EQ(cpu.commands.size(), 2u);
  EXPECT_EQ(cpu.commands[0].shown, "conda remove -p /env -y --force pytorch");
  EXPECT_EQ(cpu.commands[1].shown, "/env/bin/python -m pip install torch==2.7.1");
  // A channel the tables do not know is not guessed at.
  const FixPlan main = conda_plan({"pytorch", "2.5.1", "gpu_cuda124py311h1_0", "main"}, route);
  EXPECT_EQ(route, CondaRoute::wheel_replaces);
  ASSERT_EQ(main.commands.size(), 2u);
  EXPECT_NE(main.commands[0].note.find("torchfix knows no CUDA builds of pytorch in main"), std::string::npos);
}

}  // namespace
}  // namespace torchfix
