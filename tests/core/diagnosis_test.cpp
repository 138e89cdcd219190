// Field cases (shared/cases/field-cases.md) as snapshot fixtures fed to the
// diagnosis, asserting the verdict and the fix; plus the rules around them.

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

#include <gtest/gtest.h>

#include <tuple>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/repo_knowledge.hpp"
#include "core/situation/what_if.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix {
namespace {

const Knowledge& knowledge() {
  return torchfix::testing::repo_knowledge();
}

Snapshot fixture(const std::string& name) {
  std::ifstream in(std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/" + name + ".json");
  std::stringstream text;
  text << in.rdbuf();
  auto snapshot = snapshot_from_json(nlohmann::json::parse(text.str()));
  if (!snapshot) throw std::runtime_error(snapshot.error().message);
  return *snapshot;
}

std::vector<const Finding*> find(const Diagnosis& d, const std::string& id) {
  std::vector<const Finding*> out;
  for (const Finding& f : d.findings) {
    if (f.id == id) out.push_back(&f);
  }
  return out;
}

const Finding& only(const Diagnosis& d, const std::string& id) {
  auto found = find(d, id);
  if (found.size() != 1)
    throw std::runtime_error("expected one finding " + id + ", got " + std::to_string(found.size()));
  return *found.front();
}

std::string all_commands(const Finding& f) {
  std::string out;
  for (const Fix& fix : f.fixes) {
    out += fix.summary + "\n";
    for (const std::string& c : fix.commands) out += c + "\n";
  }
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FieldCases, F1NewConsumerGpuOldWheel) {
  const Diagnosis d = diagnose(fixture("F1-rtx5090d-torch26-cu126"), knowledge());
  const Finding& f = only(d, "torch.arch");
  EXPECT_EQ(f.severity, Severity::problem);
  EXPECT_EQ(f.gpu, 0);
  EXPECT_EQ(f.reach, Reach::none);
  const std::string fix = all_commands(f);
  // Driver 570 supports CUDA 12.8: a reinstall from cu128, torch >= 2.7 (2.11 is the newest cu128 release).
  EXPECT_TRUE(has(fix, "--index-url https://download.pytorch.org/whl/cu128")) << fix;
  EXPECT_TRUE(has(fix, "'torch==2.11.*'")) << fix;
  EXPECT_TRUE(has(fix, "torchvision")) << fix;
  EXPECT_FALSE(has(fix, "cu126") || has(fix, "cu124") || has(fix, "cu130")) << fix;
  EXPECT_EQ(d.exit_code(), 1);
}

TEST(FieldCases, F2OldGpuDroppedByNewVariant) {
  const Diagnosis d = diagnose(fixture("F2-gtx1080ti-torch28-cu128"), knowledge());
  const Finding& f = only(d, "torch.arch");
  EXPECT_EQ(f.severity, Severity::problem);
  const std::string fix = all_commands(f);
  EXPECT_TRUE(has(fix, "torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126")) << fix;
  EXPECT_FALSE(has(fix, "cu128") || has(fix, "cu130")) << fix;
}

TEST(FieldCases, F3DatacenterPascal) {
  const Diagnosis d = diagnose(fixture("F3-p100-torch28-cu128"), knowledge());
  const Finding& f = only(d, "torch.arch");
  EXPECT_EQ(f.severity, Severity::problem);
  EXPECT_TRUE(has(all_commands(f), "torch==2.8.0 --index-url https://download.pytorch.org/whl/cu126"));
}

TEST(FieldCases, F4HostDriverOlderThanContainerCuda) {
  const Diagnosis d = diagnose(fixture("F4-container-driver-cuda11"), knowledge());
  const Finding& f = only(d, "driver.too-old");
  EXPECT_EQ(f.severity, Severity::problem);
  std::string details;
  for (const auto& line : f.details) details += line + "\n";
  EXPECT_TRUE(has(details, "525.60.13")) << details;
  EXPECT_TRUE(has(details, "container")) << details;
  const std::string fix = all_commands(f);
  EXPECT_TRUE(has(fix, "on the host")) << fix;
  EXPECT_TRUE(has(fix, "whl/cu118")) << fix;
  // The arch check must not claim torch runs while the driver cannot load it.
  EXPECT_TRUE(find(d, "torch.arch").empty());
}

TEST(FieldCases, F5CpuOnlyTorchOnArmGpuMachine) {
  const Diagnosis d = diagnose(fixture("F5-gb10-cpu-torch"), knowledge());
  const Finding& f = only(d, "torch.cpu-only");
  EXPECT_EQ(f.severity, Severity::problem);
  const std::string fix = all_commands(f);
  EXPECT_TRUE(has(fix, "whl/cu130")) << fix;                            // aarch64 CUDA build covering 12.x
  EXPECT_FALSE(has(fix, "cuda-12.8") || has(fix, "CUDA_HOME")) << fix;  // the toolkit is irrelevant to a wheel
  // ...but once the cu130 wheel is in, the installed nvcc 12.8 no longer
  // matches it: the re-diagnosis says so beside each winner, and a container
  // (which brings its own nvcc) leaves no such warning.
  ASSERT_FALSE(d.remedies.empty());
  const RemedyReport& r = d.remedies.front();
  ASSERT_EQ(r.warnings_after.size(), r.resolution.winners.size());
  bool wheel_said = false;
  for (std::size_t i = 0; i < r.resolution.winners.size(); ++i) {
    std::string left;
    for (const std::string& w : r.warnings_after[i]) left += w + "\n";
    if (r.resolution.winners[i].kind == CandidateKind::container) {
      EXPECT_FALSE(has(left, "nvcc")) << left;
    } else if (r.resolution.winners[i].wheel) {
      wheel_said = wheel_said || has(left, "nvcc 12.8.93 does not match torch's CUDA 13.0");
    }
  }
  EXPECT_TRUE(wheel_said);
}

// nvcc's major differs from torch's: the fix names an installed toolkit of
// torch's major when there is one, and never a made-up path as if it existed.
TEST(Diagnosis, ToolkitMismatchPointsAtAnInstalledToolkitOrSaysToInstallOne) {
  Snapshot s = fixture("F1-rtx5090d-torch26-cu126");
  const auto mismatch_fix = [&](const Snapshot& snapshot) {
    for (const Finding& f : diagnose(snapshot, knowledge()).findings) {
      if (f.id == "torch.toolkit-mismatch" && !f.fixes.empty()) return f.fixes.front().summary + "\n" + all_commands(f);
    }
    return std::string("no torch.toolkit-mismatch finding");
  };
  s.toolkits = {{"/usr/local/cuda/bin/nvcc", "PATH", Version::parse("13.0.88"), {}, "table"}};
  const std::string none = mismatch_fix(s);
  EXPECT_TRUE(has(none, "Install a CUDA 12.6 toolkit")) << none;
  EXPECT_TRUE(has(none, "no CUDA 12.x toolkit is installed")) << none;
  s.toolkits.push_back({"/opt/cuda 12.4/bin/nvcc", "/usr/local/cuda-*", Version::parse("12.4.131"), {}, "table"});
  s.toolkits.push_back({"/usr/local/cuda-12.8/bin/nvcc", "/usr/local/cuda-*", Version::parse("12.8.93"), {}, "table"});
  const std::string installed = mismatch_fix(s);
  EXPECT_TRUE(has(installed, "Point CUDA_HOME at the installed CUDA 12.8.93 toolkit")) << installed;
  EXPECT_TRUE(has(installed, "export CUDA_HOME=/usr/local/cuda-12.8")) << installed;
  EXPECT_FALSE(has(installed, "Install a CUDA")) << installed;
}

TEST(FieldCases, F6ExtensionLacksTheArch) {
  const Diagnosis d = diagnose(fixture("F6-b200-causal-conv1d"), knowledge());
  EXPECT_EQ(only(d, "torch.arch").severity, Severity::ok);
  const Finding& f = only(d, "package.arch");
  EXPECT_EQ(f.package, "causal-conv1d");
  EXPECT_EQ(f.severity, Severity::problem);
  EXPECT_EQ(f.reach, Reach::none);
  const std::string fix = all_commands(f);
  EXPECT_TRUE(has(fix, "torchfix build causal-conv1d --arch 10.0")) << fix;
  EXPECT_TRUE(has(fix, "CAUSAL_CONV1D_FORCE_BUILD=TRUE")) << fix;  // else setup.py downloads the same prebuilt wheel
  EXPECT_TRUE(has(fix, "sm_100")) << fix;
  std::string details;
  for (const auto& line : f.details) details += line + "\n";
  EXPECT_TRUE(has(details, "CUDA >= 12.8")) << details;
}

TEST(FieldCases, F7IntegratedGpuNeedsExactArch) {
  const Diagnosis d = diagnose(fixture("F7-orin-flash-attn"), knowledge());
  EXPECT_EQ(only(d, "torch.arch").severity, Severity::ok);  // torch has sm_87
  const Finding& f = only(d, "package.arch");
  EXPECT_EQ(f.package, "flash-attn");
  EXPECT_EQ(f.severity, Severity::problem);
  const std::string fix = all_commands(f);
  EXPECT_TRUE(has(fix, "--arch 8.7")) << fix;
  EXPECT_TRUE(has(fix, "FLASH_ATTN_CUDA_ARCHS=87")) << fix;  // flash-attn ignores TORCH_CUDA_ARCH_LIST
  // FLASH_ATTN_CUDA_ARCHS=87 alone gives PTX only (setup.py makes SASS for 80/90/100/110/120): sm_87 via nvcc.
  EXPECT_TRUE(has(fix, "NVCC_APPEND_FLAGS='-gencode arch=compute_87,code=sm_87'")) << fix;
}

TEST(FieldCases, F8ServingEngineLacksOldArchs) {
  const Diagnosis d = diagnose(fixture("F8-gtx1080ti-vllm"), knowledge());
  EXPECT_EQ(only(d, "torch.arch").severity, Severity::ok);  // sm_60 runs on 6.1
  const Finding& f = only(d, "package.arch");
  EXPECT_EQ(f.package, "vllm");
  EXPECT_EQ(f.severity, Severity::problem);
  const std::string fix = all_commands(f);
  EXPECT_TRUE(has(f.fixes.front().summary, "Build vllm from source for 6.1")) << fix;
  EXPECT_TRUE(has(f.fixes.front().summary, "does not support 6.1 upstream")) << fix;  // said plainly
  // A fix never names a build that torchfix build refuses: the vllm recipe
  // exists but has no kernels for 6.1, so only pip's source build is offered.
  ASSERT_NE(knowledge().build_recipe("vllm"), nullptr);
  EXPECT_FALSE(has(fix, "torchfix build vllm")) << fix;
  EXPECT_TRUE(has(fix, "--no-binary vllm")) << fix;
  std::string details;
  for (const auto& line : f.details) details += line + "\n";
  EXPECT_TRUE(has(details, "does not support 6.1 upstream")) << details;
}

TEST(FieldCases, F10HostCompilerTooNew) {
  const Diagnosis d = diagnose(fixture("F10-rtx4090-gcc14-nvcc125"), knowledge());
  const Finding& f = only(d, "compiler.outside-nvcc-bounds");
  EXPECT_EQ(f.severity, Severity::warning);
  EXPECT_TRUE(has(f.title, "gcc 14.2.1")) << f.title;
  EXPECT_TRUE(has(f.title, "gcc < 14")) << f.title;
  const std::string fix = all_commands(f);
  EXPECT_TRUE(has(fix, "CUDAHOSTCXX=/usr/bin/g++-13")) << fix;
  EXPECT_TRUE(has(fix, "CUDA 12.8 or newer")) << fix;
  EXPECT_TRUE(has(fix, "sudo dnf install gcc13-c++")) << fix;  // Fedora 40: its gcc13 compat package
  EXPECT_FALSE(has(fix, "apt")) << fix;
  EXPECT_EQ(d.exit_code(), 0);  // a warning before any build, not a failure

  // The install command follows the distribution the snapshot names.
  for (const auto& [os, command, cxx] :
       {std::tuple{"Ubuntu 24.04.1 LTS", "sudo apt install g++-13", "/usr/bin/g++-13"},
        std::tuple{"Rocky Linux 9.4 (Blue Onyx)", "sudo dnf install gcc-toolset-13-gcc-c++",
                   "/opt/rh/gcc-toolset-13/root/usr/bin/g++"}}) {
    Snapshot other = fixture("F10-rtx4090-gcc14-nvcc125");
    other.platform.os = os;
    const std::string other_fix = all_commands(only(diagnose(other, knowledge()), "compiler.outside-nvcc-bounds"));
    EXPECT_TRUE(has(other_fix, command)) << os << "\n" << other_fix;
    EXPECT_TRUE(has(other_fix, std::string("CUDAHOSTCXX=") + cxx)) << os << "\n" << other_fix;
  }

  // With an older g++ installed, the fix points at it instead of installing one.
  Snapshot s = fixture("F10-rtx4090-gcc14-nvcc125");
  s.compilers.push_back({"/usr/bin/g++-13", "PATH", CompilerFamily::gcc, Version::parse("13.3.1")});
  const Diagnosis with_13 = diagnose(s, knowledge());
  const std::string fix13 = all_commands(only(with_13, "compiler.outside-nvcc-bounds"));
  EXPECT_TRUE(has(fix13, "export CUDAHOSTCXX=/usr/bin/g++-13")) << fix13;
  EXPECT_FALSE(has(fix13, "apt install")) << fix13;
}

TEST(Diagnosis, MixedGpusNameTheWorkaround) {
  const Diagnosis d = diagnose(fixture("mixed-a10-gtx1080ti"), knowledge());
  const Finding& mixed = only(d, "torch.mixed-gpus");
  EXPECT_EQ(mixed.severity, Severity::problem);
  const std::string fix = all_commands(mixed);
  EXPECT_TRUE(has(fix, "export CUDA_DEVICE_ORDER=PCI_BUS_ID\nexport CUDA_VISIBLE_DEVICES=0\n")) << fix;
  EXPECT_TRUE(has(fix, "whl/cu126")) << fix;  // cu126 covers both 8.6 and 6.1
}

TEST(Diagnosis, Gb10WarningIsAFalseAlarm) {
  const Diagnosis d = diagnose(fixture("gb10-torch211-cu130"), knowledge());
  const Finding& f = only(d, "torch.arch");
  EXPECT_EQ(f.reach, Reach::native);
  EXPECT_EQ(f.severity, Severity::note);
  EXPECT_TRUE(has(f.title, "false alarm")) << f.title;
  EXPECT_EQ(d.exit_code(), 0);
}

TEST(Diagnosis, PtxOnlyIsAWarningWithCacheAdvice) {
  const Diagnosis d = diagnose(fixture("rtx5090-ptx-only"), knowledge());
  const Finding& f = only(d, "torch.arch");
  EXPECT_EQ(f.reach, Reach::ptx_jit);
  EXPECT_EQ(f.severity, Severity::warning);
  EXPECT_TRUE(has(all_commands(f), "CUDA_CACHE_MAXSIZE"));
}

TEST(Diagnosis, PtxJitNeedsADriverForThePtx) {
  Snapshot s = fixture("rtx5090-ptx-only");
  s.driver.cuda_version = Version({12, 2});  // below torch's CUDA 12.4: cannot JIT its PTX
  s.driver.version = Version::parse("535.54.03");
  const Diagnosis d = diagnose(s, knowledge());
  for (const Finding* f : find(d, "torch.arch")) EXPECT_EQ(f->severity, Severity::problem);
}

TEST(Diagnosis, MinorVersionCompatibilityIsAWarning) {
  const Diagnosis d = diagnose(fixture("a10-minor-compat"), knowledge());
  EXPECT_EQ(only(d, "driver.minor-compat").severity, Severity::warning);
  EXPECT_EQ(only(d, "torch.arch").severity, Severity::ok);
}

TEST(WhatIf, NewGpuWithOldTorchGetsCu128) {
  Snapshot s;
  WhatIf w;
  w.gpus = {"RTX 5070 Ti"};
  w.torch = "2.6.0+cu124";
  ASSERT_TRUE(apply_what_if(s, w, knowledge()));
  ASSERT_EQ(s.gpus.size(), 1u);
  EXPECT_EQ(s.gpus[0].cc, (ComputeCapability{12, 0}));
  const Diagnosis d = diagnose(s, knowledge());
  const Finding& f = only(d, "torch.arch");
  EXPECT_EQ(f.severity, Severity::problem);
  // The driver is unknown: the newest release whose wheel has sm_120, with the driver it needs.
  EXPECT_TRUE(has(f.fixes.front().summary, "it needs a driver supporting CUDA")) << all_commands(f);
  EXPECT_TRUE(has(f.fixes.front().summary, "12.0")) << all_commands(f);
}

TEST(WhatIf, BadValuesAreErrorsThatNameTheValue) {
  Snapshot s;
  WhatIf gpu;
  gpu.gpus = {"RTX 9999 Hyper"};
  auto r = apply_what_if(s, gpu, knowledge());
  ASSERT_FALSE(r);
  EXPECT_TRUE(has(r.error().message, "RTX 9999 Hyper"));
  WhatIf torch;
  torch.torch = "2.6.0+cuda";  // 2.6.0 alone is that release's PyPI default (core/situation/what_if.hpp)
  EXPECT_FALSE(apply_what_if(s, torch, knowledge()));
  WhatIf driver;
  driver.driver = "new";
  EXPECT_FALSE(apply_what_if(s, driver, knowledge()));
}

TEST(WhatIf, DriverVersionGivesItsCuda) {
  Snapshot s;
  WhatIf w;
  w.driver = "570.124.04";
  ASSERT_TRUE(apply_what_if(s, w, knowledge()));
  EXPECT_EQ(situate(s, knowledge()).driver.cuda->major_minor(), "12.8");
}

TEST(Knowledge, ResolvesNamesAndRefusesAmbiguity) {
  EXPECT_EQ(knowledge().resolve_gpu("NVIDIA GeForce RTX 5090 D").value(), (ComputeCapability{12, 0}));
  EXPECT_EQ(knowledge().resolve_gpu("h200").value(), (ComputeCapability{9, 0}));
  EXPECT_EQ(knowledge().resolve_gpu("Jetson AGX Orin").value(), (ComputeCapability{8, 7}));
  auto ambiguous = knowledge().resolve_gpu("RTX");
  ASSERT_FALSE(ambiguous);
  EXPECT_TRUE(has(ambiguous.error().message, "ambiguous"));
}

TEST(Knowledge, EveryRowCarriesItsSource) {
  const Knowledge& k = knowledge();
  for (const auto& row : k.gpus) EXPECT_FALSE(row.source.empty());
  for (const auto& row : k.wheels) EXPECT_FALSE(row.source.empty());
  for (const auto& row : k.host_compilers) EXPECT_FALSE(row.source.empty());
  auto bad = parse_knowledge({{"x.toml", "[[gpu]]\ncc = \"9.0\"\nnames = [\"H100\"]\n"}});
  ASSERT_FALSE(bad);
  EXPECT_TRUE(has(bad.error().message, "x.toml:1")) << bad.error().message;
  EXPECT_TRUE(has(bad.error().message, "source")) << bad.error().message;
}

}  // namespace
}  // namespace torchfix

namespace torchfix {
namespace {

// Saved by `torchfix doctor --import --save-snapshot` on the lent H200 machine
// (docs/gpu-runs/): its binaries were read from disk, so this is binary truth.
TEST(RealMachine, H200WithTorch211RunsAndNvidiaLibrariesAreNotFlagged) {
  const Diagnosis d = diagnose(fixture("h200-torch211-cu130"), knowledge());
  const Finding& torch = only(d, "torch.arch");
  EXPECT_EQ(torch.severity, Severity::ok) << torch.title;
  EXPECT_EQ(torch.reach, Reach::native);
  EXPECT_TRUE(has(torch.details.front(), "read from torch's binaries")) << torch.details.front();
  for (const Finding* f : find(d, "package.arch")) {
    EXPECT_FALSE(f->package.starts_with("nvidia-")) << f->title;
    EXPECT_EQ(f->severity, Severity::ok) << f->title;
  }
  // Its flags say sm_75..sm_120; its binaries also hold sm_89 and a-variants.
  const Finding& flags = only(d, "torch.flags-vs-binaries");
  EXPECT_EQ(flags.severity, Severity::note);
  EXPECT_TRUE(has(flags.details.front(), "sm_90a")) << flags.details.front();
  EXPECT_EQ(d.exit_code(), 0);
}

TEST(RealMachine, ModulesOnlyForOtherArchsAreNotCountedButGenericGapsAre) {
  Snapshot s = fixture("F6-b200-causal-conv1d");
  PackageKernels& p = s.pythons[0].kernels[0];
  // 14 modules with sm_80/sm_90 plus 2 Hopper-only (sm_90a) modules: on a B200
  // still nothing runs; on an H100 all generic modules run.
  p.binaries[0].groups.push_back({{Arch::parse("sm_90a").value()}, 2});
  EXPECT_EQ(only(diagnose(s, knowledge()), "package.arch").severity, Severity::problem);
  s.gpus[0].cc = ComputeCapability{9, 0};
  EXPECT_EQ(only(diagnose(s, knowledge()), "package.arch").severity, Severity::ok);
  // A generic module built without 9.0 is a real gap: a warning naming the share.
  p.binaries[0].groups.push_back({{Arch::parse("sm_80").value()}, 3});
  const Diagnosis with_gap = diagnose(s, knowledge());
  const Finding& partial = only(with_gap, "package.arch");
  EXPECT_EQ(partial.severity, Severity::warning);
  EXPECT_TRUE(has(partial.title, "3 of 17")) << partial.title;
}

}  // namespace
}  // namespace torchfix

namespace torchfix {
namespace {

TEST(Diagnosis, ArchListVariableThatMissesTheGpuIsAWarningWithTheRightList) {
  Snapshot s = fixture("F1-rtx5090d-torch26-cu126");
  s.environment["TORCH_CUDA_ARCH_LIST"] = "8.6";  // copied from a guide for an RTX 30xx
  const Diagnosis d = diagnose(s, knowledge());
  const Finding& f = only(d, "env.arch-list");
  EXPECT_EQ(f.severity, Severity::warning);
  EXPECT_TRUE(has(all_commands(f), "export TORCH_CUDA_ARCH_LIST=12.0+PTX")) << all_commands(f);
  s.environment["TORCH_CUDA_ARCH_LIST"] = "Auto";
  EXPECT_EQ(only(diagnose(s, knowledge()), "env.arch-list-invalid").severity, Severity::warning);
  s.environment["TORCH_CUDA_ARCH_LIST"] = "12.0";
  EXPECT_EQ(only(diagnose(s, knowledge()), "env.arch-list").severity, Severity::ok);
}

}  // namespace
}  // namespace torchfix
