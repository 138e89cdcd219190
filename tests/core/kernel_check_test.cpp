// doctor --run: real launches against static verdicts. A disagreement must
// be loud; agreement quiet; extensions without a verdict or without an op
// reported for what they are.

#include "core/tune/kernel_check.hpp"

#include <gtest/gtest.h>

namespace torchfix {
namespace {

Finding verdict(std::string id, std::string package, int gpu, Reach reach) {
  Finding f;
  f.id = std::move(id);
  f.package = std::move(package);
  f.gpu = gpu;
  f.reach = reach;
  f.severity = reach == Reach::none ? Severity::problem : Severity::ok;
  f.title = f.package + (reach == Reach::none ? " cannot run" : " runs");
  return f;
}

TuneReport launched(bool torch_ok, std::optional<bool> ext_launched, bool imported = true) {
  TuneReport r;
  r.mode = "run";
  GpuRun g;
  g.index = 0;
  g.name = "NVIDIA H200";
  g.smoke_ok = torch_ok;
  if (!torch_ok) g.smoke_error = "RuntimeError: CUDA error: no kernel image is available for execution on the device";
  ExtensionRun e;
  e.distribution = "flash_attn";
  e.module = "flash_attn";
  e.imported = imported;
  e.launched = ext_launched;
  e.op = "flash_attn.flash_attn_func";
  if (!imported) e.error = "ImportError: undefined symbol";
  g.extensions.push_back(e);
  r.gpus.push_back(g);
  return r;
}

const Finding* with_id(const std::vector<Finding>& fs, std::string_view id, std::string_view package) {
  for (const Finding& f : fs) {
    if (f.id == id && f.package == package) return &f;
  }
  return nullptr;
}

TEST(KernelCheck, AgreementIsReportedAsAgreement) {
  Diagnosis d;
  d.findings = {verdict("torch.arch", "torch", 0, Reach::native),
                verdict("package.arch", "flash-attn", 0, Reach::native)};
  const auto out = kernel_run_findings(d, launched(true, true));
  ASSERT_EQ(out.size(), 2u);
  for (const Finding& f : out) {
    EXPECT_EQ(f.id, "run.agrees");
    EXPECT_EQ(f.severity, Severity::ok);
  }
}

TEST(KernelCheck, ALaunchThatFailsWhereTheRulesSaidItRunsIsARuleBug) {
  Diagnosis d;
  d.findings = {verdict("torch.arch", "torch", 0, Reach::native),
                verdict("package.arch", "flash-attn", 0, Reach::native)};
  const auto out = kernel_run_findings(d, launched(false, true));
  const Finding* bug = with_id(out, "run.disagrees", "torch");
  ASSERT_NE(bug, nullptr);
  EXPECT_EQ(bug->severity, Severity::problem);
  EXPECT_TRUE(bug->title.starts_with("TORCHFIX RULE BUG")) << bug->title;
  EXPECT_NE(bug->details[1].find("no kernel image"), std::string::npos);
  EXPECT_EQ(with_id(out, "run.agrees", "flash_attn")->severity, Severity::ok) << "flash_attn = flash-attn";
}

TEST(KernelCheck, ALaunchThatRunsWhereTheRulesSaidItCannotIsARuleBugToo) {
  Diagnosis d;
  d.findings = {verdict("torch.arch", "torch", 0, Reach::none), verdict("package.arch", "flash-attn", 0, Reach::none)};
  const auto out = kernel_run_findings(d, launched(false, true));
  EXPECT_EQ(with_id(out, "run.agrees", "torch")->severity, Severity::problem) << "both say it fails";
  const Finding* bug = with_id(out, "run.disagrees", "flash_attn");
  ASSERT_NE(bug, nullptr);
  EXPECT_NE(bug->title.find("said it cannot run"), std::string::npos);
  EXPECT_FALSE(bug->fixes.empty());
}

TEST(KernelCheck, ImportFailuresAndImportOnlyPackagesAreNotVerdicts) {
  Diagnosis d;
  d.findings = {verdict("torch.arch", "torch", 0, Reach::native)};
  const auto failed_import = kernel_run_findings(d, launched(true, std::nullopt, false));
  EXPECT_EQ(with_id(failed_import, "run.import", "flash_attn")->severity, Severity::warning);
  const auto import_only = kernel_run_findings(d, launched(true, std::nullopt));
  EXPECT_EQ(import_only.size(), 1u) << "only torch's launch";
  const auto no_verdict = kernel_run_findings(d, launched(true, false));
  const Finding* f = with_id(no_verdict, "run.launch", "flash_attn");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::problem);
}

// An extension with no public op torchfix knows: the child loaded its CUDA
// modules (templates/kernel_load.py) and the finding says so, not "launched".
TEST(KernelCheck, ALoadedModuleIsJudgedLikeALaunchAndSaysWhatRan) {
  Diagnosis d;
  d.findings = {verdict("torch.arch", "torch", 0, Reach::native),
                verdict("package.arch", "flash-attn", 0, Reach::none)};
  TuneReport r = launched(true, false);
  r.gpus[0].extensions[0].loaded_only = true;
  r.gpus[0].extensions[0].op = "cuModuleLoadFatBinary";
  r.gpus[0].extensions[0].error = "CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available (_C.so)";
  const auto out = kernel_run_findings(d, r);
  const Finding* f = with_id(out, "run.agrees", "flash_attn");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::problem);
  EXPECT_EQ(f->title, "flash_attn has no kernel image it can load on GPU 0 (NVIDIA H200), as the static check said");
  r.gpus[0].extensions[0].launched = true;
  d.findings[1] = verdict("package.arch", "flash-attn", 0, Reach::native);
  EXPECT_EQ(with_id(kernel_run_findings(d, r), "run.agrees", "flash_attn")->title,
            "flash_attn loaded its kernels on GPU 0 (NVIDIA H200), as the static check said");
}

}  // namespace
}  // namespace torchfix
