#include "report/tune_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "report/tune_model_report.hpp"

namespace torchfix {
namespace {

using nlohmann::json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string dtype_label(const std::string& dtype, const TuneReport& r) {
  if (dtype != "fp32") return dtype;
  const TorchSettings& s = r.settings;
  // torch >= 2.9 reports fp32_precision "none" when the older global
  // setting (set_float32_matmul_precision) decides.
  const bool own = s.matmul_fp32_precision && *s.matmul_fp32_precision != "none";
  std::string setting = own                          ? "fp32_precision=" + *s.matmul_fp32_precision
                        : s.float32_matmul_precision ? "precision " + *s.float32_matmul_precision
                                                     : std::string(s.matmul_allow_tf32 ? "allow_tf32" : "strict");
  if (r.tf32_override == "1") setting += ", NGC TF32 override";
  return "fp32 (" + setting + ")";
}

// The peak an fp32 row is measured against: TF32's when fp32 matmuls already
// run as TF32 (torch setting or the NGC override).
std::optional<double> peak_for(const GpuPeak* peak, const MatmulResult& m, const TuneReport& r) {
  if (!peak) return std::nullopt;
  const TorchSettings& s = r.settings;
  const bool tf32 = s.matmul_allow_tf32 || s.matmul_fp32_precision == "tf32" || s.float32_matmul_precision == "high" ||
                    s.float32_matmul_precision == "medium" || r.tf32_override == "1";
  return peak->for_dtype(m.dtype == "fp32" && tf32 ? "tf32" : m.dtype);
}

}  // namespace

void print_tune(const TuneReport& r, const std::vector<GpuPeak>& peaks, Printer& out) {
  out.line(fmt::format("torch {} (CUDA {}, cuDNN {}), Python {}{}", r.torch_version, r.torch_cuda.value_or("?"),
                       r.cudnn ? std::to_string(*r.cudnn) : "?", r.python,
                       r.ngc_version ? ", inside NGC container " + *r.ngc_version : ""));
  out.line(fmt::format(
      "allocator: {}{}", r.allocator_backend.value_or("native"),
      r.alloc_conf ? " (" + r.alloc_conf_variable.value_or("") + "=" + *r.alloc_conf + ")" : " (default settings)"));
  for (const GpuRun& gpu : r.gpus) {
    out.line("");
    out.line(
        out.paint(fmt::format("GPU {}: {} (compute capability {}{})", gpu.index, gpu.name, gpu.cc ? gpu.cc->str() : "?",
                              gpu.sm_count ? ", " + std::to_string(*gpu.sm_count) + " SMs" : ""),
                  Colour::bold));
    out.line(gpu.smoke_ok ? "  " + out.paint("ok", Colour::green) + "  torch launched a kernel"
                          : "  " + out.paint("FAIL", Colour::red) + " torch kernel: " + gpu.smoke_error);
    for (const ExtensionRun& e : gpu.extensions) {
      std::string state = !e.imported   ? out.paint("FAIL", Colour::red) + " import: " + e.error
                          : !e.launched ? out.paint("ok", Colour::green) + "  imported (" + e.op + ")"
                          : *e.launched ? out.paint("ok", Colour::green) + "  " + e.op
                                        : out.paint("FAIL", Colour::red) + " " + e.op + ": " + e.error;
      out.line("  " + e.distribution + ": " + state);
    }
    const GpuPeak* peak = find_peak(peaks, gpu.name);
    if (!gpu.matmul.empty()) {
      out.line(fmt::format("  matmul {}x{}{}", gpu.matmul.front().n, gpu.matmul.front().n,
                           peak ? "  (published dense peak: recipes/gpu-peaks.toml)"
                                : "  (no published peak in recipes/gpu-peaks.toml)"));
      for (const MatmulResult& m : gpu.matmul) {
        std::string row = fmt::format("    {:<34}", dtype_label(m.dtype, r));
        if (m.tflops) {
          row += fmt::format("{:8.1f} TFLOPS", *m.tflops);
          const auto p = peak_for(peak, m, r);
          if (p) row += fmt::format("   {:3.0f}% of {:.1f}", 100.0 * *m.tflops / *p, *p);
        } else if (!m.skipped.empty()) {
          row += "skipped: " + m.skipped;
        } else {
          row += "failed: " + m.error;
        }
        out.line(row);
      }
    }
    if (gpu.conv) {
      if (gpu.conv->benchmark_off_ms && gpu.conv->benchmark_on_ms)
        out.line(fmt::format("  {}: {:.3f} ms, with cudnn.benchmark {:.3f} ms", gpu.conv->shape,
                             *gpu.conv->benchmark_off_ms, *gpu.conv->benchmark_on_ms));
      else
        out.line("  conv2d failed: " + gpu.conv->error);
    }
    if (gpu.model) print_tune_model(r, gpu, out);
    auto advice = tune_advice(r, gpu);
    // With --model nothing but the allocator is measured or known outside the model's own advice.
    if (gpu.model) std::erase_if(advice, [](const Advice& a) { return a.id != "allocator"; });
    if (advice.empty()) continue;
    out.line("  advice:");
    for (const Advice& a : advice) {
      out.line("    " + (a.helps ? out.paint("+", Colour::green) : out.paint("-", Colour::dim)) + " " + a.title);
      for (const std::string& l : a.lines) out.line("        " + l);
    }
  }
  out.line("");
  out.line(fmt::format("measured in {:.1f} s", r.elapsed_seconds));
}

json tune_json(const TuneReport& r, const std::vector<GpuPeak>& peaks) {
  json gpus = json::array();
  for (const GpuRun& gpu : r.gpus) {
    const GpuPeak* peak = find_peak(peaks, gpu.name);
    json matmul = json::array();
    for (const MatmulResult& m : gpu.matmul) {
      const auto p = peak_for(peak, m, r);
      matmul.push_back({{"dtype", m.dtype},
                        {"n", m.n},
                        {"iterations", m.iterations},
                        {"seconds", opt(m.seconds)},
                        {"tflops", opt(m.tflops)},
                        {"peak_tflops", opt(p)},
                        {"share_of_peak", m.tflops && p ? json(*m.tflops / *p) : json(nullptr)},
                        {"error", m.error.empty() ? json(nullptr) : json(m.error)},
                        {"skipped", m.skipped.empty() ? json(nullptr) : json(m.skipped)}});
    }
    json extensions = json::array();
    for (const ExtensionRun& e : gpu.extensions) {
      extensions.push_back({{"distribution", e.distribution},
                            {"module", e.module},
                            {"imported", e.imported},
                            {"launched", opt(e.launched)},
                            {"check", e.loaded_only ? "load" : "launch"},
                            {"op", e.op},
                            {"error", e.error.empty() ? json(nullptr) : json(e.error)}});
    }
    json advice = json::array();
    for (const Advice& a : tune_advice(r, gpu)) {
      if (gpu.model && a.id != "allocator") continue;
      advice.push_back(
          {{"id", a.id},
           {"helps", a.helps},
           {"factor", opt(a.factor)},
           {"title", a.title},
           {"lines", a.lines},
           {"env", a.env_name.empty() ? json(nullptr) : json({{"name", a.env_name}, {"value", a.env_value}})}});
    }
    json conv = nullptr;
    if (gpu.conv) {
      conv = {{"shape", gpu.conv->shape},
              {"benchmark_off_ms", opt(gpu.conv->benchmark_off_ms)},
              {"benchmark_on_ms", opt(gpu.conv->benchmark_on_ms)},
              {"error", gpu.conv->error.empty() ? json(nullptr) : json(gpu.conv->error)}};
    }
    gpus.push_back(
        {{"index", gpu.index},
         {"name", gpu.name},
         {"cc", gpu.cc ? json(gpu.cc->str()) : json(nullptr)},
         {"sm_count", opt(gpu.sm_count)},
         {"smoke", {{"ok", gpu.smoke_ok}, {"error", gpu.smoke_error.empty() ? json(nullptr) : json(gpu.smoke_error)}}},
         {"extensions", extensions},
         {"matmul", matmul},
         {"peak_source", peak ? json(peak->source) : json(nullptr)},
         {"conv", conv},
         {"model", gpu.model ? tune_model_json(r, gpu) : json(nullptr)},
         {"advice", advice}});
  }
  return {{"schema_version", 1},
          {"mode", r.mode},
          {"status", to_string(r.status)},
          {"message", r.message.empty() ? json(nullptr) : json(r.message)},
          {"python", r.python},
          {"torch", {{"version", r.torch_version}, {"cuda", opt(r.torch_cuda)}, {"cudnn", opt(r.cudnn)}}},
          {"settings",
           {{"matmul_allow_tf32", r.settings.matmul_allow_tf32},
            {"matmul_fp32_precision", opt(r.settings.matmul_fp32_precision)},
            {"float32_matmul_precision", opt(r.settings.float32_matmul_precision)},
            {"cudnn_allow_tf32", r.settings.cudnn_allow_tf32},
            {"cudnn_benchmark", r.settings.cudnn_benchmark},
            {"tf32_override", opt(r.tf32_override)}}},
          {"allocator",
           {{"backend", opt(r.allocator_backend)},
            {"conf", opt(r.alloc_conf)},
            {"conf_variable", opt(r.alloc_conf_variable)}}},
          {"ngc_version", opt(r.ngc_version)},
          {"gpus", gpus},
          {"elapsed_seconds", r.elapsed_seconds}};
}

}  // namespace torchfix
