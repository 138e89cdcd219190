#include "report/tune_model_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

using nlohmann::json;

template <typename T>
json opt(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

std::string gib(std::optional<double> bytes) {
  return bytes ? fmt::format("{:.1f} GiB", *bytes / (1024.0 * 1024 * 1024)) : std::string("-");
}

std::string row_label(const ModelRunEntry& e, ConvTf32 conv) {
  if (e.kind == "baseline") return conv == ConvTf32::on ? "defaults (cuDNN TF32 on)" : "fp32 defaults";
  const std::string last = e.settings.empty() ? std::string() : setting_label(e.settings.back());
  return e.kind == "alone" ? "  alone: " + last : "+ " + last;
}

std::vector<SettingChoice> skipped_settings(const ModelResult& m, const GpuRun& gpu) {
  std::vector<SettingChoice> out;
  const auto model = parse_tune_model(m.name);
  if (!model || !gpu.cc) return out;
  for (const SettingChoice& c : model_settings(*model, *gpu.cc)) {
    if (!c.skipped.empty()) out.push_back(c);
  }
  return out;
}

void print_runs(const ModelResult& m, ConvTf32 conv, Printer& out) {
  out.line(fmt::format("    {:<34}{:>12}  {:>11}  {:>12}", "settings", m.unit + "/s", "vs defaults", "peak memory"));
  for (const ModelGain& g : model_gains(m)) {
    const ModelRunEntry& e = *g.run;
    if (!e.error.empty()) {
      out.line(fmt::format("    {:<34}failed: {}", row_label(e, conv), e.error));
      continue;
    }
    out.line(fmt::format("    {:<34}{:>12.0f}  {:>11}  {:>12}", row_label(e, conv), e.per_s.value_or(0),
                         g.factor ? fmt::format("{:.2f}x", *g.factor) : "-", gib(e.max_memory_bytes)));
  }
}

void print_max_batch(const ModelResult& m, Printer& out) {
  if (!m.max_batch) return;
  const MaxBatch& b = *m.max_batch;
  if (b.batch == 0) {
    out.line(fmt::format("    largest batch: not even batch {} fits with every setting", m.batch));
    return;
  }
  std::string line = fmt::format("    largest batch with every setting: {}{} ({} tries, {:.0f} s)", b.batch,
                                 b.capped ? fmt::format(" (the search stops at {})", b.limit) : "", b.tries, b.seconds);
  if (b.run && b.run->per_s)
    line += fmt::format(": {:.0f} {}/s, {} peak", *b.run->per_s, m.unit, gib(b.run->max_memory_bytes));
  out.line(line);
}

void print_advice(const ModelResult& m, const TuneReport& r, Printer& out) {
  const auto advice = model_advice(m, Version::parse(r.torch_version), conv_tf32_default(r.settings));
  if (advice.empty()) return;
  out.line("  advice (torch " + r.torch_version + "):");
  for (const ModelAdvice& a : advice) {
    std::string title = setting_label(to_string(a.setting));
    if (a.alone) title += fmt::format(": {:.2f}x alone", *a.alone);
    if (a.cumulative) title += fmt::format(", {:.2f}x on top of the settings before it", *a.cumulative);
    if (!a.helps) title += "; no gain measured here";
    out.line("    " + (a.helps ? out.paint("+", Colour::green) : out.paint("-", Colour::dim)) + " " + title);
    if (!a.already.empty()) out.line("        (" + a.already + ")");
    if (!a.helps) continue;
    for (const std::string& l : a.lines) out.line("        " + l);
    if (!a.env.empty()) out.line("        or from the environment: " + a.env);
    if (!a.only_code.empty()) out.line("        (" + a.only_code + ")");
    if (!a.numerics.empty()) out.line("        " + out.paint("numerics:", Colour::yellow) + " " + a.numerics);
  }
}

}  // namespace

void print_tune_model(const TuneReport& r, const GpuRun& gpu, Printer& out) {
  const ModelResult& m = *gpu.model;
  if (!m.error.empty()) {
    out.line("  " + out.paint("FAIL", Colour::red) + " " + m.error);
    return;
  }
  out.line(fmt::format("  {} training step, batch {}, {} timed steps after {} warm-up (SGD, random data)", m.name,
                       m.batch, m.steps, m.warmup));
  print_runs(m, conv_tf32_default(r.settings), out);
  for (const SettingChoice& c : skipped_settings(m, gpu))
    out.line(fmt::format("    {:<34}skipped: {}", setting_label(to_string(c.setting)), c.skipped));
  print_max_batch(m, out);
  print_advice(m, r, out);
}

json tune_model_json(const TuneReport& r, const GpuRun& gpu) {
  const ModelResult& m = *gpu.model;
  const auto run_json = [](const ModelRunEntry& e, std::optional<double> factor) {
    return json{{"kind", e.kind},
                {"settings", e.settings},
                {"batch", e.batch},
                {"step_ms", opt(e.step_ms)},
                {"per_s", opt(e.per_s)},
                {"factor", opt(factor)},
                {"max_memory_bytes", opt(e.max_memory_bytes)},
                {"error", e.error.empty() ? json(nullptr) : json(e.error)}};
  };
  json runs = json::array();
  for (const ModelGain& g : model_gains(m)) runs.push_back(run_json(*g.run, g.factor));
  json skipped = json::array();
  for (const SettingChoice& c : skipped_settings(m, gpu))
    skipped.push_back({{"setting", to_string(c.setting)}, {"why", c.skipped}});
  json max_batch = nullptr;
  if (m.max_batch) {
    const MaxBatch& b = *m.max_batch;
    max_batch = {{"batch", b.batch}, {"tries", b.tries},     {"capped", b.capped},
                 {"limit", b.limit}, {"seconds", b.seconds}, {"run", b.run ? run_json(*b.run, {}) : json(nullptr)}};
  }
  json advice = json::array();
  for (const ModelAdvice& a : model_advice(m, Version::parse(r.torch_version), conv_tf32_default(r.settings))) {
    advice.push_back({{"setting", to_string(a.setting)},
                      {"alone", opt(a.alone)},
                      {"cumulative", opt(a.cumulative)},
                      {"helps", a.helps},
                      {"lines", a.lines},
                      {"env", a.env.empty() ? json(nullptr) : json(a.env)},
                      {"only_code", a.only_code.empty() ? json(nullptr) : json(a.only_code)},
                      {"numerics", a.numerics.empty() ? json(nullptr) : json(a.numerics)},
                      {"already", a.already.empty() ? json(nullptr) : json(a.already)}});
  }
  return {{"name", m.name},     {"unit", m.unit},
          {"batch", m.batch},   {"steps", m.steps},
          {"warmup", m.warmup}, {"runs", runs},
          {"skipped", skipped}, {"max_batch", max_batch},
          {"advice", advice},   {"error", m.error.empty() ? json(nullptr) : json(m.error)}};
}

}  // namespace torchfix
