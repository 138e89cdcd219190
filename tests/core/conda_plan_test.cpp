// torchfix fix for a conda-owned torch, pure part: .condarc texts and
// CONDA_* variables as conda reads them, channel names of conda-meta
// records, and the mirror a printed conda command names.

#include "core/diagnosis/conda_plan.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace torchfix
