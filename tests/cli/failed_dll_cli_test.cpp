// A torch DLL that Windows could not load (core/diagnosis/failed_dll.cpp)
// through the real binary: the import the loader found nowhere is named, its
// installer is the first fix, and a torch that does not import gets no
// "runs on GPU" verdict.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::has;
using testing::k_fixtures;

// Djdefrag/QualityScaler#9: `import torch` (1.12.0+cu113) fails with WinError
// 126 on torch\lib\caffe2_detectron_ops.dll on a fresh Windows 10 with a K80;
// the DLL imports VCRUNTIME140_1.dll, which no folder the loader searches
// holds. The first fix installs the Visual C++ Redistributable (the thread's
// fix), never the faulthandler diagnostic; no GPU verdict and no Inductor
// warning for a torch older than torch.compile.
TEST(FailedDllCli, MissingVcRuntimeIsTheFirstFix) {
  const auto r =
      testing::torchfix({"doctor", "--snapshot", k_fixtures + "win-k80-torch1120-dll-needs-vcruntime140_1.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "caffe2_detectron_ops.dll needs VCRUNTIME140_1.dll, which is not installed")) << r.out;
  EXPECT_TRUE(has(r.out,
                  "Run first: Invoke-WebRequest https://aka.ms/vc14/vc_redist.x64.exe -OutFile "
                  "vc_redist.x64.exe; .\\vc_redist.x64.exe /install /passive /norestart"))
      << r.out;
  EXPECT_TRUE(has(r.out, "why first: `import torch` fails until this is done")) << r.out;
  EXPECT_FALSE(has(r.out, "Run first: C:")) << r.out;
  EXPECT_FALSE(has(r.out, "runs on GPU")) << r.out;
  EXPECT_FALSE(has(r.out, "torch.compile")) << r.out;

  const auto json =
      nlohmann::json::parse(testing::torchfix({"doctor", "--json", "--snapshot",
                                               k_fixtures + "win-k80-torch1120-dll-needs-vcruntime140_1.json"})
                                .out);
  for (const auto& f : json["findings"]) {
    if (f["id"] != "torch.import") continue;
    ASSERT_EQ(f["fixes"].size(), 2u) << f.dump(1);
    EXPECT_TRUE(has(f["fixes"][0]["summary"], "Microsoft Visual C++ Redistributable")) << f.dump(1);
    EXPECT_EQ(f["fixes"][1]["summary"], "See where it stops");
  }
}

// Without the imports read (an older snapshot, or a crash), the diagnostic is
// the only fix and is not put forward as what to run first.
TEST(FailedDllCli, ADiagnosticCommandIsNeverRunFirst) {
  testing::TempDir dir;
  nlohmann::json s = testing::fixture("win-k80-torch1120-dll-needs-vcruntime140_1.json");
  s["pythons"][0].erase("failed_dll");
  const auto r = testing::torchfix({"doctor", "--snapshot", testing::save(dir, "no-imports.json", s)});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "-X faulthandler")) << r.out;
  EXPECT_FALSE(has(r.out, "Run first:")) << r.out;
}

}  // namespace
}  // namespace torchfix
