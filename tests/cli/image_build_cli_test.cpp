// core/diagnosis/image_build through the real binary: a container whose
// torch is in the image (field trial 2026-12-06b, report 4:
// jim60105/docker-stable-diffusion-webui#7, the project's own Dockerfile on an
// RTX 5090) gets the change to the image's build first; the same stack in a
// venv on a mounted volume keeps the pip fix.

#include <gtest/gtest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::has;
using testing::k_fixtures;
using testing::TempDir;

const std::string k_snapshot = "T13-container-rtx5090-torch260-xformers0292.json";
const std::string k_torch_fix =
    "-m pip install --force-reinstall 'torch==2.9.*' torchvision --index-url https://download.pytorch.org/whl/cu128";

// The rest of the line after `label`, or "" when the output has none.
std::string line_after(const std::string& out, const std::string& label) {
  const auto at = out.find(label);
  if (at == std::string::npos) return "";
  const auto start = at + label.size();
  return out.substr(start, out.find('\n', start) - start);
}

TEST(ImageBuildCli, TorchInTheImageGetsTheBuildChangeNamingThePinThatPulledItBack) {
  auto r = testing::torchfix({"doctor", "--snapshot", k_fixtures + k_snapshot});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "[x] torch 2.6.0+cu124 cannot run on GPU 0 (NVIDIA GeForce RTX 5090, 12.0)")) << r.out;
  EXPECT_TRUE(has(r.out, "fix: Change the image's build: torch is in the image")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "xformers==0.0.29.post2 requires torch==2.6.0: that pin is what put torch 2.6.0+cu124 into "
                  "the image"))
      << r.out;
  EXPECT_TRUE(has(r.out,
                  "take torch 2.9.x from the cu128 index and replace xformers==0.0.29.post2 by "
                  "xformers==0.0.33.post2"))
      << r.out;
  EXPECT_TRUE(has(r.out, "Dockerfile: RUN /usr/local/bin/python " + k_torch_fix)) << r.out;
  EXPECT_TRUE(has(r.out, "Dockerfile: RUN /usr/local/bin/python -m pip install --no-deps xformers==0.0.33.post2"))
      << r.out;
  EXPECT_TRUE(has(r.out, "fix: Only to test it in this running container (lost when it is recreated): Install torch"))
      << r.out;
  EXPECT_EQ(line_after(r.out, "Run first: "), "") << r.out;
  EXPECT_TRUE(line_after(r.out, "Do first: ")
                  .starts_with("in the Dockerfile the image is built from: RUN /usr/local/bin/python " + k_torch_fix))
      << r.out;
  // The first fix has no command to run here; no source build is a command.
  auto j = testing::torchfix({"doctor", "--json", "--snapshot", k_fixtures + k_snapshot});
  const auto report = nlohmann::json::parse(j.out);
  bool checked = false;
  for (const auto& f : report["findings"]) {
    if (f["id"] != "torch.arch" || f["severity"] != "problem") continue;
    checked = true;
    EXPECT_TRUE(f["fixes"][0]["commands"].empty()) << f.dump();
    EXPECT_EQ(f["fixes"][0]["file"]["name"], "Dockerfile") << f.dump();
    EXPECT_EQ(f["fixes"][0]["file"]["lines"].size(), 2u) << f.dump();
  }
  EXPECT_TRUE(checked) << j.out;
  EXPECT_FALSE(has(testing::commands_of(report), "torchfix build")) << j.out;
}

TEST(ImageBuildCli, TheSameStackInAVenvOnAMountedVolumeKeepsThePipFix) {
  auto snapshot = testing::fixture(k_snapshot);
  auto& env = snapshot["pythons"][0];
  env["interpreter"] = "/opt/venv/bin/python";
  env["site_packages"] = "/opt/venv/lib/python3.10/site-packages";
  env["torch"]["location"] = "/opt/venv/lib/python3.10/site-packages/torch";
  snapshot["platform"]["mounts"].push_back(
      {{"point", "/opt/venv"}, {"root", "/home/u/sd/venv"}, {"fs_type", "ext4"}, {"source", "/dev/sdd"}});
  TempDir dir;
  auto r = testing::torchfix({"doctor", "--snapshot", testing::save(dir, "volume.json", snapshot)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_FALSE(has(r.out, "Change the image's build")) << r.out;
  EXPECT_FALSE(has(r.out, "Only to test it")) << r.out;
  EXPECT_TRUE(line_after(r.out, "Run first: ").starts_with("/opt/venv/bin/python " + k_torch_fix)) << r.out;
  EXPECT_TRUE(has(r.out, "$ /opt/venv/bin/python -m pip install --no-deps xformers==0.0.33.post2")) << r.out;

  // torch written after the container was created (pip ran in it, not the
  // image's build), or a container whose mounts were not read (an older
  // snapshot): nothing is claimed about the image, and the pip fix stays.
  auto layer = testing::fixture(k_snapshot);
  layer["pythons"][0]["torch"]["installed_at"] = layer["platform"]["container_created"].get<std::int64_t>() + 3600;
  auto unknown = testing::fixture(k_snapshot);
  unknown["platform"].erase("mounts");
  for (const auto& [name, snapshot] : {std::pair{"layer.json", layer}, std::pair{"unknown.json", unknown}}) {
    r = testing::torchfix({"doctor", "--snapshot", testing::save(dir, name, snapshot)});
    EXPECT_FALSE(has(r.out, "Change the image's build")) << r.out;
    EXPECT_TRUE(line_after(r.out, "Run first: ").starts_with("/usr/local/bin/python " + k_torch_fix)) << r.out;
  }
}

}  // namespace
}  // namespace torchfix
