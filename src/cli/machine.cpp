#include "cli/machine.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/base/snapshot_bounds.hpp"
#include "core/situation/what_if.hpp"
#include "probe/gpu_probe.hpp"
#include "probe/snapshot_probe.hpp"
#include "shellenv/rc_file.hpp"
#include "util/file.hpp"

namespace torchfix::cli {

Expected<Snapshot> read_snapshot_file(const std::filesystem::path& path) {
  // util's reader (regular files and pipes, at most 8 MiB, no hang on a
  // FIFO) and a parse that refuses nesting deeper than any snapshot's.
  auto text = util::read_file_bytes(path, util::snapshot_limits());
  if (!text) return fail("cannot read the snapshot: " + text.error().message);
  auto json = parse_json_bounded(*text);
  if (json.is_discarded()) {
    return fail("snapshot '" + path.string() + "' is not valid JSON; save one with torchfix doctor --save-snapshot");
  }
  // A `doctor --json` report (or --log) carries the snapshot under its
  // "snapshot" key; read that instead of finding no machine at the top.
  if (json.is_object() && json.contains("snapshot") && json.contains("findings")) {
    if (!json.at("snapshot").is_object()) {
      return fail("'" + path.string() +
                  "' is a doctor report without a snapshot in it; save one with torchfix doctor --save-snapshot");
    }
    json = nlohmann::json(json.at("snapshot"));
  }
  auto snapshot = snapshot_from_json(json);
  if (!snapshot) return fail("snapshot '" + path.string() + "': " + snapshot.error().message);
  return snapshot;
}

namespace {

// On Windows a path has a backslash or a drive's ':', any file may be run
// (no execute bit), and a folder stands for the python.exe it holds (a
// portable app's python_embeded folder: discover_pythons finds it).
#ifdef _WIN32
constexpr const char* k_path_chars = "/\\:";
constexpr bool k_folders_allowed = true;
constexpr const char* k_python_hint =
    "; give the path of a Python 3 interpreter (e.g. %VIRTUAL_ENV%\\Scripts\\python.exe)"
    " or of the folder of a portable app's python_embeded";
#else
constexpr const char* k_path_chars = "/";
constexpr bool k_folders_allowed = false;
constexpr const char* k_python_hint = "; give the path of a Python 3 interpreter (e.g. $VIRTUAL_ENV/bin/python)";
#endif

bool executable(const std::string& path) {
#ifdef _WIN32
  (void)path;
  return true;
#else
  return ::access(path.c_str(), X_OK) == 0;
#endif
}

}  // namespace

Expected<void> check_python_option(const std::string& python, const Environment& env) {
  const std::string hint = k_python_hint;
  if (python.find_first_of(k_path_chars) == std::string::npos) {
    if (!find_program(python, env)) return fail("--python " + python + ": not found on PATH" + hint);
    return {};
  }
  std::error_code ec;
  const auto status = std::filesystem::status(python, ec);
  if (!std::filesystem::exists(status)) return fail("--python " + python + ": no such executable" + hint);
  if (k_folders_allowed && std::filesystem::is_directory(status)) return {};
  if (!std::filesystem::is_regular_file(status) || !executable(python)) {
    return fail("--python " + python + ": not an executable file" + hint);
  }
  return {};
}

Expected<Snapshot> machine_snapshot(const std::string& snapshot_file, const std::vector<std::string>& gpus,
                                    ProbeDepth depth, const Knowledge& knowledge, Context& ctx) {
  Snapshot snapshot;
  if (!snapshot_file.empty()) {
    auto loaded = read_snapshot_file(snapshot_file);
    if (!loaded) return loaded;
    snapshot = std::move(*loaded);
  } else if (depth == ProbeDepth::full) {
    ProbeOptions options;
    // The kernels of installed packages tell whether torch reaches a GPU only
    // through PTX (CUDA_CACHE_MAXSIZE); importing torch is not needed.
    options.binaries = BinaryScan::run;
    if (!ctx.argv.empty()) options.python.invoked_as = ctx.argv.front();
    if (ctx.err->smart()) ctx.err->status("probing GPUs, toolkits, compilers and Python environments...");
    snapshot = probe_machine(options, ctx.env, *ctx.runner, knowledge);
    if (interrupt_signal() != 0) return fail("interrupted");  // run() exits with 128 + the signal
    if (ctx.err->smart()) ctx.err->status("");
  } else if (gpus.empty()) {
    GpuProbeResult probed = probe_gpus(ctx.env, *ctx.runner, knowledge, std::chrono::seconds(10));
    snapshot.gpus = std::move(probed.gpus);
    snapshot.driver = std::move(probed.driver);
    snapshot.notes = std::move(probed.notes);
  }
  WhatIf what_if;
  what_if.gpus = gpus;
  if (auto applied = apply_what_if(snapshot, what_if, knowledge); !applied) return std::unexpected(applied.error());
  return snapshot;
}

}  // namespace torchfix::cli
