// torchfix tune, pure part: the child's JSON contract (parsed from the real
// child script run on Debian's CPU torch, and from a document of the shape it
// prints on a GPU), the peaks table, the advice from measured numbers, and
// the runtime environment part.

#include "core/tune/tune.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../support/linux_only.hpp"
#include "probe/process.hpp"

namespace torchfix {
namespace {

const std::string k_source = TORCHFIX_SOURCE_DIR;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

ProcessResult run_child(const std::vector<std::string>& python, std::vector<std::string> args) {
  SystemProcessRunner runner;
  Command c;
  c.program = python.front();
  c.args.assign(python.begin() + 1, python.end());
  c.args.push_back(k_source + "/templates/tune_child.py");
  c.args.insert(c.args.end(), args.begin(), args.end());
  c.env = Environment{{"PATH", "/usr/bin:/bin"}, {"HOME", "/tmp"}};
  c.timeout = std::chrono::seconds(120);
  auto r = runner.run(c);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

bool debian_torch() {
  return std::filesystem::exists("/usr/lib/python3/dist-packages/torch/__init__.py");
}

// One GPU document as the child prints it (fields of templates/tune_child.py),
// with the numbers measured on the H200 machine (shared/facts/runtime.md).
std::string h200_document(const std::string& torch = "2.11.0+cu130", const std::string& settings_extra = "",
                          const std::string& cc = "9.0", const std::string& env = "null") {
  return R"J({"schema": 1, "mode": "tune", "quick": false, "status": "ok", "message": null, "python": "3.12.3",
  "torch": {"version": ")J" +
         torch + R"J(", "cuda": "13.0", "hip": null, "cudnn": 91900},
  "settings": {"matmul_allow_tf32": false, "matmul_fp32_precision": null, "float32_matmul_precision": "highest",
               "cudnn_allow_tf32": true, "cudnn_benchmark": false)J" +
         settings_extra + R"J(},
  "allocator": {"backend": "native", "conf": null, "conf_variable": null},
  "environment": {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": )J" +
         env + R"J(, "NVIDIA_PYTORCH_VERSION": null},
  "gpus": [{"index": 0, "name": "NVIDIA H200", "cc": ")J" +
         cc + R"J(", "sm_count": 132, "memory_bytes": 150000000000,
    "smoke": {"ok": true, "error": null, "seconds": 0.2},
    "extensions": [{"distribution": "torchvision", "module": "torchvision", "imported": true, "launched": true,
                    "op": "torchvision.ops.nms (1 kept)", "error": null},
                   {"distribution": "torchaudio", "module": "torchaudio", "imported": true, "launched": null,
                    "op": "no simple public op known: import only", "error": null},
                   {"distribution": "my-ext", "module": "my_ext", "imported": true, "launched": false, "check": "load",
                    "op": "cuModuleLoadFatBinary", "error": "CUDA_ERROR_NO_BINARY_FOR_GPU (_C.so)"}],
    "matmul": [{"dtype": "fp32", "n": 8192, "iterations": 20, "seconds": 0.43, "tflops": 51.1, "error": null, "skipped": null},
               {"dtype": "tf32", "n": 8192, "iterations": 20, "seconds": 0.057, "tflops": 384.4, "error": null, "skipped": null},
               {"dtype": "bf16", "n": 8192, "iterations": 20, "seconds": 0.028, "tflops": 778.8, "error": null, "skipped": null},
               {"dtype": "fp16", "n": 8192, "iterations": 20, "seconds": 0.029, "tflops": 751.8, "error": null, "skipped": null},
               {"dtype": "fp8", "n": 8192, "iterations": 20, "seconds": null, "tflops": null, "error": "RuntimeError: x", "skipped": null}],
    "conv": {
  "shape" : "conv2d", "benchmark_off_ms" : 1.2, "benchmark_on_ms" : 0.8, "error" : null
}
}],
  "elapsed_seconds": 21.5
})J";
}

const Advice* find(const std::vector<Advice>& advice, std::string_view id) {
  for (const Advice& a : advice) {
    if (a.id == id) return &a;
  }
  return nullptr;
}

TEST(TuneChild, WithoutTorchReportsNoTorchAsJson) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  // -S drops site-packages: the same interpreter, no torch.
  auto r = run_child({"/usr/bin/python3", "-S"}, {"--mode", "tune"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = parse_tune_report(r.out);
  ASSERT_TRUE(report) << report.error().message << "\n" << r.out;
  EXPECT_EQ(report->status, TuneStatus::no_torch);
  EXPECT_NE(report->message.find("torch is not installed"), std::string::npos) << report->message;
  EXPECT_TRUE(report->gpus.empty());
}

TEST(TuneChild, DebianCpuTorchIsReportedCpuOnlyWithItsSettings) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  if (!debian_torch()) GTEST_SKIP() << "python3-torch (Debian's CPU torch) is not installed";
  const std::string progress = ::testing::TempDir() + "/tune-progress.txt";
  auto r = run_child({"/usr/bin/python3"}, {"--mode", "run", "--package", "torchvision", "--progress", progress});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = parse_tune_report(r.out);
  ASSERT_TRUE(report) << report.error().message << "\n" << r.out;
  EXPECT_EQ(report->status, TuneStatus::cpu_only);
  EXPECT_EQ(report->mode, "run");
  EXPECT_NE(report->message.find("CPU-only build"), std::string::npos) << report->message;
  EXPECT_TRUE(report->torch_version.starts_with("1.13")) << report->torch_version;
  EXPECT_FALSE(report->torch_cuda);
  // torch 1.13: no fp32_precision attribute, precision "highest" by default.
  EXPECT_FALSE(report->settings.matmul_fp32_precision);
  EXPECT_EQ(report->settings.float32_matmul_precision, "highest");
  EXPECT_FALSE(report->settings.matmul_allow_tf32);
  EXPECT_EQ(read_text(progress), "importing torch\n");
}

TEST(TuneChild, BadArgumentsFailTheScriptNotTheContract) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  auto r = run_child({"/usr/bin/python3", "-S"}, {"--mode", "bench"});
  EXPECT_EQ(r.exit_code, 2);  // argparse
  EXPECT_FALSE(parse_tune_report(r.out));
}

TEST(TuneReport, ParsesEveryFieldOfAGpuDocument) {
  // The child prints its document on one line, after whatever torch printed.
  std::string one_line = h200_document();
  std::erase(one_line, '\n');
  auto r = parse_tune_report("torch warning printed on stdout\n" + one_line + "\n");
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, TuneStatus::ok);
  EXPECT_EQ(r->torch_version, "2.11.0+cu130");
  EXPECT_EQ(r->cudnn, 91900);
  ASSERT_EQ(r->gpus.size(), 1u);
  const GpuRun& g = r->gpus[0];
  EXPECT_EQ(g.cc, (ComputeCapability{9, 0}));
  EXPECT_EQ(g.sm_count, 132);
  EXPECT_TRUE(g.smoke_ok);
  ASSERT_EQ(g.extensions.size(), 3u);
  EXPECT_EQ(g.extensions[0].launched, true);
  EXPECT_FALSE(g.extensions[0].loaded_only) << "no \"check\": a launch (older children)";
  EXPECT_FALSE(g.extensions[1].launched);
  EXPECT_EQ(g.extensions[2].launched, false);
  EXPECT_TRUE(g.extensions[2].loaded_only);
  ASSERT_EQ(g.matmul.size(), 5u);
  EXPECT_DOUBLE_EQ(*g.find("bf16")->tflops, 778.8);
  EXPECT_EQ(g.find("fp8")->error, "RuntimeError: x");
  ASSERT_TRUE(g.conv);
  EXPECT_DOUBLE_EQ(*g.conv->benchmark_on_ms, 0.8);
  EXPECT_DOUBLE_EQ(r->elapsed_seconds, 21.5);
}

TEST(TuneReport, ParsesTheChildsOutputFromTheH200Machine) {
  // templates/tune_child.py --mode tune --quick on the lent H200 (torch 2.11.0+cu130), December 2026.
  auto r = parse_tune_report(read_text(k_source + "/tests/fixtures/tune/h200-child-quick.json"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->status, TuneStatus::ok);
  EXPECT_EQ(r->torch_version, "2.11.0+cu130");
  EXPECT_EQ(r->settings.matmul_fp32_precision, "none");
  ASSERT_EQ(r->gpus.size(), 1u);
  const GpuRun& g = r->gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H200");
  EXPECT_TRUE(g.smoke_ok);
  for (const char* dtype : {"fp32", "tf32", "bf16", "fp16", "fp8"}) {
    ASSERT_NE(g.find(dtype), nullptr) << dtype;
    EXPECT_GT(g.find(dtype)->tflops.value_or(0), 10.0) << dtype;
  }
  const auto advice = tune_advice(*r, g);
  ASSERT_TRUE(find(advice, "tf32") && find(advice, "tf32")->helps);
  EXPECT_GT(*find(advice, "tf32")->factor, 4.0);
}

TEST(TuneReport, RejectsDocumentsThatBreakTheContract) {
  auto none = parse_tune_report("Traceback (most recent call last):\n");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("torchfix bug"), std::string::npos);
  EXPECT_FALSE(parse_tune_report(R"({"schema": 2, "status": "ok", "gpus": []})"));
  EXPECT_FALSE(parse_tune_report(R"({"schema": 1, "status": "fine", "gpus": []})"));
  EXPECT_FALSE(parse_tune_report(R"({"schema": 1, "status": "ok"})"));
  EXPECT_FALSE(parse_tune_report(R"({"schema": 1, "status": "ok", "gpus": [{"name": "x"}]})"));
}

TEST(GpuPeaks, TableParsesAndMatchesTheLongestName) {
  const std::string file = k_source + "/recipes/gpu-peaks.toml";
  auto peaks = parse_gpu_peaks(read_text(file), file);
  ASSERT_TRUE(peaks) << peaks.error().message;
  const GpuPeak* h200 = find_peak(*peaks, "NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  EXPECT_DOUBLE_EQ(*h200->bf16, 989.4);
  EXPECT_EQ(find_peak(*peaks, "NVIDIA H200 NVL")->fp32, 60.0);
  EXPECT_EQ(find_peak(*peaks, "NVIDIA H100 PCIe")->fp32, 51.0);
  EXPECT_EQ(find_peak(*peaks, "NVIDIA A100-SXM4-80GB")->tf32, 156.0);
  EXPECT_EQ(find_peak(*peaks, "NVIDIA GeForce RTX 4090")->fp8, 330.3);
  EXPECT_FALSE(find_peak(*peaks, "Tesla V100-SXM2-32GB")->tf32);
  EXPECT_EQ(find_peak(*peaks, "NVIDIA GeForce RTX 5070 Ti"), nullptr);
  EXPECT_EQ(find_peak(*peaks, "NVIDIA A1000"), nullptr) << "A100 must not match A1000";
  auto unsourced = parse_gpu_peaks("[[peak]]\nnames = [\"X\"]\nfp32 = 1.0\n", "p.toml");
  ASSERT_FALSE(unsourced);
  EXPECT_NE(unsourced.error().message.find("p.toml:1"), std::string::npos);
}

TEST(TuneAdvice, H200NumbersGiveTf32AndBf16WithMeasuredFactorsInTheNewApi) {
  auto r = *parse_tune_report(h200_document());
  const auto advice = tune_advice(r, r.gpus[0]);
  const Advice* tf32 = find(advice, "tf32");
  ASSERT_NE(tf32, nullptr);
  EXPECT_TRUE(tf32->helps);
  EXPECT_NEAR(*tf32->factor, 384.4 / 51.1, 1e-9);
  EXPECT_NE(tf32->title.find("7.52x"), std::string::npos) << tf32->title;
  EXPECT_EQ(tf32->lines.front(), "torch.backends.cuda.matmul.fp32_precision = \"tf32\"");
  const Advice* bf16 = find(advice, "bf16-autocast");
  ASSERT_TRUE(bf16 && bf16->helps);
  EXPECT_EQ(bf16->lines.front(), "with torch.autocast(\"cuda\", dtype=torch.bfloat16):");
  const Advice* conv = find(advice, "cudnn-benchmark");
  ASSERT_TRUE(conv && conv->helps);
  EXPECT_NEAR(*conv->factor, 1.5, 1e-9);
  const Advice* alloc = find(advice, "allocator");
  ASSERT_TRUE(alloc && alloc->helps);
  EXPECT_EQ(alloc->env_name, "PYTORCH_ALLOC_CONF");
  EXPECT_EQ(find(advice, "fp8"), nullptr) << "fp8 failed: no fp8 advice";
}

TEST(TuneAdvice, OlderTorchGetsItsOwnApi) {
  auto r28 = *parse_tune_report(h200_document("2.8.0+cu128"));
  const auto a28 = tune_advice(r28, r28.gpus[0]);
  EXPECT_EQ(find(a28, "tf32")->lines, std::vector<std::string>{"torch.set_float32_matmul_precision(\"high\")"});
  EXPECT_EQ(find(a28, "allocator")->env_name, "PYTORCH_CUDA_ALLOC_CONF");
  auto r111 = *parse_tune_report(h200_document("1.11.0+cu113"));
  EXPECT_EQ(find(tune_advice(r111, r111.gpus[0]), "tf32")->lines,
            std::vector<std::string>{"torch.backends.cuda.matmul.allow_tf32 = True"});
}

TEST(TuneAdvice, NoTf32OrBf16BeforeAmpereButFp16WithLossScaling) {
  auto r = *parse_tune_report(h200_document("2.8.0+cu126", "", "7.0"));
  const auto advice = tune_advice(r, r.gpus[0]);
  EXPECT_FALSE(find(advice, "tf32")->helps);
  EXPECT_NE(find(advice, "tf32")->title.find("TF32 tensor cores arrived with 8.0"), std::string::npos);
  EXPECT_FALSE(find(advice, "bf16-autocast")->helps);
  const Advice* fp16 = find(advice, "fp16-autocast");
  ASSERT_TRUE(fp16 && fp16->helps);
  EXPECT_EQ(fp16->lines[1], "scaler = torch.amp.GradScaler(\"cuda\")");
}

TEST(TuneAdvice, Tf32AlreadyOnAndTheNgcOverrideAreSaid) {
  auto on = *parse_tune_report(h200_document("2.11.0+cu130", R"(, "x": 1)"));
  on.settings.matmul_fp32_precision = "tf32";
  EXPECT_FALSE(find(tune_advice(on, on.gpus[0]), "tf32")->helps);
  auto ngc = *parse_tune_report(h200_document("2.10.0a0+b4e4ee81d3", "", "9.0", "\"1\""));
  const auto advice = tune_advice(ngc, ngc.gpus[0]);
  EXPECT_NE(find(advice, "tf32")->title.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1"), std::string::npos);
  ASSERT_NE(find(advice, "ngc-tf32"), nullptr);
}

TEST(TuneAdvice, SmallConvGainIsNotAdvised) {
  auto r = *parse_tune_report(h200_document());
  r.gpus[0].conv->benchmark_on_ms = 1.18;
  const auto advice = tune_advice(r, r.gpus[0]);
  const Advice* conv = find(advice, "cudnn-benchmark");
  ASSERT_NE(conv, nullptr);
  EXPECT_FALSE(conv->helps);
  EXPECT_TRUE(conv->lines.empty());
}

TEST(RuntimeEnv, AllocatorNameFollowsTorchAndLazyLoadingOnlyWhereNeeded) {
  auto v = [](const char* s) { return Version::parse(s); };
  auto e211 = runtime_env(v("2.11.0"), v("13.0"), false, std::nullopt);
  ASSERT_EQ(e211.size(), 1u);
  EXPECT_EQ(e211[0].name, "PYTORCH_ALLOC_CONF");
  EXPECT_EQ(e211[0].value, "expandable_segments:True");
  auto e28 = runtime_env(v("2.8.0"), v("12.8"), false, std::string("max_split_size_mb:128"));
  ASSERT_EQ(e28.size(), 1u);
  EXPECT_EQ(e28[0].name, "PYTORCH_CUDA_ALLOC_CONF");
  EXPECT_EQ(e28[0].value, "max_split_size_mb:128,expandable_segments:True");
  EXPECT_TRUE(runtime_env(v("2.11.0"), v("13.0"), true, std::nullopt).empty()) << "Jetson";
  EXPECT_TRUE(runtime_env(v("2.11.0"), v("13.0"), false, std::string("expandable_segments:True")).empty());
  EXPECT_TRUE(runtime_env(v("2.6.0"), std::nullopt, false, std::nullopt).empty()) << "CPU torch";
  auto old = runtime_env(v("1.12.1"), v("11.7"), false, std::nullopt);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].name, "CUDA_MODULE_LOADING");
  EXPECT_TRUE(runtime_env(v("1.13.1"), v("11.7"), false, std::nullopt).empty());
  EXPECT_TRUE(runtime_env(v("1.12.1"), v("12.2"), false, std::nullopt).size() == 0);
}

}  // namespace
}  // namespace torchfix
