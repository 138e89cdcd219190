#pragma once
// torchfix tune and doctor --run, pure part: the measurement child's JSON
// contract (templates/tune_child.py, docs/tune.md), the published peaks
// (recipes/gpu-peaks.toml), and the advice drawn from measured numbers in the
// API of the installed torch. No I/O: numbers in, advice out.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"
#include "core/tune/tune_model.hpp"

namespace torchfix {

/// Says how the child ended: measured, or why it could not.
enum class TuneStatus { ok, no_torch, import_failed, cpu_only, no_gpu, bad_gpu_index };

/// Holds one matmul measurement (n x n by n x n).
struct MatmulResult {
  std::string dtype;  // "fp32" (the current setting), "tf32", "bf16", "fp16", "fp8"
  int n = 0;          // matrix size
  int iterations = 0;
  std::optional<double> seconds;  // wall time of `iterations` calls (CUDA events)
  std::optional<double> tflops;   // 2*n^3*iterations/seconds/1e12
  std::string error;              // the exception text, when it failed
  std::string skipped;            // why it was not run ("bf16 tensor cores need 8.0")
};

/// Holds the conv2d step timed with cudnn.benchmark off and on.
struct ConvResult {
  std::string shape;
  std::optional<double> benchmark_off_ms;  // milliseconds per call
  std::optional<double> benchmark_on_ms;
  std::string error;
};

/// Holds one CUDA extension's import and launch on one GPU.
struct ExtensionRun {
  std::string distribution;  // "flash-attn"
  std::string module;        // "flash_attn"
  bool imported = false;
  std::optional<bool> launched;  // nullopt: no simple public op known and no CUDA module found (import only)
  bool loaded_only = false;      // no public op known: its CUDA modules were loaded, not a kernel launched
  std::string op;                // what was launched or loaded
  std::string error;
};

/// Holds everything measured on one GPU.
struct GpuRun {
  int index = 0;
  std::string name;  // torch.cuda.get_device_properties(i).name
  std::optional<ComputeCapability> cc;
  std::optional<int> sm_count;
  bool smoke_ok = false;  // a torch kernel ran and gave the right result
  std::string smoke_error;
  std::vector<ExtensionRun> extensions;
  std::vector<MatmulResult> matmul;
  std::optional<ConvResult> conv;
  std::optional<ModelResult> model;  // tune --model: one training step under each setting

  /// Returns the matmul row of `dtype`, nullptr when absent.
  const MatmulResult* find(std::string_view dtype) const;
};

/// Holds the fp32 settings in force when the child started.
struct TorchSettings {
  bool matmul_allow_tf32 = false;
  std::optional<std::string> matmul_fp32_precision;     // torch >= 2.9: "ieee" / "tf32"
  std::optional<std::string> float32_matmul_precision;  // "highest" / "high" / "medium"
  bool cudnn_allow_tf32 = true;
  std::optional<std::string> cudnn_conv_fp32_precision;  // torch >= 2.9: "none" (follow allow_tf32), "ieee", "tf32"
  bool cudnn_benchmark = false;
};

/// Holds the child's whole report (the JSON contract, schema 1).
struct TuneReport {
  TuneStatus status = TuneStatus::ok;
  std::string mode;     // "tune", "run" or "model"
  std::string message;  // for non-ok statuses
  std::string python;   // "3.12.3"
  std::string torch_version;
  std::optional<std::string> torch_cuda;
  std::optional<int> cudnn;
  TorchSettings settings;
  std::optional<std::string> alloc_conf;           // value in force
  std::optional<std::string> alloc_conf_variable;  // PYTORCH_ALLOC_CONF or PYTORCH_CUDA_ALLOC_CONF
  std::optional<std::string> allocator_backend;    // "native", "cudaMallocAsync"
  std::optional<std::string> tf32_override;        // TORCH_ALLOW_TF32_CUBLAS_OVERRIDE (NGC sets 1)
  std::optional<std::string> ngc_version;          // NVIDIA_PYTORCH_VERSION
  std::vector<GpuRun> gpus;
  double elapsed_seconds = 0;
};

/// Parses the child's stdout (one JSON document, schema 1). Errors say what
/// is missing or of the wrong type, and that this is a torchfix bug.
Expected<TuneReport> parse_tune_report(std::string_view text);

/// Returns whether cuDNN convolutions ran as TF32 under `settings`: the
/// fp32_precision of torch 2.9+ when it is "tf32" or "ieee", else allow_tf32.
ConvTf32 conv_tf32_default(const TorchSettings& settings);

/// Returns "ok", "no_torch", "import_failed", "cpu_only", "no_gpu", "bad_gpu_index".
std::string_view to_string(TuneStatus status);

/// Holds one GPU's published dense peaks in TFLOPS (recipes/gpu-peaks.toml).
struct GpuPeak {
  std::vector<std::string> names;
  std::optional<double> fp32, tf32, bf16, fp16, fp8;
  std::string source;

  /// Returns the peak for a matmul dtype ("fp32", "tf32", ...), if published.
  std::optional<double> for_dtype(std::string_view dtype) const;
};

/// Parses recipes/gpu-peaks.toml ([[peak]] rows). Errors name the file, the
/// line and what is wrong (a row without a source or without fp32).
Expected<std::vector<GpuPeak>> parse_gpu_peaks(std::string_view text, const std::string& file);

/// Returns the row whose name is the longest word prefix of `gpu_name`
/// (NVIDIA, GeForce and Tesla ignored, '-' and '_' as spaces), nullptr when none.
const GpuPeak* find_peak(const std::vector<GpuPeak>& peaks, std::string_view gpu_name);

/// Describes one piece of advice for one GPU.
struct Advice {
  std::string id;      // "tf32", "bf16-autocast", "fp16-autocast", "cudnn-benchmark", "allocator", "fp8", "ngc-tf32"
  bool helps = false;  // false: measured or known to give nothing here (say so, no lines)
  std::optional<double> factor;    // measured speed-up (new / old), when measured
  std::string title;               // one line with the numbers
  std::vector<std::string> lines;  // Python lines to apply, in the installed torch's API
  std::string env_name;            // environment variable to set, when the advice is one
  std::string env_value;
};

/// Returns the advice for one measured GPU: TF32 (nothing without TF32
/// tensor cores, below 8.0), bf16 autocast (8.0+) or fp16 with a GradScaler
/// (below), FP8 (8.9+, information), cudnn.benchmark, the allocator, and
/// the NGC TF32 override. `torch_version` picks the API: fp32_precision from
/// 2.9, set_float32_matmul_precision from 1.12, allow_tf32 before;
/// PYTORCH_ALLOC_CONF from 2.9, PYTORCH_CUDA_ALLOC_CONF before.
/// A factor below 1.05 counts as no gain.
std::vector<Advice> tune_advice(const TuneReport& report, const GpuRun& gpu);

/// Describes one runtime environment variable for `torchfix env --for runtime`.
struct RuntimeVar {
  std::string name;
  std::string value;
  std::string reason;
};

/// Returns the environment part of tune's advice for a torch of
/// `torch_version` (CUDA `torch_cuda`) on GPUs that are Tegra or not:
/// the allocator's expandable segments (torch >= 2.1, not on Jetson, under the
/// variable name of that torch) unless `alloc_conf` already sets them, and
/// CUDA_MODULE_LOADING=LAZY only where neither torch (>= 1.13 sets it) nor
/// the CUDA runtime (>= 12.2 defaults to it) does already.
std::vector<RuntimeVar> runtime_env(const std::optional<Version>& torch_version,
                                    const std::optional<Version>& torch_cuda, bool tegra,
                                    const std::optional<std::string>& alloc_conf);

/// Says which computations a TF32 line must reach.
enum class Tf32Scope { matmul, matmul_and_conv };

/// Returns the code lines that run fp32 matmuls (and, for matmul_and_conv,
/// cuDNN convolutions) as TF32 in the API of torch `torch`: fp32_precision
/// from 2.9, set_float32_matmul_precision("high") from 1.12 and
/// backends.cuda.matmul.allow_tf32 before, with backends.cudnn.allow_tf32
/// for convolutions before 2.9 (PyTorch's CUDA semantics notes, TF32).
std::vector<std::string> tf32_lines(const std::optional<Version>& torch, Tf32Scope scope);

/// Returns the loss-scaler line for fp16 autocast: torch.amp.GradScaler("cuda")
/// from torch 2.3, torch.cuda.amp.GradScaler() before (PyTorch AMP docs).
std::string grad_scaler_line(const std::optional<Version>& torch);

/// Returns the allocator variable torch `version` reads first:
/// PYTORCH_ALLOC_CONF from 2.9, else PYTORCH_CUDA_ALLOC_CONF.
std::string_view alloc_conf_variable(const Version& torch_version);

}  // namespace torchfix
