// torchfix tune --model, pure part and child: which settings each GPU gets,
// the real child script (templates/tune_child.py + tune_model.py) run on a
// stand-in torch that records every step (tests/fixtures/faketorch), the
// table and the advice drawn from what it measured, and the rendering.

#include "core/tune/tune_model.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/linux_only.hpp"
#include "core/tune/tune.hpp"
#include "probe/process.hpp"
#include "report/tune_report.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string k_source = TORCHFIX_SOURCE_DIR;
const std::string k_resnet_h200 = "9.0=cudnn_benchmark,tf32,channels_last,bf16";

struct ChildRun {
  ProcessResult process;
  std::vector<json> log;  // what the stand-in torch was asked to do, in order
};

ChildRun run_model_child(std::vector<std::string> args, Environment extra = {}) {
  const fs::path log = fs::temp_directory_path() / ("tune-model-log-" + std::to_string(::getpid()) + ".jsonl");
  fs::remove(log);
  Command c;
  c.program = "/usr/bin/python3";
  c.args = {k_source + "/templates/tune_child.py", "--mode", "model"};
  c.args.insert(c.args.end(), args.begin(), args.end());
  c.env = Environment{{"PATH", "/usr/bin:/bin"},
                      {"HOME", "/tmp"},
                      {"PYTHONPATH", k_source + "/tests/fixtures/faketorch"},
                      {"FAKETORCH_LOG", log.string()}};
  for (const auto& [k, v] : extra) (*c.env)[k] = v;
  c.timeout = std::chrono::seconds(120);
  SystemProcessRunner runner;
  auto r = runner.run(c);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  ChildRun out;
  if (r) out.process = *r;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) out.log.push_back(json::parse(line));
  fs::remove(log);
  return out;
}

TuneReport parsed(const ChildRun& run) {
  EXPECT_EQ(run.process.exit_code, 0) << run.process.err;
  auto report = parse_tune_report(run.process.out);
  EXPECT_TRUE(report) << (report ? "" : report.error().message);
  return report ? *report : TuneReport{};
}

std::vector<std::string> ids(const std::vector<SettingChoice>& choices, bool measured) {
  std::vector<std::string> out;
  for (const SettingChoice& c : choices) {
    if (c.skipped.empty() == measured) out.emplace_back(to_string(c.setting));
  }
  return out;
}

std::string printed(const TuneReport& report) {
  std::FILE* f = std::tmpfile();
  {
    Printer printer(f, {});
    print_tune(report, {}, printer);
  }
  std::fflush(f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  return text;
}

TEST(ModelSettings, FollowTheTensorCoresOfEachGeneration) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ids(model_settings(TuneModel::resnet50, {9, 0}), true),
            (V{"cudnn_benchmark", "tf32", "channels_last", "bf16"}));
  EXPECT_EQ(ids(model_settings(TuneModel::resnet50, {7, 5}), true), (V{"cudnn_benchmark", "channels_last", "fp16"}));
  EXPECT_EQ(ids(model_settings(TuneModel::resnet50, {7, 5}), false), (V{"tf32"}));
  EXPECT_EQ(ids(model_settings(TuneModel::resnet50, {6, 1}), true), (V{"cudnn_benchmark", "channels_last", "fp16"}));
  EXPECT_EQ(ids(model_settings(TuneModel::resnet50, {5, 2}), false), (V{"tf32", "fp16"}));
  EXPECT_EQ(ids(model_settings(TuneModel::transformer, {12, 0}), true), (V{"tf32", "bf16"}));
  EXPECT_EQ(ids(model_settings(TuneModel::vit_b_16, {8, 0}), false), (V{"channels_last"}));
  EXPECT_EQ(parse_tune_model("vit"), TuneModel::vit_b_16);
  EXPECT_FALSE(parse_tune_model("resnet"));
}

TEST(TuneModelChild, TimesEachSettingCumulativelyAndAloneWithWhatWasInForce) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  const ChildRun run = run_model_child({"--model", "resnet50", "--settings", k_resnet_h200, "--steps", "4"});
  const TuneReport report = parsed(run);
  ASSERT_EQ(report.gpus.size(), 1u);
  ASSERT_TRUE(report.gpus[0].model);
  const ModelResult& m = *report.gpus[0].model;
  EXPECT_EQ(m.name, "resnet50");
  EXPECT_EQ(m.batch, 128);
  // The stand-in costs 1 ms per sample in fp32: TF32 / 2.5, channels_last / 1.4, bf16 / 1.5.
  std::vector<std::pair<std::string, double>> got;
  for (const ModelGain& g : model_gains(m)) got.emplace_back(g.run->kind, g.factor.value_or(0));
  const std::vector<std::pair<std::string, double>> want = {
      {"baseline", 1.0},   {"cumulative", 1.0}, {"cumulative", 2.5},  {"alone", 2.5},
      {"cumulative", 3.5}, {"alone", 1.4},      {"cumulative", 5.25}, {"alone", 1.5}};
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].first, want[i].first) << i;
    EXPECT_NEAR(got[i].second, want[i].second, 1e-6) << i;
  }
  EXPECT_NEAR(m.runs[0].per_s.value_or(0), 1000.0, 1e-6);
  EXPECT_NEAR(m.runs[6].max_memory_bytes.value_or(0), 64.0 * (1 << 20), 1);  // bf16 halves activations

  // 5 warm-up + 4 timed steps per run; each run sees only its own settings:
  // the defaults come back between runs (benchmark off, TF32 off, contiguous).
  std::vector<json> steps;
  for (const json& e : run.log) {
    if (e["event"] == "step") steps.push_back(e);
  }
  ASSERT_EQ(steps.size(), 8u * 9u);
  const auto step = [&](int run_index) { return steps[static_cast<std::size_t>(run_index) * 9 + 8]; };
  EXPECT_FALSE(step(0)["benchmark"]);
  EXPECT_FALSE(step(0)["matmul_tf32"]);
  EXPECT_TRUE(step(2)["matmul_tf32"]);
  EXPECT_TRUE(step(2)["cudnn_tf32"]);
  EXPECT_TRUE(step(2)["benchmark"]);
  EXPECT_EQ(step(5)["memory_format"], "channels_last");  // channels_last alone
  EXPECT_EQ(step(5)["input_format"], "channels_last");
  EXPECT_FALSE(step(5)["matmul_tf32"]);
  EXPECT_FALSE(step(5)["benchmark"]);
  EXPECT_EQ(step(7)["autocast"], "bfloat16");
  EXPECT_EQ(step(7)["memory_format"], "contiguous_format");
}

TEST(TuneModelChild, LargestBatchDoublesThenBisectsAndFreesMemoryBetweenTries) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  // 700 MiB; bf16 steps need 0.5 MiB a sample: 1400 fits, 1401 does not.
  const ChildRun run =
      run_model_child({"--model", "resnet50", "--settings", k_resnet_h200, "--steps", "2", "--find-batch"},
                      {{"FAKETORCH_MEMORY", std::to_string(700 << 20)}});
  const TuneReport report = parsed(run);
  ASSERT_TRUE(report.gpus.at(0).model && report.gpus[0].model->max_batch);
  const MaxBatch& b = *report.gpus[0].model->max_batch;
  EXPECT_FALSE(b.capped);
  EXPECT_LE(b.batch, 1400);
  EXPECT_GT(b.batch, 1400 - 1400 / 16);
  ASSERT_TRUE(b.run && b.run->per_s);
  EXPECT_EQ(b.run->batch, b.batch);
  // Tried: 128, 256, 512, 1024 fit, 2048 does not, then bisection between 1024 and 2048.
  std::vector<int> tried;
  for (const json& e : run.log) {
    if (e["event"] != "empty_cache" && e["autocast"] == "bfloat16" && (tried.empty() || tried.back() != e["batch"]))
      tried.push_back(e["batch"].get<int>());
  }
  ASSERT_GE(tried.size(), 7u);
  EXPECT_EQ(std::vector<int>(tried.begin(), tried.begin() + 6), (std::vector<int>{128, 256, 512, 1024, 2048, 1536}));
  int frees_after_a_try = 0;
  for (std::size_t i = 1; i < run.log.size(); ++i)
    frees_after_a_try += run.log[i]["event"] == "empty_cache" && run.log[i - 1]["event"] == "step";
  EXPECT_GE(frees_after_a_try, static_cast<int>(tried.size()));
}

TEST(TuneModelChild, BatchSearchStopsAtItsLimit) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  const ChildRun run = run_model_child(
      {"--model", "transformer", "--settings", "9.0=tf32,bf16", "--steps", "1", "--find-batch", "--batch-limit", "64"});
  const TuneReport report = parsed(run);
  ASSERT_TRUE(report.gpus.at(0).model && report.gpus[0].model->max_batch);
  EXPECT_TRUE(report.gpus[0].model->max_batch->capped);
  EXPECT_EQ(report.gpus[0].model->max_batch->batch, 64);
  EXPECT_EQ(report.gpus[0].model->unit, "tokens");
}

TEST(TuneModelChild, AGpuTorchfixGaveNoSettingsForIsReportedNotGuessed) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  const TuneReport report = parsed(run_model_child({"--model", "resnet50", "--settings", "8.6=tf32"}));
  ASSERT_TRUE(report.gpus.at(0).model);
  EXPECT_NE(report.gpus[0].model->error.find("no settings for compute capability 9.0"), std::string::npos);
}

TEST(ModelAdvice, CodeForTheInstalledTorchAndWhatEachChangesInTheNumbers) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  const TuneReport report =
      parsed(run_model_child({"--model", "resnet50", "--settings", k_resnet_h200, "--steps", "2"}));
  const auto advice = model_advice(*report.gpus.at(0).model, Version::parse("2.11.0+cu130"), ConvTf32::off);
  ASSERT_EQ(advice.size(), 4u);
  EXPECT_FALSE(advice[0].helps);  // cudnn.benchmark: the stand-in gains nothing from it
  const ModelAdvice& tf32 = advice[1];
  EXPECT_TRUE(tf32.helps);
  EXPECT_NEAR(tf32.alone.value_or(0), 2.5, 1e-6);
  EXPECT_EQ(tf32.lines.front(), "torch.backends.cuda.matmul.fp32_precision = \"tf32\"");
  EXPECT_NE(tf32.env.find("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1"), std::string::npos);
  EXPECT_NE(tf32.numerics.find("10 mantissa bits"), std::string::npos);
  EXPECT_TRUE(advice[2].env.empty());
  EXPECT_FALSE(advice[2].only_code.empty());  // channels_last
  EXPECT_TRUE(advice[2].numerics.empty());
  EXPECT_NEAR(advice[3].cumulative.value_or(0), 1.5, 1e-6);  // bf16 on top of the others
  EXPECT_FALSE(advice[3].numerics.empty());

  const auto old = model_advice(*report.gpus[0].model, Version::parse("2.5.1"), ConvTf32::on);
  // Before 2.9: the matmul precision API (from 1.12) and cuDNN's own flag, as tune's matmul advice says.
  EXPECT_EQ(old[1].lines, (std::vector<std::string>{"torch.set_float32_matmul_precision(\"high\")",
                                                    "torch.backends.cudnn.allow_tf32 = True"}));
  EXPECT_NE(old[1].already.find("already ran as TF32"), std::string::npos);
  EXPECT_TRUE(tf32.already.empty());
}

TEST(ModelAdvice, TuringGetsFp16WithLossScalingAndSaysWhyNoTf32) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  const TuneReport report =
      parsed(run_model_child({"--model", "resnet50", "--settings", "7.5=cudnn_benchmark,channels_last,fp16"},
                             {{"FAKETORCH_CC", "7.5"}, {"FAKETORCH_VERSION", "2.4.1+cu121"}}));
  const auto advice =
      model_advice(*report.gpus.at(0).model, Version::parse(report.torch_version), conv_tf32_default(report.settings));
  ASSERT_EQ(advice.size(), 3u);
  EXPECT_EQ(advice[2].setting, ModelSetting::fp16);
  EXPECT_NEAR(advice[2].alone.value_or(0), 1.25, 1e-6);
  EXPECT_EQ(advice[2].lines.at(1), "scaler = torch.amp.GradScaler(\"cuda\")");
  const std::string text = printed(report);
  EXPECT_NE(text.find("TF32 (matmul and cuDNN)           skipped: no TF32 tensor cores on compute capability 7.5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fp16 autocast + GradScaler"), std::string::npos);
}

TEST(TuneModelReport, TableAndJsonCarryEveryRunAndTheLargestBatch) {
  TORCHFIX_LINUX_ONLY("runs templates/tune_child.py with the Linux python3");
  const TuneReport report =
      parsed(run_model_child({"--model", "resnet50", "--settings", k_resnet_h200, "--steps", "2", "--find-batch"},
                             {{"FAKETORCH_MEMORY", std::to_string(700 << 20)}}));
  const std::string text = printed(report);
  EXPECT_NE(text.find("resnet50 training step, batch 128"), std::string::npos) << text;
  if (getenv("SHOW")) std::fputs(text.c_str(), stdout);
  EXPECT_NE(text.find("+ TF32 (matmul and cuDNN)"), std::string::npos);
  EXPECT_NE(text.find("5.25x"), std::string::npos);
  EXPECT_NE(text.find("largest batch with every setting: "), std::string::npos);
  EXPECT_NE(text.find("numerics:"), std::string::npos);
  const json doc = tune_json(report, {});
  EXPECT_EQ(doc["mode"], "model");
  const json& model = doc["gpus"][0]["model"];
  EXPECT_EQ(model["runs"].size(), 8u);
  EXPECT_NEAR(model["runs"][6]["factor"].get<double>(), 5.25, 1e-6);
  EXPECT_GT(model["max_batch"]["batch"].get<int>(), 1300);
  EXPECT_EQ(model["advice"][1]["setting"], "tf32");
}

}  // namespace
}  // namespace torchfix
