// Inside an application container image (recipes/app-images.toml: vLLM's
// and SGLang's), through the real binary: on saved snapshots of such images
// the verdict and the first fix, and on this machine that the probe records
// the marker variables the table names.
#include <gtest/gtest.h>

#include <string>

#include "../support/extension_venv.hpp"

namespace torchfix {
namespace {

using namespace testing;  // tests/support/extension_venv.hpp: fix_block

// Runs `torchfix doctor --snapshot` on tests/fixtures/snapshots/`fixture` (60 s at most).
Expected<ProcessResult> doctor_on(const std::string& fixture) {
  SystemProcessRunner runner;
  return runner.run(
      Command{TORCHFIX_BINARY,
              {"doctor", "--snapshot", std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/" + fixture},
              Environment{{"PATH", "/usr/bin:/bin"}, {"LANG", "C.UTF-8"}},
              {},
              std::chrono::seconds(60)});
}

// Inside vLLM's image v0.20.0 on a V100 (fixture: the image's variable, its
// /opt/venv Python, vllm's _C built from 7.5 up): the image is the problem and
// the first fix, on the host, is the newest tag that still has 7.0; the pip
// rebuild the doctor offers for vllm is marked as lost with the container.
TEST(AppImagesCli, InsideVllmsImageTheFixIsTheTagThatRunsTheGpu) {
  auto r = doctor_on("vllm-image-v0200-v100.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 1) << r->out << r->err;
  EXPECT_NE(r->out.find("vLLM's image vllm/vllm-openai:v0.20.0 cannot run on this GPU"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("docker pull vllm/vllm-openai:v0.19.1"), std::string::npos) << r->out;
}

// Inside SGLang's image (sglang installed editable from /sgl-workspace/sglang,
// the checkout its Dockerfile clones) on a Tesla T4 (7.5): sgl-kernel
// 0.3.16.post5's libraries start at sm_80 (its PyPI wheel, read by torchfix
// inspect) and so do those of every tag in the table, so the image cannot
// run there and no tag fixes it; the rebuild other findings offer is marked
// as lost with the container, never offered as the way out.
TEST(AppImagesCli, InsideSglangsImageAGpuItsKernelsLackHasNoTagAndNoInContainerFix) {
  auto r = doctor_on("sglang-image-v055-t4.json");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->exit_code, 1) << r->out << r->err;
  const auto title = r->out.find("SGLang's image lmsysorg/sglang:v0.5.5-cu129-amd64 cannot run on this GPU");
  ASSERT_NE(title, std::string::npos) << r->out;
  const std::string fix = fix_block(r->out.substr(title), "      fix: ");
  EXPECT_NE(fix.find("None in SGLang's images: no tag in recipes/app-images.toml has sgl-kernel kernels"),
            std::string::npos)
      << fix;
  EXPECT_NE(fix.find("(this one holds 8.0;8.9;9.0;9.0a;10.0a;12.0a)"), std::string::npos) << fix;
  EXPECT_NE(r->out.find("GPU 0 (Tesla T4, 7.5): sgl-kernel in v0.5.5-cu129-amd64 is built for"), std::string::npos)
      << r->out;
  EXPECT_EQ(fix.find("docker pull"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("pip install"), std::string::npos) << fix;
  // sgl-kernel's own finding keeps its rebuild as words: nothing to run inside the container.
  EXPECT_NE(r->out.find("Build sgl-kernel from source for 7.5 (inside SGLang's image: lost when the container is "
                        "recreated; change the tag instead)"),
            std::string::npos)
      << r->out;
  EXPECT_EQ(r->out.find("$ TORCH_CUDA_ARCH_LIST=7.5"), std::string::npos) << r->out;
  EXPECT_EQ(r->out.find("Run first:"), std::string::npos) << r->out;
}

// The variable an application image marks itself with is read from
// recipes/app-images.toml's [[project]] rows, not from a list in the probe:
// the probe of this machine records VLLM_USAGE_SOURCE, and a variable no
// table names stays out of the snapshot.
TEST(AppImagesCli, TheProbeRecordsTheMarkerVariablesTheImageTableNames) {
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY,
                              {"doctor", "--save-snapshot", "-"},
                              Environment{{"PATH", "/usr/bin:/bin"},
                                          {"LANG", "C.UTF-8"},
                                          {"VLLM_USAGE_SOURCE", "production-docker-image"},
                                          {"SGLANG_UNRELATED_VARIABLE", "x"}},
                              {},
                              std::chrono::seconds(120)});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_NE(r->out.find("\"VLLM_USAGE_SOURCE\": \"production-docker-image\""), std::string::npos) << r->out;
  EXPECT_EQ(r->out.find("SGLANG_UNRELATED_VARIABLE"), std::string::npos) << r->out;
}

}  // namespace
}  // namespace torchfix
