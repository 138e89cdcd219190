// The Triton checks (core/diagnosis/triton_checks.cpp) through the real
// binary: which ptxas each Triton release bundles and can drive
// (recipes/triton-ptxas.toml, read from the PyPI wheels of 2.1-3.5), the
// fix that moves Triton through the torch that requires it, and the Triton
// each torch needs ([[torch_triton]]: torch's Requires-Dist, triton-windows'
// README table).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/snapshot_cli.hpp"

namespace torchfix {
namespace {

using testing::fixture;
using testing::has;
using testing::k_fixtures;
using testing::run_first;
using testing::save;
using testing::TempDir;

// The doctor's --json report of `snapshot`.
nlohmann::json doctor_json(const std::string& snapshot) {
  auto r = testing::torchfix({"doctor", "--json", "--snapshot", snapshot});
  EXPECT_NE(r.exit_code, 2) << r.err;
  return nlohmann::json::parse(r.out);
}

// The findings of `report` whose id is `id`.
std::vector<nlohmann::json> findings(const nlohmann::json& report, const std::string& id) {
  std::vector<nlohmann::json> out;
  for (const auto& f : report["findings"]) {
    if (f["id"] == id) out.push_back(f);
  }
  return out;
}

// Every fix command of `finding`, one a line.
std::string commands(const nlohmann::json& finding) {
  std::string out;
  for (const auto& fix : finding["fixes"]) {
    for (const auto& c : fix["commands"]) out += c.get<std::string>() + "\n";
  }
  return out;
}

nlohmann::json toolkit(const std::string& version) {
  const std::string mm = version.substr(0, version.rfind('.'));
  return {{"nvcc", "/usr/local/cuda-" + mm + "/bin/nvcc"},
          {"origin", "/usr/local/cuda*"},
          {"version", version},
          {"archs", nlohmann::json::array()},
          {"archs_source", "table"}};
}

// triton-lang/triton#5950: a torch 2.7 nightly with pytorch-triton 3.2 on an
// RTX 5080. Triton 3.2 asks ptxas 12.4 for sm_120 (no `a` before 3.3), and
// cannot drive a ptxas newer than 12.6, so even an installed CUDA 12.8 does
// not help through TRITON_PTXAS_PATH: torch 2.7.0, which requires Triton 3.3,
// does. Before the 3.2 row Triton 3.2 was "unknown" and the doctor said "No
// issues found".
TEST(TritonChecksCli, Triton32OnBlackwellMovesTorchNotThePtxasVariable) {
  TempDir dir;
  nlohmann::json s = fixture("T3-rtx5080-torch27-nightly-triton32.json");
  s["toolkits"].push_back(toolkit("12.8.93"));
  const auto report = doctor_json(save(dir, "t3.json", s));
  const auto gaps = findings(report, "triton.ptxas");
  ASSERT_EQ(gaps.size(), 1u) << report.dump(1);
  EXPECT_TRUE(has(gaps[0]["title"], "its ptxas 12.4.99 predates sm_120")) << gaps[0].dump(1);
  EXPECT_TRUE(has(gaps[0].dump(), "cannot drive a ptxas newer than CUDA 12.6")) << gaps[0].dump(1);
  const std::string fix = commands(gaps[0]);
  EXPECT_FALSE(has(fix, "TRITON_PTXAS_PATH")) << fix;
  EXPECT_TRUE(has(fix,
                  "/home/u/venv/bin/python -m pip install --force-reinstall 'torch==2.7.*' --index-url "
                  "https://download.pytorch.org/whl/cu128"))
      << fix;
  EXPECT_TRUE(findings(report, "triton.untracked").empty()) << report.dump(1);
}

// The state that fixed #5950: torch 2.7.0 with Triton 3.3.0, whose
// ptxas-blackwell (12.8.61) knows sm_120a.
TEST(TritonChecksCli, Triton33OnRtx5080IsFine) {
  TempDir dir;
  nlohmann::json s = fixture("T3-rtx5080-torch27-nightly-triton32.json");
  s["pythons"][0]["torch"]["version"] = "2.7.0+cu128";
  s["pythons"][0]["distributions"] = {{"torch", "2.7.0+cu128"}, {"triton", "3.3.0"}};
  const auto report = doctor_json(save(dir, "fixed.json", s));
  EXPECT_TRUE(findings(report, "triton.ptxas").empty()) << report.dump(1);
  EXPECT_TRUE(findings(report, "triton.untracked").empty()) << report.dump(1);
}

// Triton 3.3 on a GB10 (sm_121a needs CUDA 12.9): its override is named
// TRITON_PTXAS-BLACKWELL_PATH, which no shell can export, so no export line;
// torch 2.10 (Triton 3.6, ptxas-blackwell 12.9.86) is the fix.
TEST(TritonChecksCli, Triton33OnGb10HasNoExportableOverride) {
  TempDir dir;
  nlohmann::json s = fixture("env-gb10-triton35.json");
  s["pythons"][0]["torch"]["version"] = "2.7.1+cu128";
  s["pythons"][0]["distributions"] = {{"torch", "2.7.1+cu128"}, {"triton", "3.3.1"}};
  const auto report = doctor_json(save(dir, "gb10-33.json", s));
  const auto gaps = findings(report, "triton.ptxas");
  ASSERT_EQ(gaps.size(), 1u) << report.dump(1);
  const std::string fix = commands(gaps[0]);
  EXPECT_FALSE(has(fix, "export ")) << fix;
  EXPECT_TRUE(has(gaps[0].dump(), "TRITON_PTXAS-BLACKWELL_PATH, a name no shell can export")) << gaps[0].dump(1);
  EXPECT_TRUE(has(fix, "'torch==2.10.*'")) << fix;
}

// Triton 3.4 on a GB10 with nvcc 12.9 and 13.0: it can drive 12.x ptxas only,
// so the doctor and `torchfix env` point TRITON_PTXAS_PATH at 12.9's, not at
// the newer 13.0's, which it would refuse.
TEST(TritonChecksCli, Triton34GetsTheNewestPtxasItCanDrive) {
  TempDir dir;
  nlohmann::json s = fixture("env-gb10-triton35.json");
  s["pythons"][0]["torch"]["version"] = "2.8.0+cu129";
  s["pythons"][0]["distributions"] = {{"torch", "2.8.0+cu129"}, {"triton", "3.4.0"}};
  s["toolkits"].push_back(toolkit("12.9.86"));
  const std::string path = save(dir, "gb10-34.json", s);
  const auto gaps = findings(doctor_json(path), "triton.ptxas");
  ASSERT_EQ(gaps.size(), 1u);
  const std::string fix = commands(gaps[0]);
  EXPECT_TRUE(has(fix, "export TRITON_PTXAS_PATH=/usr/local/cuda-12.9/bin/ptxas")) << fix;
  EXPECT_FALSE(has(fix, "cuda-13.0/bin/ptxas")) << fix;
  auto env = testing::torchfix({"env", "--snapshot", path, "--shell", "bash"});
  EXPECT_EQ(env.exit_code, 0) << env.err;
  EXPECT_TRUE(has(env.out, "TRITON_PTXAS_PATH=/usr/local/cuda-12.9/bin/ptxas")) << env.out;
}

// woct0rdho/triton-windows#137 (field trial 2026-12-06b, report 2): ComfyUI
// portable on Windows, torch 2.7.1 with triton-windows 3.4.0.post20; every
// torch.compile fails ("'CompiledKernel' has no attribute
// 'launch_enter_hook'"). torch's own pin is Linux-only, so the fork's table
// decides; the fix is the maintainer's. Before: "No issues found", exit 0.
TEST(TritonChecksCli, TritonWindows34BesideTorch27IsAProblemFixedByTheFork33) {
  auto r = testing::torchfix({"doctor", "--snapshot", k_fixtures + "T9-rtx5080-win-torch271-triton-windows34.json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out,
                  "torch 2.7.1+cu128 needs triton-windows 3.3.x; triton-windows 3.4.0.post20 is installed: "
                  "torch.compile fails"))
      << r.out;
  EXPECT_EQ(run_first(r.out),
            "D:\\ComfyUI_windows_portable\\python_embeded\\python.exe -m pip install -U 'triton-windows<3.4'")
      << r.out;
  const auto report = doctor_json(k_fixtures + "T9-rtx5080-win-torch271-triton-windows34.json");
  const auto pins = findings(report, "triton.pin");
  ASSERT_EQ(pins.size(), 1u) << report.dump(1);
  EXPECT_EQ(pins[0]["severity"], "problem");
  EXPECT_TRUE(has(pins[0].dump(), "triton-windows/blob/66361c03af/README.md")) << pins[0].dump(1);
}

// The same pair on Linux (report 2b): torch's Requires-Dist (triton==3.3.1)
// decides; another minor release is a problem, not a warning, and the ptxas
// checks judge the Triton the fix installs (3.3.1 knows sm_120a: no finding).
TEST(TritonChecksCli, Triton34BesideTorch27OnLinuxIsAProblemFixedByTheTritonTorchPins) {
  const std::string snapshot = k_fixtures + "T10-rtx5080-torch271-triton340.json";
  auto r = testing::torchfix({"doctor", "--snapshot", snapshot});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "torch 2.7.1+cu128 needs triton==3.3.1; triton 3.4.0 is installed: torch.compile fails"))
      << r.out;
  EXPECT_EQ(run_first(r.out), "/home/u/venv/bin/python -m pip install --no-deps triton==3.3.1") << r.out;
  const auto report = doctor_json(snapshot);
  EXPECT_EQ(findings(report, "triton.pin").size(), 1u) << report.dump(1);
  EXPECT_TRUE(findings(report, "triton.ptxas").empty()) << report.dump(1);
}

// A pair that matches, on Windows and on Linux (torch 2.8 with Triton 3.4,
// the release 3.4 was made for; on Linux without torch's METADATA, the
// table's exact row): no Triton finding; and a patch release of the same
// minor on Linux is a warning only.
TEST(TritonChecksCli, AMatchingTritonIsNoFindingAndAnotherPatchOnlyAWarning) {
  TempDir dir;
  nlohmann::json win = fixture("T9-rtx5080-win-torch271-triton-windows34.json");
  win["pythons"][0]["torch"]["version"] = "2.8.0+cu128";
  win["pythons"][0]["distributions"]["torch"] = "2.8.0+cu128";
  // torch 2.8's companions; no files read (the fixture lists torch's only).
  win["pythons"][0]["distributions"]["torchvision"] = "0.23.0+cu128";
  win["pythons"][0]["distributions"]["torchaudio"] = "2.8.0+cu128";
  win["pythons"][0]["kernels"] = nlohmann::json::array();
  auto report = doctor_json(save(dir, "win-28.json", win));
  EXPECT_TRUE(findings(report, "triton.pin").empty()) << report.dump(1);
  EXPECT_EQ(report["summary"]["problems"], 0) << report.dump(1);
  nlohmann::json lin = fixture("T10-rtx5080-torch271-triton340.json");
  lin["pythons"][0]["torch"]["version"] = "2.8.0+cu128";
  lin["pythons"][0]["distributions"]["torch"] = "2.8.0+cu128";
  lin["pythons"][0]["kernels"] = nlohmann::json::array();
  report = doctor_json(save(dir, "linux-28.json", lin));
  EXPECT_TRUE(findings(report, "triton.pin").empty()) << report.dump(1);
  lin["pythons"][0]["distributions"]["triton"] = "3.4.1";
  report = doctor_json(save(dir, "linux-28-patch.json", lin));
  const auto pins = findings(report, "triton.pin");
  ASSERT_EQ(pins.size(), 1u) << report.dump(1);
  EXPECT_EQ(pins[0]["severity"], "warning");
  EXPECT_TRUE(has(commands(pins[0]), "pip install --no-deps triton==3.4.0")) << pins[0].dump(1);
}

// `--with triton-windows==3.4.0.post20` (report 2w): Triton holds no kernels to
// read; the pairing judges it. Before: "archs of triton-windows==3.4.0.post20 unknown".
TEST(TritonChecksCli, WithTritonWindowsIsPairedNotUnknown) {
  auto r = testing::torchfix({"doctor", "--snapshot", k_fixtures + "T9-rtx5080-win-torch271-triton-windows34.json",
                              "--torch", "2.7.1+cu128", "--with", "triton-windows==3.4.0.post20", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(findings(report, "triton.pin").size(), 1u) << report.dump(1);
  EXPECT_TRUE(findings(report, "package.unknown").empty()) << report.dump(1);
}

// pytorch/pytorch#94585: torch 2.0 with pytorch-triton 2.0 on an A100 whose
// driver left only libcuda.so.1 (no development link libcuda.so) where
// Triton's -lcuda looks: eager torch runs, torch.compile fails at ld. The
// doctor warns and links libcuda.so in the user's own folder; Triton 2.0
// reads no variable of its own, so gcc's LIBRARY_PATH carries the folder.
// With the link present, or a Triton 3.6 (which links libcuda.so.1), nothing.
TEST(TritonChecksCli, NoUnversionedLibcudaIsAWarningWithTheLinkToMake) {
  TempDir dir;
  nlohmann::json s = fixture("lcuda-a100-torch200dev-pytorch-triton200.json");
  auto r = testing::torchfix({"doctor", "--snapshot", save(dir, "lcuda.json", s)});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out,
                  "[!] torch.compile cannot build Triton's launcher: no libcuda.so where Triton 2.0.0+0d7e753227 "
                  "links -lcuda"))
      << r.out;
  auto warnings = findings(doctor_json(save(dir, "lcuda.json", s)), "triton.libcuda");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(commands(warnings[0]),
            "mkdir -p \"$HOME/.local/lib/triton-libcuda\" && ln -sf /usr/lib/x86_64-linux-gnu/libcuda.so.1 "
            "\"$HOME/.local/lib/triton-libcuda/libcuda.so\"\n"
            "export LIBRARY_PATH=\"$HOME/.local/lib/triton-libcuda${LIBRARY_PATH:+:$LIBRARY_PATH}\"\n");

  // Triton 3.1 (torch 2.5) reads TRITON_LIBCUDA_PATH.
  s["pythons"][0]["torch"]["version"] = "2.5.1+cu121";
  s["pythons"][0]["distributions"] = {{"torch", "2.5.1+cu121"}, {"triton", "3.1.0"}};
  warnings = findings(doctor_json(save(dir, "lcuda31.json", s)), "triton.libcuda");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(has(commands(warnings[0]), "\nexport TRITON_LIBCUDA_PATH=\"$HOME/.local/lib/triton-libcuda\"\n"))
      << commands(warnings[0]);

  s["platform"]["libcuda_link"]["libcuda_so"] = "/usr/lib/x86_64-linux-gnu/libcuda.so";
  r = testing::torchfix({"doctor", "--snapshot", save(dir, "with-link.json", s)});
  EXPECT_FALSE(has(r.out, "libcuda")) << r.out;
  EXPECT_TRUE(findings(doctor_json(save(dir, "with-link.json", s)), "triton.libcuda").empty());

  s["platform"]["libcuda_link"]["libcuda_so"] = nullptr;
  s["pythons"][0]["torch"]["version"] = "2.10.0+cu128";
  s["pythons"][0]["distributions"] = {{"torch", "2.10.0+cu128"}, {"triton", "3.6.0"}};
  EXPECT_TRUE(findings(doctor_json(save(dir, "triton36.json", s)), "triton.libcuda").empty());
}

}  // namespace
}  // namespace torchfix
