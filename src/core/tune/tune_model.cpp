#include "core/tune/tune_model.hpp"

#include "core/base/enum_names.hpp"
#include "core/base/quote.hpp"
#include "core/tune/tune.hpp"

#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

using nlohmann::json;

constexpr double k_gain = 1.05;  // below this a factor counts as no gain (as tune's matmul advice)

bool has_convolutions(TuneModel model) {
  return model == TuneModel::resnet50;
}

std::optional<double> number(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

std::string text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Expected<ModelRunEntry> parse_run(const json& r) {
  if (!r.is_object()) return fail("a model run is not an object");
  ModelRunEntry e;
  e.kind = text(r, "kind");
  if (auto it = r.find("settings"); it != r.end() && it->is_array()) {
    for (const json& s : *it) {
      if (!s.is_string()) return fail("a model run's 'settings' holds a non-string");
      e.settings.push_back(s.get<std::string>());
    }
  }
  const auto batch = number(r, "batch");
  if (!batch || *batch < 0 || *batch > 1e9) return fail("a model run lacks its 'batch'");
  e.batch = static_cast<int>(*batch);
  e.step_ms = number(r, "step_ms");
  e.per_s = number(r, "per_s");
  e.max_memory_bytes = number(r, "max_memory_bytes");
  e.error = text(r, "error");
  return e;
}

std::optional<double> ratio(std::optional<double> a, std::optional<double> b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

const ModelRunEntry* find_run(const ModelResult& r, std::string_view kind, std::string_view last_setting) {
  for (const ModelRunEntry& e : r.runs) {
    if (e.kind == kind && !e.settings.empty() && e.settings.back() == last_setting) return &e;
  }
  return nullptr;
}

// The run before `run` in the cumulative chain: the baseline for the first setting.
const ModelRunEntry* previous_step(const ModelResult& r, const ModelRunEntry& run) {
  const ModelRunEntry* before = nullptr;
  for (const ModelRunEntry& e : r.runs) {
    if (&e == &run) return before;
    if (e.kind == "baseline" || e.kind == "cumulative") before = &e;
  }
  return nullptr;
}

void describe(ModelAdvice& a, const std::optional<Version>& torch) {
  switch (a.setting) {
    case ModelSetting::cudnn_benchmark:
      a.lines = {"torch.backends.cudnn.benchmark = True"};
      a.only_code = "no environment variable sets it";
      a.numerics =
          "cuDNN may pick a different, non-deterministic algorithm per run (results can differ in the "
          "last bits; torch.backends.cudnn.deterministic = True rules those out)";
      break;
    case ModelSetting::tf32:
      a.lines = tf32_lines(torch, Tf32Scope::matmul_and_conv);
      a.env = set_env_command(CommandShell::posix, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1") +
              "  # matmuls only; convolutions need the code line";
      a.numerics = "fp32 matmuls and convolutions round their inputs to 10 mantissa bits (TF32) instead of 23";
      break;
    case ModelSetting::channels_last:
      a.lines = {"model = model.to(memory_format=torch.channels_last)",
                 "x = x.to(memory_format=torch.channels_last)  # each input batch"};
      a.only_code = "a memory layout of the model and its inputs: only your code can choose it";
      break;
    case ModelSetting::bf16:
      a.lines = {"with torch.autocast(\"cuda\", dtype=torch.bfloat16):  # around the forward pass and the loss"};
      a.only_code = "autocast wraps your forward pass: only your code can turn it on";
      a.numerics =
          "activations and matmuls in bfloat16 (8 mantissa bits, fp32's range); weights and the "
          "optimizer stay fp32";
      break;
    case ModelSetting::fp16:
      a.lines = {"with torch.autocast(\"cuda\", dtype=torch.float16):  # around the forward pass and the loss",
                 grad_scaler_line(torch), "scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()"};
      a.only_code = "autocast and loss scaling wrap your training step: only your code can turn them on";
      a.numerics =
          "activations in float16 (10 mantissa bits, range up to 65504): gradients need loss scaling "
          "(GradScaler) so they do not underflow";
      break;
  }
}

}  // namespace

namespace {

constexpr EnumName<TuneModel> k_models[] = {
    {TuneModel::resnet50, "resnet50"}, {TuneModel::vit_b_16, "vit_b_16"}, {TuneModel::transformer, "transformer"}};
static_assert(in_order(k_models));
constexpr EnumName<ModelSetting> k_settings[] = {{ModelSetting::cudnn_benchmark, "cudnn_benchmark"},
                                                 {ModelSetting::tf32, "tf32"},
                                                 {ModelSetting::channels_last, "channels_last"},
                                                 {ModelSetting::bf16, "bf16"},
                                                 {ModelSetting::fp16, "fp16"}};
static_assert(in_order(k_settings));

}  // namespace

std::optional<TuneModel> parse_tune_model(std::string_view t) {
  if (t == "vit") return TuneModel::vit_b_16;  // the short name the option also takes
  return value_in(k_models, t);
}

std::string_view to_string(TuneModel model) {
  return name_in(k_models, model);
}

std::string_view to_string(ModelSetting setting) {
  return name_in(k_settings, setting);
}

std::vector<SettingChoice> model_settings(TuneModel model, ComputeCapability cc) {
  std::vector<SettingChoice> out;
  const bool convs = has_convolutions(model);
  const std::string at = " on compute capability " + cc.str();
  out.push_back({ModelSetting::cudnn_benchmark,
                 model == TuneModel::transformer ? "the transformer has no convolutions to autotune" : ""});
  out.push_back({ModelSetting::tf32, cc.major >= 8 ? "" : "no TF32 tensor cores" + at + " (they arrived with 8.0)"});
  out.push_back({ModelSetting::channels_last, convs ? "" : "channels_last only changes the layout of convolutions"});
  if (cc.major >= 8) {
    out.push_back({ModelSetting::bf16, ""});
  } else {
    out.push_back({ModelSetting::fp16, cc.major >= 6 ? "" : "no fast fp16" + at + " (Pascal's 6.0 brought it)"});
  }
  return out;
}

Expected<ModelResult> parse_model_result(const json& m) {
  if (!m.is_object()) return fail("the GPU's 'model' is not an object");
  ModelResult r;
  r.name = text(m, "name");
  if (r.name.empty()) return fail("the GPU's 'model' lacks its 'name'");
  r.unit = text(m, "unit");
  r.batch = static_cast<int>(number(m, "batch").value_or(0));
  r.steps = static_cast<int>(number(m, "steps").value_or(0));
  r.warmup = static_cast<int>(number(m, "warmup").value_or(0));
  r.error = text(m, "error");
  for (const json& run : m.value("runs", json::array())) {
    auto e = parse_run(run);
    if (!e) return std::unexpected(e.error());
    r.runs.push_back(std::move(*e));
  }
  if (auto it = m.find("max_batch"); it != m.end() && it->is_object()) {
    MaxBatch b;
    b.batch = static_cast<int>(number(*it, "batch").value_or(0));
    b.tries = static_cast<int>(number(*it, "tries").value_or(0));
    b.capped = it->value("capped", false);
    b.limit = static_cast<int>(number(*it, "limit").value_or(0));
    b.seconds = number(*it, "seconds").value_or(0);
    if (auto run = it->find("run"); run != it->end() && run->is_object()) {
      auto e = parse_run(*run);
      if (!e) return std::unexpected(e.error());
      b.run = std::move(*e);
    }
    r.max_batch = std::move(b);
  }
  return r;
}

std::vector<ModelGain> model_gains(const ModelResult& r) {
  const ModelRunEntry* baseline = nullptr;
  for (const ModelRunEntry& e : r.runs) {
    if (e.kind == "baseline") baseline = &e;
  }
  std::vector<ModelGain> out;
  for (const ModelRunEntry& e : r.runs) {
    out.push_back({&e, baseline ? ratio(e.per_s, baseline->per_s) : std::nullopt});
  }
  return out;
}

std::vector<ModelAdvice> model_advice(const ModelResult& r, const std::optional<Version>& torch,
                                      ConvTf32 conv_default) {
  const ModelRunEntry* baseline = nullptr;
  for (const ModelRunEntry& e : r.runs) {
    if (e.kind == "baseline") baseline = &e;
  }
  std::vector<ModelAdvice> out;
  for (ModelSetting s : {ModelSetting::cudnn_benchmark, ModelSetting::tf32, ModelSetting::channels_last,
                         ModelSetting::bf16, ModelSetting::fp16}) {
    const std::string id{to_string(s)};
    const ModelRunEntry* step = find_run(r, "cumulative", id);
    if (!step) continue;
    const ModelRunEntry* alone = find_run(r, "alone", id);
    if (!alone && step->settings.size() == 1) alone = step;  // the first setting's step is its alone run
    ModelAdvice a;
    a.setting = s;
    if (baseline && alone) a.alone = ratio(alone->per_s, baseline->per_s);
    if (const ModelRunEntry* before = previous_step(r, *step)) a.cumulative = ratio(step->per_s, before->per_s);
    a.helps = (a.alone && *a.alone >= k_gain) || (a.cumulative && *a.cumulative >= k_gain);
    describe(a, torch);
    if (s == ModelSetting::tf32 && conv_default == ConvTf32::on)
      a.already =
          "cuDNN convolutions already ran as TF32 under torch's defaults (torch.backends.cudnn.allow_tf32 "
          "is True): this setting adds TF32 for matmuls";
    out.push_back(std::move(a));
  }
  return out;
}

std::string setting_label(std::string_view id) {
  if (id == "cudnn_benchmark") return "cudnn.benchmark";
  if (id == "tf32") return "TF32 (matmul and cuDNN)";
  if (id == "channels_last") return "channels_last";
  if (id == "bf16") return "bf16 autocast";
  if (id == "fp16") return "fp16 autocast + GradScaler";
  return std::string(id);
}

}  // namespace torchfix
