// The resolver on the field cases (shared/cases/field-cases.md F1-F17 as
// snapshot fixtures): verdict, exit code and the FIRST fix, and that the
// first fix, applied to the snapshot, diagnoses clean. Each defect of issue 8
// that belongs to the resolver has a test here that failed on main at 2f852e9.

#include "core/resolver/resolver.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/repo_knowledge.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/what_if.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return testing::repo_knowledge();
}

Snapshot fixture(const std::string& name) {
  std::ifstream in(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  auto snapshot = snapshot_from_json(nlohmann::json::parse(text.str()));
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return *snapshot;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The first fix the doctor prints: the first fix of the first problem.
const Fix& first_fix(const Diagnosis& d) {
  for (const Finding& f : d.findings) {
    if (f.severity == Severity::problem && !f.fixes.empty()) return f.fixes.front();
  }
  throw std::runtime_error("no problem with a fix");
}

std::string text(const Fix& fix) {
  std::string out = fix.summary + "\n";
  for (const std::string& c : fix.commands) out += c + "\n";
  return out;
}

// Applies the first remedy and diagnoses again: the exit code must be 0.
void expect_first_fix_fixes(const Snapshot& s, const Diagnosis& d) {
  ASSERT_FALSE(d.remedies.empty());
  const RemedyReport& r = d.remedies.front();
  ASSERT_FALSE(r.resolution.winners.empty()) << r.fixes.front().summary;
  const Diagnosis again = diagnose(apply_remedy(s, r.python, r.resolution.winners.front(), knowledge()), knowledge());
  for (const Finding& f : again.findings) EXPECT_NE(f.severity, Severity::problem) << f.title;
  EXPECT_EQ(again.exit_code(), 0);
}

struct Case {
  const char* fixture;
  const char* expect_in_first_fix;
  const char* never_in_first_fix;
};

class FirstFix : public ::testing::TestWithParam<Case> {};

TEST_P(FirstFix, IsRightAndFixes) {
  const Case& c = GetParam();
  const Snapshot s = fixture(c.fixture);
  const Diagnosis d = diagnose(s, knowledge());
  EXPECT_EQ(d.exit_code(), 1);
  const std::string fix = text(first_fix(d));
  EXPECT_TRUE(has(fix, c.expect_in_first_fix)) << fix;
  if (*c.never_in_first_fix) {
    EXPECT_FALSE(has(fix, c.never_in_first_fix)) << fix;
  }
  expect_first_fix_fixes(s, d);
}

INSTANTIATE_TEST_SUITE_P(
    FieldCases, FirstFix,
    ::testing::Values(
        Case{"F1-rtx5090d-torch26-cu126",
             "'torch==2.11.*' torchvision --index-url "
             "https://download.pytorch.org/whl/cu128",
             "cu126"},
        Case{"F2-gtx1080ti-torch28-cu128", "torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126", "cu128"},
        Case{"F3-p100-torch28-cu128", "torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126", ""},
        Case{"F4-container-driver-cuda11", "whl/cu118", ""}, Case{"F5-gb10-cpu-torch", "torch==2.9.1", "CUDA_HOME"},
        Case{"F6-b200-causal-conv1d", "CAUSAL_CONV1D_FORCE_BUILD=TRUE", "torch=="},
        Case{"F7-orin-flash-attn", "torchfix build flash-attn --arch 8.7", "FLASH_ATTN_CUDA_ARCHS=80"},
        // F8: unsupported upstream, said; no `torchfix build vllm` line, which
        // build refuses (vllm has no kernels for 6.1).
        Case{"F8-gtx1080ti-vllm", "vllm does not support 6.1 upstream", "torchfix build vllm"},
        // F12: 2.15 has no cu126; the driver upgrade alone must not come first.
        Case{"F12-v100-torch215-cu132",
             "'torch==2.14.*' torchvision --index-url "
             "https://download.pytorch.org/whl/cu126",
             "driver"},
        // F13: the newest release that runs on 6.1, not 2.0 from cu117.
        Case{"F13-gtx1080ti-driver-unknown-torch215",
             "'torch==2.14.*' --index-url "
             "https://download.pytorch.org/whl/cu126",
             "cu117"},
        // F14: R535 cannot drive a B200; nothing software-only helps.
        Case{"F14-b200-r535-torch211", "No software-only fix", "pip install"},
        // F16: no official aarch64 wheel has sm_87: NVIDIA's JetPack 6.1 wheel
        // for its L4T R36.4 and Python 3.10 first, by URL (the NGC -igpu
        // container and the source build are the alternatives).
        Case{"F16-orin-jetpack6-pypi-torch211",
             "'torch @ https://developer.download.nvidia.com/compute/redist/jp/v61/pytorch/", "whl/cu130"},
        // F17: the Windows host's driver; no Linux driver command.
        Case{"F17-wsl2-rtx5080-laptop-driver566", "on Windows", "apt install"},
        // sgl-project/sglang#5100: sgl-kernel 0.1.1 (built against torch 2.6.0)
        // beside torch 2.5.1 moves to 0.1.0, built against 2.5.1, not a rebuild.
        Case{"h100-torch251-sgl-kernel011-abi", "-m pip install --no-deps sgl-kernel==0.1.0", "rebuild"},
        // T8: a nightly torch's companion comes from its nightly channel, unpinned.
        Case{"T11-h100-torch212-nightly-cu130-torchvision026",
             "--force-reinstall --pre torch torchvision --index-url https://download.pytorch.org/whl/nightly/cu130",
             "torch=="}));

TEST(FieldCases, F12FailsOnTwoCounts) {
  const Diagnosis d = diagnose(fixture("F12-v100-torch215-cu132"), knowledge());
  int too_old = 0;
  int arch = 0;
  for (const Finding& f : d.findings) {
    too_old += f.id == "driver.too-old" && f.severity == Severity::problem;
    arch += f.id == "torch.arch" && f.severity == Severity::problem;
  }
  EXPECT_EQ(too_old, 1);
  EXPECT_EQ(arch, 1);
  // The driver-only candidate lost, with the reason.
  bool driver_rejected = false;
  for (const Rejected& r : d.remedies.front().resolution.rejected) {
    // After any driver upgrade, cu132 still has no sm_70.
    if (r.candidate.starts_with("driver >=") && !r.reasons.empty() && has(r.reasons.front(), "no SASS for 7.0"))
      driver_rejected = true;
  }
  EXPECT_TRUE(driver_rejected);
}

TEST(FieldCases, F13NamesTheDriverTheWheelNeeds) {
  const Diagnosis d = diagnose(fixture("F13-gtx1080ti-driver-unknown-torch215"), knowledge());
  EXPECT_TRUE(has(first_fix(d).summary, "525.60.13")) << first_fix(d).summary;
}

TEST(FieldCases, F14IsADriverProblemForTheGpu) {
  const Diagnosis d = diagnose(fixture("F14-b200-r535-torch211"), knowledge());
  const Finding& f = d.findings[static_cast<std::size_t>(
      std::ranges::find_if(d.findings, [](const Finding& x) { return x.id == "driver.gpu-unsupported"; }) -
      d.findings.begin())];
  EXPECT_EQ(f.severity, Severity::problem);
  EXPECT_TRUE(has(f.fixes.front().summary, "570.133.20")) << f.fixes.front().summary;
  EXPECT_TRUE(d.remedies.front().resolution.no_software_fix.has_value());
}

// The driver's install line follows the distribution the snapshot names
// (recipes/drivers.toml [[driver_package]]); one without a row gets the download page.
TEST(FieldCases, F14TheDriverCommandIsTheDistributionsPackage) {
  for (const auto& [os, line] :
       {std::pair{"Ubuntu 24.04", "sudo apt install nvidia-driver-570   # Ubuntu's R570 package; then reboot"},
        std::pair{"Debian GNU/Linux 12 (bookworm)",
                  "sudo apt install nvidia-driver   # from NVIDIA's CUDA repository for R570; then reboot"},
        std::pair{"Fedora Linux 40 (Workstation Edition)", "sudo dnf install akmod-nvidia   # RPM Fusion; then reboot"},
        std::pair{"Arch Linux", "from https://www.nvidia.com/Download/index.aspx"}}) {
    Snapshot s = fixture("F14-b200-r535-torch211");
    s.platform.os = os;
    std::string commands;
    for (const Finding& f : diagnose(s, knowledge()).findings) {
      for (const Fix& fix : f.fixes) {
        for (const std::string& c : fix.commands) commands += c + "\n";
      }
    }
    EXPECT_TRUE(has(commands, line)) << os << "\n" << commands;
  }
}

TEST(FieldCases, F17PassesWithANewerWindowsDriver) {
  Snapshot s = fixture("F17-wsl2-rtx5080-laptop-driver566");
  EXPECT_EQ(diagnose(s, knowledge()).exit_code(), 1);
  const Diagnosis d = diagnose(s, knowledge());
  for (const std::string& c : first_fix(d).commands) {
    EXPECT_FALSE(has(c, "sudo")) << c;  // no Linux driver command on WSL2
  }
  s.driver.version = Version::parse("576.40");
  s.driver.cuda_version = Version({12, 9});
  EXPECT_EQ(diagnose(s, knowledge()).exit_code(), 0);
}

// Defect: `doctor --gpu B200 --driver 535.104.05` was marked fine.
TEST(Defects, BlackwellOnR535IsNotFine) {
  Snapshot s;
  WhatIf w;
  w.gpus = {"B200"};
  w.driver = "535.104.05";
  ASSERT_TRUE(apply_what_if(s, w, knowledge()));
  EXPECT_EQ(diagnose(s, knowledge()).exit_code(), 1);
}

// Defect: F2's kind with the driver known (R550, CUDA 12.4) got "torch 2.6.x
// from cu124" first, an older torch than the user's, because running
// through minor-version compatibility ranked before keeping the release.
// The same release from cu126 runs its sm_60 SASS on R550 through it.
TEST(Defects, SameReleaseThroughMinorCompatBeatsAnOlderTorch) {
  for (const auto& [gpu, torch, driver, want] :
       {std::tuple{"GTX 1080 Ti", "2.8.0+cu128", "550.54.14",
                   "torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126"},
        std::tuple{"T4", "2.11.0+cu130", "535.104.05",
                   "torch==2.11.0 --index-url https://download.pytorch.org/whl/cu128"}}) {
    Snapshot s;
    WhatIf w;
    w.gpus = {gpu};
    w.torch = torch;
    w.driver = driver;
    ASSERT_TRUE(apply_what_if(s, w, knowledge()));
    const Diagnosis d = diagnose(s, knowledge());
    ASSERT_EQ(d.exit_code(), 1) << gpu;
    const Fix& fix = first_fix(d);
    EXPECT_TRUE(has(text(fix), want)) << gpu << "\n" << text(fix);
    // Said once: in the fix's own words, not again among what it leaves.
    EXPECT_TRUE(has(fix.summary, "through minor-version compatibility")) << fix.summary;
    EXPECT_FALSE(has(fix.summary, "only through minor-version compatibility")) << fix.summary;
    expect_first_fix_fixes(s, d);
  }
}

// Defect: the GB10 with Triton 3.5 got "No issues found".
TEST(Defects, TritonPtxasIsCheckedByTheDoctor) {
  const Diagnosis d = diagnose(fixture("env-gb10-triton35"), knowledge());
  bool found = false;
  for (const Finding& f : d.findings) {
    if (f.id != "triton.ptxas") continue;
    found = true;
    EXPECT_TRUE(has(f.title, "sm_121a")) << f.title;
    EXPECT_TRUE(has(text(f.fixes.front()), "TRITON_PTXAS_PATH=/usr/local/cuda-13.0/bin/ptxas") ||
                has(text(f.fixes.front()), "TRITON_PTXAS_PATH="))
        << text(f.fixes.front());
  }
  EXPECT_TRUE(found);
}

// Defect: a library whose only kernels are sm_90a counted as running on 12.0.
TEST(Defects, AVariantOnlyLibraryCannotRunElsewhere) {
  Snapshot s = fixture("F6-b200-causal-conv1d");
  s.gpus[0].cc = ComputeCapability{12, 0};
  PackageKernels& p = s.pythons[0].kernels[0];
  p.distribution = "xformers";
  p.binaries[0].groups = {{{Arch::parse("sm_80").value(), Arch::parse("sm_120").value()}, 10}};
  BinaryKernels flash3;
  flash3.path = "xformers/flash_attn_3/_C.so";
  flash3.groups = {{{Arch::parse("sm_90a").value()}, 20}};
  p.binaries.push_back(flash3);
  const Diagnosis d = diagnose(s, knowledge());
  for (const Finding& f : d.findings) {
    if (f.id == "package.arch") {
      EXPECT_NE(f.severity, Severity::ok) << f.title;
    }
  }
}

// Defect: "SASS for 6.1 needs CUDA >= 1.0" and export CUDA_HOME=/usr/local/cuda-1.0.
TEST(Defects, OldArchsNameTheLastToolkitNotCuda10) {
  Snapshot s = fixture("F2-gtx1080ti-torch28-cu128");
  s.toolkits.push_back({"/usr/local/cuda-13.0/bin/nvcc", "PATH", Version::parse("13.0.88"),
                        knowledge().nvcc_archs_for(Version({13, 0})), "table"});
  const Diagnosis d = diagnose(s, knowledge());
  bool seen = false;
  for (const Finding& f : d.findings) {
    if (f.id != "toolkit.arch") continue;
    seen = true;
    std::string all = f.title;
    for (const auto& line : f.details) all += "\n" + line;
    for (const Fix& fix : f.fixes) all += "\n" + text(fix);
    EXPECT_FALSE(has(all, "1.0")) << all;
    EXPECT_TRUE(has(all, "12.9")) << all;
  }
  EXPECT_TRUE(seen);
}

// A torch that reaches the GPU only through PTX JIT is offered a wheel with
// native SASS (the wheel choice used to do this before the resolver).
TEST(Resolver, PtxJitGetsANativeWheelToo) {
  const Diagnosis d = diagnose(fixture("rtx5090-ptx-only"), knowledge());
  bool offered = false;
  for (const Finding& f : d.findings) {
    if (f.id != "torch.arch") continue;
    for (const Fix& fix : f.fixes) offered = offered || has(fix.summary, "Or, for native SASS: Install torch");
  }
  EXPECT_TRUE(offered);
}

// The resolver takes constraints as a value: one wheel for a fleet's GPUs.
TEST(Resolver, OneWheelForSeveralGpusAndDrivers) {
  Constraints c;
  c.gpus = {{7, 0}, {8, 0}, {9, 0}, {10, 0}};
  c.drivers = {{Version::parse("570.133.20"), Version({12, 8})}, {Version::parse("575.57.08"), Version({12, 9})}};
  c.torch = InstalledTorch{Version({2, 15, 0}), "cu132", Version({13, 2}), {}};
  const Resolution r = resolve(c, knowledge());
  ASSERT_FALSE(r.winners.empty());
  const Remedy& best = r.winners.front();
  ASSERT_TRUE(best.wheel);
  EXPECT_FALSE(best.driver);
  EXPECT_EQ(best.wheel->wheel->variant, "cu128");  // 2.10 cu128 has 7.0 and 10.0 and runs on R570
  EXPECT_EQ(best.wheel->release.major_minor(), "2.10");
  EXPECT_FALSE(r.rejected.empty());
}

// An extension moved with a new torch is rebuilt like any source build: for
// the GPUs with its recipe's switch, and the fix says first when no installed
// nvcc has the new torch's CUDA major (cpp_extension refuses it).
TEST(Resolver, RebuiltExtensionGetsItsSwitchAndTheToolkitItNeeds) {
  Snapshot s;
  s.toolkits.push_back({"/usr/local/cuda/bin/nvcc", "PATH", Version::parse("13.0.88"), {}, "table"});
  WhatIf w;
  w.gpus = {"RTX 5090"};
  w.driver = "575.51.03";
  w.torch = "2.6.0+cu124";
  w.with = {"flash-attn==2.7.4"};
  ASSERT_TRUE(apply_what_if(s, w, knowledge()));
  const Diagnosis d = diagnose(s, knowledge());
  const Fix& fix = first_fix(d);
  const std::string all = text(fix);
  ASSERT_TRUE(has(fix.summary, "flash-attn 2.7.4 is built against the old torch")) << all;
  EXPECT_TRUE(has(fix.summary, "first: no installed CUDA toolkit")) << all;
  // Pinned to the installed release's tag, not the default branch (which may need a newer torch).
  EXPECT_TRUE(has(all, "torchfix build flash-attn --arch 12.0 --ref v2.7.4")) << all;
  EXPECT_TRUE(has(all, "FLASH_ATTN_CUDA_ARCHS=120 FLASH_ATTENTION_FORCE_BUILD=TRUE")) << all;

  // With an nvcc of the new torch's major installed, nothing is said first.
  s.toolkits.push_back({"/usr/local/cuda-12.8/bin/nvcc", "/usr/local/cuda-*", Version::parse("12.8.93"), {}, "table"});
  const std::string with_128 = text(first_fix(diagnose(s, knowledge())));
  EXPECT_FALSE(has(with_128, "first: no installed CUDA toolkit")) << with_128;
  // Where torch itself is built from source, it is built first and the
  // extension after it, against the source build's CUDA (12.x), not the old
  // torch's.
  bool source_seen = false;
  for (const Finding& f : diagnose(s, knowledge()).findings) {
    for (const Fix& source : f.fixes) {
      const std::string t = text(source);
      const std::size_t torch_at = t.find("torchfix build pytorch");
      if (torch_at == std::string::npos) continue;
      source_seen = true;
      const std::size_t ext_at = t.find("torchfix build flash-attn");
      ASSERT_NE(ext_at, std::string::npos) << t;
      EXPECT_LT(torch_at, ext_at) << t;
      EXPECT_TRUE(source.summary.starts_with("Build pytorch from source")) << source.summary;
      EXPECT_FALSE(has(source.summary, "torch's CUDA is 12.4")) << source.summary;
    }
  }
  EXPECT_TRUE(source_seen);
}

}  // namespace
}  // namespace torchfix
