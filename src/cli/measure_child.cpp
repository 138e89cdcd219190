#include "cli/measure_child.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdlib.h>
#include <unistd.h>
#include <fstream>
#include <future>
#include <set>

#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

const char* mode_name(ChildMode mode) {
  switch (mode) {
    case ChildMode::tune:
      return "tune";
    case ChildMode::run:
      return "run";
    case ChildMode::model:
      return "model";
  }
  return "tune";
}

void append_model_args(const ModelRequest& m, std::vector<std::string>& args) {
  args.insert(args.end(), {"--model", std::string(to_string(m.model)), "--steps", std::to_string(m.steps), "--warmup",
                           std::to_string(m.warmup), "--batch-limit", std::to_string(m.batch_limit)});
  if (m.batch > 0) args.insert(args.end(), {"--batch-size", std::to_string(m.batch)});
  if (m.find_batch) args.push_back("--find-batch");
  for (const auto& [cc, ids] : m.settings) {
    args.insert(args.end(), {"--settings", fmt::format("{}={}", cc, fmt::join(ids, ","))});
  }
}

}  // namespace

std::vector<std::string> packages_to_launch(const PythonEnv& env) {
  std::set<std::string> names;
  for (const auto& [name, version] : env.distributions) names.insert(name);
  for (const PackageKernels& k : env.kernels) names.insert(k.distribution);
  std::vector<std::string> out;
  for (const std::string& name : names) {
    // Not torch's stack: CUDA's own libraries and other frameworks (cupy-cuda13x, jax-cuda13-plugin, ...).
    const bool other = name == "torch" || name.starts_with("nvidia-") || name.starts_with("jax") ||
                       name.starts_with("tensorrt") || name.starts_with("onnxruntime") || name.starts_with("cupy");
    if (other) continue;
    out.push_back(name);
  }
  return out;
}

namespace {

// Writes the child and the modules it imports from its own folder into
// `folder`, so that one path runs them from a data folder or from the
// binary's embedded copy alike; returns the child's path.
Expected<fs::path> write_child_scripts(const DataSource& data, const fs::path& folder) {
  for (const char* name : {"kernel_load.py", "tune_model.py", "tune_child.py"}) {
    TF_TRY(text, read_data_file(data, std::string("templates/") + name, data_file_limits("script")));
    if (auto ok = util::write_file(folder / name, text, {}); !ok) return std::unexpected(ok.error());
  }
  return folder / "tune_child.py";
}

}  // namespace

Expected<TuneReport> run_measure_child(const ChildRequest& req, const DataSource& data, Context& ctx,
                                       const std::string& label) {
  // The child's progress file and its scripts live in a folder of our own
  // (mkdtemp: 0700, a fresh name), never at a predictable name in /tmp where
  // another user could plant a link for root's tune to write through.
  std::error_code ec;
  std::string folder = (fs::temp_directory_path(ec) / "torchfix-progress-XXXXXX").string();
  if (::mkdtemp(folder.data()) == nullptr) {
    return fail("cannot create a private folder in " + fs::temp_directory_path(ec).string() +
                " for the progress "
                "file; set TMPDIR to a writable folder");
  }
  auto script = write_child_scripts(data, folder);
  if (!script) {
    fs::remove_all(folder, ec);
    return std::unexpected(script.error());
  }
  const fs::path progress = fs::path(folder) / "progress.txt";
  Command cmd;
  cmd.program = req.python;
  cmd.args = {script->string(), "--mode", mode_name(req.mode), "--progress", progress.string()};
  if (req.quick) cmd.args.push_back("--quick");
  if (req.mode == ChildMode::model) append_model_args(req.model, cmd.args);
  for (int i : req.gpu_indexes) {
    cmd.args.push_back("--gpu-index");
    cmd.args.push_back(std::to_string(i));
  }
  for (const std::string& p : req.packages) {
    cmd.args.push_back("--package");
    cmd.args.push_back(p);
  }
  cmd.env = ctx.env;
  cmd.timeout = req.timeout;

  // The runner blocks until the child ends; the progress file is read here
  // meanwhile, so the status line stays live and the timeout still holds.
  auto running = std::async(std::launch::async, [&] { return ctx.runner->run(cmd); });
  const auto start = std::chrono::steady_clock::now();
  std::string step = "starting " + req.python;
  while (running.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    if (auto now = first_line(progress.string()); !now.empty()) step = now;
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start).count();
    if (ctx.err->smart()) ctx.err->status(label + ": " + step + " (" + std::to_string(seconds) + " s)");
  }
  if (ctx.err->smart()) ctx.err->status("");
  if (auto now = first_line(progress.string()); !now.empty()) step = now;
  fs::remove_all(folder, ec);
  auto result = running.get();
  if (!result) return std::unexpected(result.error());
  if (result->timed_out) {
    return fail("the measurement child timed out after " + std::to_string(req.timeout.count() / 1000) +
                " s while at: " + step + "; a GPU that hangs needs `torchfix doctor`, or raise --timeout");
  }
  if (!result->succeeded()) {
    const std::string how = result->signal ? "was killed by signal " + std::to_string(*result->signal)
                                           : "exited with " + std::to_string(result->exit_code);
    return fail("the measurement child " + how + " while at: " + step +
                (result->err.empty() ? std::string() : "; its last line: " + last_line(result->err)));
  }
  return parse_tune_report(result->out);
}

}  // namespace torchfix::cli
