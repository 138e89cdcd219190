#include "core/tune/tune.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include "core/base/quote.hpp"
#include "core/facts/toml_text.hpp"

namespace torchfix {
namespace {

using nlohmann::json;

// Reads optional fields: a missing key and null both mean "not known".
std::optional<std::string> opt_string(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}
std::optional<double> opt_number(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}
std::optional<bool> opt_bool(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

Expected<TuneStatus> parse_status(const std::string& text) {
  for (TuneStatus s : {TuneStatus::ok, TuneStatus::no_torch, TuneStatus::import_failed, TuneStatus::cpu_only,
                       TuneStatus::no_gpu, TuneStatus::bad_gpu_index}) {
    if (to_string(s) == text) return s;
  }
  return fail("unknown status '" + text + "'");
}

Expected<GpuRun> parse_gpu(const json& g) {
  GpuRun gpu;
  if (!g.is_object() || !g.contains("index") || !g["index"].is_number_integer())
    return fail("a GPU entry lacks its integer 'index'");
  gpu.index = g["index"].get<int>();
  gpu.name = opt_string(g, "name").value_or("");
  if (auto cc = opt_string(g, "cc")) {
    if (auto parsed = ComputeCapability::parse(*cc)) gpu.cc = *parsed;
  }
  if (auto sms = opt_number(g, "sm_count")) gpu.sm_count = static_cast<int>(*sms);
  if (g.contains("smoke") && g["smoke"].is_object()) {
    gpu.smoke_ok = opt_bool(g["smoke"], "ok").value_or(false);
    gpu.smoke_error = opt_string(g["smoke"], "error").value_or("");
  }
  for (const json& e : g.value("extensions", json::array())) {
    ExtensionRun run;
    run.distribution = opt_string(e, "distribution").value_or("");
    run.module = opt_string(e, "module").value_or("");
    run.imported = opt_bool(e, "imported").value_or(false);
    run.launched = opt_bool(e, "launched");
    run.loaded_only = opt_string(e, "check").value_or("launch") == "load";
    run.op = opt_string(e, "op").value_or("");
    run.error = opt_string(e, "error").value_or("");
    if (run.distribution.empty()) return fail("an extension entry lacks 'distribution'");
    gpu.extensions.push_back(std::move(run));
  }
  for (const json& m : g.value("matmul", json::array())) {
    MatmulResult r;
    r.dtype = opt_string(m, "dtype").value_or("");
    if (r.dtype.empty()) return fail("a matmul entry lacks 'dtype'");
    r.n = static_cast<int>(opt_number(m, "n").value_or(0));
    r.iterations = static_cast<int>(opt_number(m, "iterations").value_or(0));
    r.seconds = opt_number(m, "seconds");
    r.tflops = opt_number(m, "tflops");
    r.error = opt_string(m, "error").value_or("");
    r.skipped = opt_string(m, "skipped").value_or("");
    gpu.matmul.push_back(std::move(r));
  }
  if (g.contains("conv") && g["conv"].is_object()) {
    const json& c = g["conv"];
    gpu.conv = ConvResult{opt_string(c, "shape").value_or(""), opt_number(c, "benchmark_off_ms"),
                          opt_number(c, "benchmark_on_ms"), opt_string(c, "error").value_or("")};
  }
  if (g.contains("model") && g["model"].is_object()) {
    auto model = parse_model_result(g["model"]);
    if (!model) return std::unexpected(model.error());
    gpu.model = std::move(*model);
  }
  return gpu;
}

std::string normalise(std::string_view name) {
  std::string lowered;
  for (char c : name)
    lowered += (c == '-' || c == '_') ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::istringstream words(lowered);
  std::string out;
  for (std::string word; words >> word;) {
    if (word == "nvidia" || word == "geforce" || word == "tesla") continue;
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

bool at_least(const std::optional<Version>& v, std::vector<int> parts) {
  return v && *v >= Version(std::move(parts));
}

// True when fp32 matmuls already run as TF32 (torch setting or NGC override).
bool tf32_in_force(const TuneReport& r) {
  const TorchSettings& s = r.settings;
  return s.matmul_allow_tf32 || s.matmul_fp32_precision == "tf32" || s.float32_matmul_precision == "high" ||
         s.float32_matmul_precision == "medium" || r.tf32_override == "1";
}

std::string times(double factor) {
  return fixed(factor, factor < 10 ? 2 : 1) + "x";
}

}  // namespace

ConvTf32 conv_tf32_default(const TorchSettings& s) {
  if (s.cudnn_conv_fp32_precision == "tf32") return ConvTf32::on;
  if (s.cudnn_conv_fp32_precision == "ieee") return ConvTf32::off;
  return s.cudnn_allow_tf32 ? ConvTf32::on : ConvTf32::off;
}

std::string_view to_string(TuneStatus status) {
  switch (status) {
    case TuneStatus::ok:
      return "ok";
    case TuneStatus::no_torch:
      return "no_torch";
    case TuneStatus::import_failed:
      return "import_failed";
    case TuneStatus::cpu_only:
      return "cpu_only";
    case TuneStatus::no_gpu:
      return "no_gpu";
    case TuneStatus::bad_gpu_index:
      return "bad_gpu_index";
  }
  return "ok";
}

const MatmulResult* GpuRun::find(std::string_view dtype) const {
  for (const MatmulResult& m : matmul) {
    if (m.dtype == dtype) return &m;
  }
  return nullptr;
}

Expected<TuneReport> parse_tune_report(std::string_view text) {
  // The child prints one document; anything torch or an extension printed
  // on stdout before it is skipped by taking the last line that parses.
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) doc = json();
  std::istringstream lines{doc.is_object() ? std::string() : std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') continue;
    json parsed = json::parse(line, nullptr, false);
    if (!parsed.is_discarded()) doc = std::move(parsed);
  }
  const std::string bug = " (a torchfix bug: please report it with the output of -v)";
  if (!doc.is_object()) return fail("the measurement child printed no JSON document" + bug);
  if (doc.value("schema", 0) != 1)
    return fail("the measurement child's JSON has schema " + doc.value("schema", json(0)).dump() + ", expected 1" +
                bug);
  TuneReport r;
  auto status = parse_status(opt_string(doc, "status").value_or(""));
  if (!status) return fail("the measurement child's JSON: " + status.error().message + bug);
  r.status = *status;
  r.mode = opt_string(doc, "mode").value_or("tune");
  r.message = opt_string(doc, "message").value_or("");
  r.python = opt_string(doc, "python").value_or("");
  if (doc.contains("torch") && doc["torch"].is_object()) {
    const json& t = doc["torch"];
    r.torch_version = opt_string(t, "version").value_or("");
    r.torch_cuda = opt_string(t, "cuda");
    if (auto cudnn = opt_number(t, "cudnn")) r.cudnn = static_cast<int>(*cudnn);
  }
  if (doc.contains("settings") && doc["settings"].is_object()) {
    const json& s = doc["settings"];
    r.settings.matmul_allow_tf32 = opt_bool(s, "matmul_allow_tf32").value_or(false);
    r.settings.matmul_fp32_precision = opt_string(s, "matmul_fp32_precision");
    r.settings.float32_matmul_precision = opt_string(s, "float32_matmul_precision");
    r.settings.cudnn_allow_tf32 = opt_bool(s, "cudnn_allow_tf32").value_or(true);
    r.settings.cudnn_conv_fp32_precision = opt_string(s, "cudnn_conv_fp32_precision");
    r.settings.cudnn_benchmark = opt_bool(s, "cudnn_benchmark").value_or(false);
  }
  if (doc.contains("allocator") && doc["allocator"].is_object()) {
    r.alloc_conf = opt_string(doc["allocator"], "conf");
    r.alloc_conf_variable = opt_string(doc["allocator"], "conf_variable");
    r.allocator_backend = opt_string(doc["allocator"], "backend");
  }
  if (doc.contains("environment") && doc["environment"].is_object()) {
    r.tf32_override = opt_string(doc["environment"], "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE");
    r.ngc_version = opt_string(doc["environment"], "NVIDIA_PYTORCH_VERSION");
  }
  if (r.status == TuneStatus::ok && (!doc.contains("gpus") || !doc["gpus"].is_array()))
    return fail("the measurement child's JSON lacks the 'gpus' list" + bug);
  for (const json& g : doc.value("gpus", json::array())) {
    auto gpu = parse_gpu(g);
    if (!gpu) return fail("the measurement child's JSON: " + gpu.error().message + bug);
    r.gpus.push_back(std::move(*gpu));
  }
  r.elapsed_seconds = opt_number(doc, "elapsed_seconds").value_or(0);
  return r;
}

std::optional<double> GpuPeak::for_dtype(std::string_view dtype) const {
  if (dtype == "fp32") return fp32;
  if (dtype == "tf32") return tf32;
  if (dtype == "bf16") return bf16;
  if (dtype == "fp16") return fp16;
  if (dtype == "fp8") return fp8;
  return std::nullopt;
}

namespace {

using enum FieldType;
constexpr Need opt = Need::optional;

constexpr Field k_peak_fields[] = {{"names", texts},      {"fp32", number},      {"tf32", number, opt},
                                   {"bf16", number, opt}, {"fp16", number, opt}, {"fp8", number, opt},
                                   {"source", text}};
constexpr TableSchema k_peak{"[[peak]]", k_peak_fields};
constexpr Field k_peaks_file_fields[] = {{"peak", tables, Need::required, {}, &k_peak}};
constexpr TableSchema k_peaks_file{"recipes/gpu-peaks.toml", k_peaks_file_fields};

}  // namespace

Expected<std::vector<GpuPeak>> parse_gpu_peaks(std::string_view text, const std::string& file) {
  TF_TRY(root, parse_checked_toml(text, file, k_peaks_file));
  std::vector<GpuPeak> out;
  auto parsed = for_each_toml_row(root, file, "peak", [&](const Row& r) -> Expected<void> {
    GpuPeak p;
    TF_TRY(names, r.strings("names"));
    TF_TRY(source, r.source());
    p.names = std::move(names);
    p.fp32 = r.number("fp32");
    p.tf32 = r.number("tf32");
    p.bf16 = r.number("bf16");
    p.fp16 = r.number("fp16");
    p.fp8 = r.number("fp8");
    p.source = source;
    if (!p.fp32) return std::unexpected(r.error("missing number 'fp32' (TFLOPS)", "fp32"));
    out.push_back(std::move(p));
    return {};
  });
  if (!parsed) return std::unexpected(parsed.error());
  return out;
}

const GpuPeak* find_peak(const std::vector<GpuPeak>& peaks, std::string_view gpu_name) {
  const std::string gpu = normalise(gpu_name) + " ";
  const GpuPeak* best = nullptr;
  std::size_t best_length = 0;
  for (const GpuPeak& p : peaks) {
    for (const std::string& name : p.names) {
      const std::string n = normalise(name) + " ";
      if (gpu.starts_with(n) && n.size() > best_length) {
        best = &p;
        best_length = n.size();
      }
    }
  }
  return best;
}

std::string_view alloc_conf_variable(const Version& torch_version) {
  return torch_version >= Version({2, 9}) ? "PYTORCH_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
}

std::vector<std::string> tf32_lines(const std::optional<Version>& torch, Tf32Scope scope) {
  const bool conv = scope == Tf32Scope::matmul_and_conv;
  if (at_least(torch, {2, 9})) {
    if (!conv) return {"torch.backends.cuda.matmul.fp32_precision = \"tf32\""};
    return {"torch.backends.cuda.matmul.fp32_precision = \"tf32\"",
            "torch.backends.cudnn.conv.fp32_precision = \"tf32\""};
  }
  std::vector<std::string> out{at_least(torch, {1, 12}) ? "torch.set_float32_matmul_precision(\"high\")"
                                                        : "torch.backends.cuda.matmul.allow_tf32 = True"};
  if (conv) out.emplace_back("torch.backends.cudnn.allow_tf32 = True");
  return out;
}

std::string grad_scaler_line(const std::optional<Version>& torch) {
  return at_least(torch, {2, 3}) ? "scaler = torch.amp.GradScaler(\"cuda\")" : "scaler = torch.cuda.amp.GradScaler()";
}

namespace {

// Holds what each piece of advice reads from one GPU's measurements.
struct Measured {
  const TuneReport& r;
  const GpuRun& gpu;
  std::optional<Version> torch;
  ComputeCapability cc;
  std::optional<double> base;  // fp32 TFLOPS

  std::optional<double> rate(const char* dtype) const {
    const MatmulResult* m = gpu.find(dtype);
    return m ? m->tflops : std::nullopt;
  }
};

// Advises TF32 for fp32 matmuls (tensor cores from 8.0, Ampere).
Advice tf32_advice(const Measured& m) {
  Advice a;
  a.id = "tf32";
  if (m.cc.major < 8) {
    a.title =
        "TF32: nothing to gain on compute capability " + m.cc.str() + ": TF32 tensor cores arrived with 8.0 (Ampere)";
  } else if (tf32_in_force(m.r)) {
    a.title = "TF32: fp32 matmuls already run as TF32 here" +
              std::string(m.r.tf32_override == "1" ? " (TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1, set by NGC images)" : "");
    if (m.base) a.title += ": " + fixed(*m.base, 1) + " TFLOPS";
  } else if (m.base && m.rate("tf32")) {
    a.factor = *m.rate("tf32") / *m.base;
    a.helps = *a.factor >= 1.05;
    a.title = "TF32 for fp32 matmuls: " + fixed(*m.rate("tf32"), 1) + " vs " + fixed(*m.base, 1) + " TFLOPS (" +
              times(*a.factor) + "), at about 10 mantissa bits instead of 23";
    if (a.helps) a.lines = tf32_lines(m.torch, Tf32Scope::matmul);
  } else {
    a.title = "TF32: not measured";
  }
  return a;
}

// Advises a lower-precision autocast against the fp32 rate.
Advice autocast_advice(const Measured& m, const char* dtype, std::string id, std::string title,
                       std::vector<std::string> lines) {
  Advice a;
  a.id = std::move(id);
  if (m.base && m.rate(dtype)) {
    a.factor = *m.rate(dtype) / *m.base;
    a.helps = *a.factor >= 1.05;
    a.title = title + ": matmuls at " + fixed(*m.rate(dtype), 1) + " TFLOPS vs fp32 " + fixed(*m.base, 1) + " (" +
              times(*a.factor) + ")";
    if (a.helps) a.lines = std::move(lines);
  } else {
    a.title = std::string(dtype) + ": not measured";
  }
  return a;
}

// Advises bf16 autocast from 8.0, or says why not and advises fp16 with loss
// scaling before.
void precision_advice(const Measured& m, std::vector<Advice>& out) {
  if (m.cc.major >= 8) {
    Advice a = autocast_advice(m, "bf16", "bf16-autocast", "bf16 autocast",
                               {"with torch.autocast(\"cuda\", dtype=torch.bfloat16):"});
    if (a.factor) a.title += ", fp32 range, no loss scaling";
    out.push_back(std::move(a));
    return;
  }
  Advice b;
  b.id = "bf16-autocast";
  b.title = "bf16: nothing to gain on compute capability " + m.cc.str() + ": bf16 tensor cores need 8.0 or newer";
  out.push_back(std::move(b));
  out.push_back(autocast_advice(m, "fp16", "fp16-autocast", "fp16 autocast with loss scaling",
                                {"with torch.autocast(\"cuda\", dtype=torch.float16):", grad_scaler_line(m.torch)}));
}

// Says what FP8 matmuls reach: information only (it takes Transformer
// Engine or torchao, not a switch).
std::optional<Advice> fp8_advice(const Measured& m) {
  const MatmulResult* fp8 = m.gpu.find("fp8");
  if (!fp8 || !fp8->tflops || !m.rate("bf16")) return std::nullopt;
  Advice a;
  a.id = "fp8";
  a.factor = *fp8->tflops / *m.rate("bf16");
  a.title = "FP8 matmul (torch._scaled_mm): " + fixed(*fp8->tflops, 1) + " TFLOPS, " + times(*a.factor) +
            " bf16; needs scaling recipes (Transformer Engine, torchao), not a switch";
  return a;
}

// Advises cuDNN autotuning from the measured conv2d times.
std::optional<Advice> cudnn_advice(const Measured& m) {
  const auto& conv = m.gpu.conv;
  if (!conv || !conv->benchmark_off_ms || !conv->benchmark_on_ms || *conv->benchmark_on_ms <= 0) return std::nullopt;
  Advice a;
  a.id = "cudnn-benchmark";
  a.factor = *conv->benchmark_off_ms / *conv->benchmark_on_ms;
  a.helps = *a.factor >= 1.05 && !m.r.settings.cudnn_benchmark;
  a.title = "cuDNN autotuning (cudnn.benchmark): conv2d " + fixed(*conv->benchmark_off_ms, 3) + " -> " +
            fixed(*conv->benchmark_on_ms, 3) + " ms (" + times(*a.factor) + ")" +
            (m.r.settings.cudnn_benchmark ? ", already on" : "") + "; pays off when input shapes stay the same";
  if (a.helps) a.lines = {"torch.backends.cudnn.benchmark = True"};
  return a;
}

// Advises expandable segments: not measured here (fragmentation shows over
// a long run); not on Jetson, where PyTorch skips its test.
Advice allocator_advice(const Measured& m) {
  Advice a;
  a.id = "allocator";
  const TuneReport& r = m.r;
  const bool tegra = m.gpu.cc && is_tegra(*m.gpu.cc);
  const bool expandable = r.alloc_conf && r.alloc_conf->find("expandable_segments:True") != std::string::npos;
  if (expandable) {
    a.title =
        "Allocator: expandable segments already on (" + r.alloc_conf_variable.value_or("") + "=" + *r.alloc_conf + ")";
    if (m.torch && *m.torch >= Version({2, 9}) && r.alloc_conf_variable == "PYTORCH_CUDA_ALLOC_CONF")
      a.title += "; torch " + m.torch->str() + " reads PYTORCH_ALLOC_CONF and warns that the old name is deprecated";
  } else if (tegra) {
    a.title = "Allocator: expandable segments are not supported on Jetson (PyTorch skips its test there)";
  } else if (m.torch && *m.torch >= Version({2, 1})) {
    a.helps = true;
    a.env_name = std::string(alloc_conf_variable(*m.torch));
    a.env_value = "expandable_segments:True";
    a.title = "Allocator: " + (r.alloc_conf ? "'" + *r.alloc_conf + "'" : std::string("default settings")) +
              "; expandable segments cut fragmentation out-of-memory errors (not measured by tune)";
    a.lines = {set_env_command(CommandShell::posix, a.env_name, a.env_value)};
  } else {
    a.title = "Allocator: default settings (expandable segments need torch 2.1 or newer)";
  }
  return a;
}

}  // namespace

std::vector<Advice> tune_advice(const TuneReport& r, const GpuRun& gpu) {
  const MatmulResult* fp32 = gpu.find("fp32");
  const Measured m{r, gpu, Version::parse(r.torch_version), gpu.cc.value_or(ComputeCapability{0, 0}),
                   fp32 ? fp32->tflops : std::nullopt};
  std::vector<Advice> out;
  out.push_back(tf32_advice(m));
  precision_advice(m, out);
  if (auto a = fp8_advice(m)) out.push_back(std::move(*a));
  if (auto a = cudnn_advice(m)) out.push_back(std::move(*a));
  out.push_back(allocator_advice(m));
  if (r.tf32_override == "1") {
    Advice a;
    a.id = "ngc-tf32";
    a.title =
        "NGC image: TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 runs fp32 matmuls as TF32 whatever torch's setting; "
        "export TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0 where full fp32 precision matters";
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<RuntimeVar> runtime_env(const std::optional<Version>& torch_version,
                                    const std::optional<Version>& torch_cuda, bool tegra,
                                    const std::optional<std::string>& alloc_conf) {
  std::vector<RuntimeVar> out;
  if (!torch_version) return out;
  const bool expandable = alloc_conf && alloc_conf->find("expandable_segments") != std::string::npos;
  if (!expandable && !tegra && *torch_version >= Version({2, 1}) && torch_cuda) {
    const std::string name(alloc_conf_variable(*torch_version));
    const std::string value =
        alloc_conf && !alloc_conf->empty() ? *alloc_conf + ",expandable_segments:True" : "expandable_segments:True";
    out.push_back({name, value,
                   "CUDA caching allocator grows segments instead of fragmenting them (fewer out-of-memory errors); " +
                       name + " is the name torch " + torch_version->major_minor() + " reads"});
  }
  // Lazy loading: CUDA 11.7 added it, the runtime defaults to it from 12.2
  // (CUDA Programming Guide, lazy loading), torch >= 1.13 sets it when unset
  // (pytorch PR #86509). Only an older torch on an 11.7-12.1 runtime gains.
  if (*torch_version < Version({1, 13}) && torch_cuda && *torch_cuda >= Version({11, 7}) &&
      *torch_cuda < Version({12, 2})) {
    out.push_back({"CUDA_MODULE_LOADING", "LAZY",
                   "load CUDA kernels on first use (torch " + torch_version->str() +
                       " predates 1.13, which sets it, and CUDA " + torch_cuda->str() + " predates the 12.2 default)"});
  }
  return out;
}

}  // namespace torchfix
