#pragma once
// torchfix tune --model, pure part: which runtime settings a GPU supports for
// a model's training step, the child's "model" JSON object
// (templates/tune_model.py, docs/tune.md), the table of gains drawn from it,
// and the advice in the installed torch's API. No I/O.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Names a model the child can train: torchvision's ResNet-50 and ViT-B/16
/// (random weights, nothing downloaded) and a transformer encoder built from
/// torch.nn layers.
enum class TuneModel { resnet50, vit_b_16, transformer };

/// Parses "resnet50", "vit_b_16" (also "vit"), "transformer"; nullopt otherwise.
std::optional<TuneModel> parse_tune_model(std::string_view text);

/// Returns the child's name of `model` ("resnet50", "vit_b_16", "transformer").
std::string_view to_string(TuneModel model);

/// Names one runtime setting measured on a training step.
enum class ModelSetting { cudnn_benchmark, tf32, channels_last, bf16, fp16 };

/// Returns the child's id of `setting` ("cudnn_benchmark", "tf32", ...).
std::string_view to_string(ModelSetting setting);

/// Holds one setting considered for a GPU: measured, or skipped with why.
struct SettingChoice {
  ModelSetting setting = ModelSetting::tf32;
  std::string skipped;  // empty: measured
};

/// Returns, in the order they are added, the settings worth measuring for
/// `model` on compute capability `cc`: cudnn.benchmark (models with
/// convolutions), TF32 (8.0+: TF32 tensor cores arrived with Ampere),
/// channels_last (convolutional models), bf16 autocast (8.0+) or fp16
/// autocast with loss scaling (6.0 to 7.5: Pascal's fp16 rate, Volta's and
/// Turing's fp16 tensor cores; NVIDIA's architecture whitepapers). Skipped
/// ones say why.
std::vector<SettingChoice> model_settings(TuneModel model, ComputeCapability cc);

/// Holds one timed run of the training step.
struct ModelRunEntry {
  std::string kind;                   // "baseline", "cumulative" or "alone"
  std::vector<std::string> settings;  // ids in force
  int batch = 0;
  std::optional<double> step_ms;           // milliseconds per step (CUDA events)
  std::optional<double> per_s;             // images or tokens per second
  std::optional<double> max_memory_bytes;  // torch.cuda.max_memory_allocated
  std::string error;
};

/// Holds the largest batch search (doubling, then bisection to within 1/16).
struct MaxBatch {
  int batch = 0;  // 0: not even the first try fitted
  int tries = 0;
  bool capped = false;  // the search stopped at `limit`, not at memory
  int limit = 0;
  double seconds = 0;
  std::optional<ModelRunEntry> run;  // every setting, at `batch`
};

/// Holds one GPU's model measurement (the child's "model" object).
struct ModelResult {
  std::string name;  // "resnet50"
  std::string unit;  // "images" or "tokens"
  int batch = 0;
  int steps = 0;
  int warmup = 0;
  std::vector<ModelRunEntry> runs;
  std::optional<MaxBatch> max_batch;
  std::string error;  // the model could not be built
};

/// Parses the child's "model" object. Errors name the field that is missing
/// or of the wrong type.
Expected<ModelResult> parse_model_result(const nlohmann::json& model);

/// Holds one row of the table: a run with its speed-up over the defaults.
struct ModelGain {
  const ModelRunEntry* run = nullptr;
  std::optional<double> factor;  // per_s / baseline per_s
};

/// Returns the runs with their factors over the baseline run, in the
/// child's order (baseline, then each setting added, then each alone).
std::vector<ModelGain> model_gains(const ModelResult& result);

/// Says whether cuDNN convolutions already ran as TF32 under torch's defaults
/// (torch.backends.cudnn.allow_tf32 is True by default in every release
/// since 1.7; measured on the H200 with 2.11: ResNet-50 gains nothing from TF32).
enum class ConvTf32 { off, on };

/// Holds what one setting is worth and how to turn it on.
struct ModelAdvice {
  ModelSetting setting = ModelSetting::tf32;
  std::optional<double> alone;       // factor of the setting alone over the defaults
  std::optional<double> cumulative;  // factor of this step over the one before
  bool helps = false;                // a factor of 1.05 or more
  std::vector<std::string> lines;    // Python to paste, in the installed torch's API
  std::string env;                   // an environment line that does it too, if any
  std::string only_code;             // why only the user's code can do it (empty: env can)
  std::string numerics;              // what it changes in the numbers (empty: nothing)
  std::string already;               // what the defaults already did of it (empty: nothing)
};

/// Returns one advice per measured setting of `result`, for torch release
/// `torch`: the code (fp32_precision from 2.9, allow_tf32 before;
/// torch.amp.GradScaler("cuda") from 2.3), an environment line where one
/// exists (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 forces TF32 for cuBLAS
/// matmuls only, PyTorch's CUDA semantics notes), the numerics warning, and
/// for TF32 whether `conv_default` already had convolutions on TF32.
std::vector<ModelAdvice> model_advice(const ModelResult& result, const std::optional<Version>& torch,
                                      ConvTf32 conv_default);

/// Returns a label for a setting id as the table prints it ("TF32 (matmul and cuDNN)").
std::string setting_label(std::string_view id);

}  // namespace torchfix
