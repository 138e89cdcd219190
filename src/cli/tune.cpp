// torchfix tune: measure, on each GPU, what torch settings are worth (TF32,
// bf16/fp16, cuDNN autotuning, the allocator) through the user's own torch,
// in a child process with a timeout (docs/tune.md).

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/machine.hpp"
#include "cli/measure_child.hpp"
#include "cli/tables.hpp"
#include "probe/data_dir.hpp"
#include "probe/python_probe.hpp"
#include "report/tune_report.hpp"

namespace torchfix::cli {
namespace {

struct TuneOptions {
  bool json = false;
  bool quick = false;
  std::vector<int> gpu_indexes;
  std::string python;
  double timeout_s = 0;  // 0: from the GPU count and --quick
  std::string model;     // tune --model NAME: a training step instead of matmuls
  int batch_size = 0;    // 0: the model's default
  int steps = 20;
  bool no_batch_search = false;
};

// Asks core which settings to time on each distinct compute capability of
// the GPUs measured (the child picks its GPU's list by its own cc).
ModelRequest model_request(const TuneOptions& o, TuneModel model, const Snapshot& machine) {
  ModelRequest m;
  m.model = model;
  m.batch = o.batch_size;
  m.steps = o.steps;
  m.find_batch = !o.no_batch_search;
  for (const Gpu& gpu : machine.gpus) {
    if (!gpu.cc) continue;
    const std::string cc = gpu.cc->str();
    if (std::ranges::any_of(m.settings, [&](const auto& s) { return s.first == cc; })) continue;
    std::vector<std::string> ids;
    for (const SettingChoice& c : model_settings(model, *gpu.cc)) {
      if (c.skipped.empty()) ids.emplace_back(to_string(c.setting));
    }
    m.settings.emplace_back(cc, std::move(ids));
  }
  return m;
}

// Strings from the machine are raw bytes: a byte that is not UTF-8 becomes
// U+FFFD rather than failing the document (docs/json-schema.md).
std::string json_text(const nlohmann::json& json) {
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

int run_tune(const TuneOptions& o, Context& ctx) {
  const Failure failed{ctx, "tune"};
  std::optional<TuneModel> model;
  if (!o.model.empty()) {
    model = parse_tune_model(o.model);
    if (!model) return failed("--model '" + o.model + "' is not one tune knows; use resnet50, vit_b_16 or transformer");
  }
  if (o.batch_size < 0 || o.batch_size > 1 << 20) return failed("--batch-size must be between 1 and 1048576");
  if (o.steps < 1 || o.steps > 10000) return failed("--steps must be between 1 and 10000");
  auto inputs = load_inputs(ctx);
  if (!inputs) return failed(inputs.error());
  const Knowledge& knowledge = inputs->knowledge;
  auto peaks = load_gpu_peaks(inputs->data);
  if (!peaks) return failed(peaks.error().message);
  auto machine = machine_snapshot("", {}, ProbeDepth::gpus, knowledge, ctx);
  if (!machine) return failed(machine.error().message);
  if (machine->gpus.empty()) {
    std::string why;
    for (const ProbeNote& n : machine->notes) why += (why.empty() ? "" : "; ") + n.probe + ": " + n.message;
    return failed("no NVIDIA GPU found" + (why.empty() ? std::string() : " (" + why + ")") +
                  "; tune measures on a GPU (to ask about one this machine lacks: torchfix doctor --gpu NAME)");
  }
  for (int i : o.gpu_indexes) {
    if (i < 0 || i >= static_cast<int>(machine->gpus.size())) {
      return failed("--gpu-index " + std::to_string(i) + ": this machine has " + std::to_string(machine->gpus.size()) +
                    " GPU(s), numbered 0 to " + std::to_string(machine->gpus.size() - 1));
    }
  }
  PythonProbeOptions python_options;
  if (!o.python.empty()) python_options.interpreters = {o.python};
  python_options.timeout = std::chrono::seconds(30);
  if (!ctx.argv.empty()) python_options.invoked_as = ctx.argv.front();
  std::vector<ProbeNote> notes;
  const auto pythons = probe_pythons(python_options, ctx.env, *ctx.runner, notes);
  if (pythons.empty()) return failed("no Python interpreter found; pass --python PATH");
  const PythonEnv& python = pythons.front();
  if (python.status == PythonStatus::not_runnable)
    return failed("cannot run " + python.interpreter + ": " + python.error + "; pass --python PATH");

  ChildRequest request;
  request.python = python.interpreter;
  request.mode = model ? ChildMode::model : ChildMode::tune;
  if (model) request.model = model_request(o, *model, *machine);
  request.quick = o.quick;
  request.gpu_indexes = o.gpu_indexes;
  request.packages = packages_to_launch(python);
  const std::size_t gpus = o.gpu_indexes.empty() ? machine->gpus.size() : o.gpu_indexes.size();
  // import torch takes 4-20 s; each GPU takes about 10 s (--quick) or 30 s.
  // A model step series with its batch search takes one to three minutes.
  const double per_gpu = model ? 240.0 : o.quick ? 20.0 : 60.0;
  const double limit = o.timeout_s > 0 ? o.timeout_s : 60.0 + static_cast<double>(gpus) * per_gpu;
  request.timeout = std::chrono::milliseconds(static_cast<long>(limit * 1000));
  auto report = run_measure_child(request, inputs->data, ctx, "torchfix tune");
  if (!report) return failed(report.error().message);

  const std::string where = " in " + python.interpreter;
  switch (report->status) {
    case TuneStatus::ok:
      break;
    case TuneStatus::no_torch:
    case TuneStatus::import_failed:
    case TuneStatus::cpu_only:
      if (o.json) ctx.out->block(json_text(tune_json(*report, *peaks)));
      ctx.err->line("torchfix tune: " + report->message + where + "; `torchfix doctor` shows the fix");
      return k_exit_problem;
    case TuneStatus::no_gpu:
      if (o.json) ctx.out->block(json_text(tune_json(*report, *peaks)));
      ctx.err->line("torchfix tune: " + report->message + " although the driver lists " +
                    std::to_string(machine->gpus.size()) + " GPU(s); `torchfix doctor` says why");
      return k_exit_problem;
    case TuneStatus::bad_gpu_index:
      return failed(report->message);
  }
  if (o.json) {
    ctx.out->block(json_text(tune_json(*report, *peaks)));
  } else {
    print_tune(*report, *peaks, *ctx.out);
  }
  for (const GpuRun& gpu : report->gpus) {
    if (!gpu.smoke_ok) return k_exit_problem;
    for (const ExtensionRun& e : gpu.extensions) {
      if (!e.imported || (e.launched && !*e.launched)) return k_exit_problem;
    }
  }
  return k_exit_ok;
}

}  // namespace

void add_tune(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<TuneOptions>();
  auto* cmd = app.add_subcommand(
      "tune",
      "Measure on each GPU what TF32, bf16/fp16, cuDNN autotuning and the allocator are worth, and say what to set");
  cmd->add_flag("--json", options->json, "Print every number as JSON (docs/tune.md)");
  cmd->add_flag("--quick", options->quick, "Smaller matrices and shorter timing (under 10 s per GPU)");
  cmd->add_option("--gpu-index", options->gpu_indexes, "Measure only this GPU (torch's numbering; repeatable)");
  cmd->add_option("--python", options->python,
                  "Python interpreter whose torch to measure (default: active env, python3)");
  cmd->add_option("--model", options->model,
                  "Time a training step of resnet50, vit_b_16 or transformer under each setting instead of matmuls");
  cmd->add_option("--batch-size", options->batch_size, "Batch of the --model step (default: 128, 64, 16)");
  cmd->add_option("--steps", options->steps, "Timed --model steps per setting, after 5 warm-up steps (default 20)");
  cmd->add_flag("--no-batch-search", options->no_batch_search,
                "Skip the search for the largest --model batch that fits in memory");
  cmd->add_option("--timeout", options->timeout_s,
                  "Seconds the measurement may take in all (default: from the GPU count)")
      ->check(CLI::PositiveNumber);
  cmd->callback([options, &ctx] { ctx.exit_code = run_tune(*options, ctx); });
}

}  // namespace torchfix::cli
