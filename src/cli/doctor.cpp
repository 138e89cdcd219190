// torchfix doctor: probe the machine (or replay a snapshot), diagnose, report.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/app.hpp"
#include "cli/doctor_extras.hpp"
#include "cli/fix.hpp"
#include "cli/index_check.hpp"
#include "cli/machine.hpp"
#include "cli/tables.hpp"
#include "cli/what_if_file.hpp"
#include "core/base/json_text.hpp"
#include "core/base/version_info.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/what_if.hpp"
#include "probe/snapshot_probe.hpp"
#include "report/doctor_markdown.hpp"
#include "report/doctor_report.hpp"
#include "report/redact.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

// A snapshot is meant to be replayed elsewhere; a log carries the whole
// environment, so only its owner may read it.
constexpr fs::perms k_snapshot_mode =
    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
constexpr fs::perms k_log_mode = fs::perms::owner_read | fs::perms::owner_write;

struct DoctorOptions {
  bool json = false;
  bool markdown = false;
  bool import_torch = false;
  bool no_binaries = false;
  std::vector<std::string> pythons;
  std::string snapshot_in;
  std::string snapshot_out;
  std::string log_file;
  double timeout_s = 10;
  bool timeout_given = false;  // --timeout was on the command line
  WhatIf what_if;
  std::string driver;
  std::string torch;
  std::string platform;
  std::string python_version;
  DoctorExtras extras;       // --container, --run (cli/doctor_extras.hpp)
  bool check_index = false;  // --check-index: ask the indexes the fixes name (cli/index_check.hpp)
  bool fix = false;          // --fix: torchfix fix with these options (cli/fix.hpp)
  bool yes = false;          // --yes (with --fix)
};

// Writes through util's one writer: a regular file is replaced atomically
// (a link planted at any name there is never followed), /dev/null or a FIFO
// is written in place, and /dev/full reports the disk full.
Expected<void> write_json(const std::string& path, const nlohmann::json& json, std::filesystem::perms mode) {
  util::WriteOptions options;
  options.mode = mode;
  auto written = util::write_file(path, json_text(json) + "\n", options);
  if (!written) return std::unexpected(written.error());  // names the path and the cause
  return {};
}

// Checks the options a probe cannot judge: the --torch variant and each
// --python; fails with the line to print after "torchfix doctor: ".
Expected<void> check_doctor_options(const DoctorOptions& o, const Knowledge& knowledge, const Environment& env) {
  if (auto variant = check_torch_variant(o.torch, knowledge); !variant) return std::unexpected(variant.error());
  for (const std::string& python : o.pythons) {
    if (auto checked = check_python_option(python, env); !checked) return std::unexpected(checked.error());
  }
  return {};
}

// Probes this machine as the options ask (the status line on a terminal);
// an interpreter the user named that is no Python at all (/bin/false, a
// typo that happens to exist) is bad input, not a finding about the machine.
Expected<Snapshot> probe_for_doctor(const DoctorOptions& o, const Knowledge& knowledge, Context& ctx) {
  if (!o.json && ctx.err->smart())
    ctx.err->status("torchfix doctor: probing GPUs, toolkits, compilers and Python environments...");
  ProbeOptions probe;
  probe.python.interpreters = o.pythons;
  probe.python.import = o.import_torch ? TorchImport::run : TorchImport::skip;
  if (!ctx.argv.empty()) probe.python.invoked_as = ctx.argv.front();
  probe.binaries = o.no_binaries ? BinaryScan::skip : BinaryScan::run;
  probe.timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  // The bound the user asked for. Unasked, reading package metadata (0.1 s)
  // gets the default 10 s, and importing torch (4 s on an H200, more from
  // a cold network file system) 60 s.
  probe.python.timeout = o.timeout_given || !o.import_torch ? probe.timeout : std::chrono::milliseconds(60'000);
  Snapshot snapshot = probe_machine(probe, ctx.env, *ctx.runner, knowledge);
  if (ctx.err->smart()) ctx.err->status("");
  for (const PythonEnv& py : snapshot.pythons) {
    if (py.origin == "--python" && py.status == PythonStatus::not_runnable) {
      return fail("--python " + py.interpreter + ": " + py.error);
    }
  }
  return snapshot;
}

// Applies --driver, --torch, --platform, --python-version and the what-if
// file to `snapshot`, and says which of this machine's facts a what-if on a
// probed machine keeps.
Expected<void> apply_doctor_what_if(const DoctorOptions& o, Snapshot& snapshot, const Knowledge& knowledge,
                                    Context& ctx) {
  WhatIf what_if = o.what_if;
  if (!o.driver.empty()) what_if.driver = o.driver;
  if (!o.torch.empty()) what_if.torch = o.torch;
  if (!o.platform.empty()) what_if.machine = o.platform;
  if (!o.python_version.empty()) what_if.python_version = o.python_version;
  if (auto merged = merge_what_if_file(ctx.env, what_if); !merged) return merged;
  if (auto applied = apply_what_if(snapshot, what_if, knowledge); !applied) return applied;
  if (const std::string borrowed = borrowed_facts(snapshot, what_if, o.snapshot_in.empty()); !borrowed.empty())
    ctx.err->line(borrowed);
  return {};
}

// Writes --log: the report with the situation, the environment and argv,
// redacted (report/redact.hpp: secret-named variables, URL credentials and
// token-shaped words), readable by its owner only.
Expected<void> save_doctor_log(const DoctorOptions& o, const Situation& situation, const Diagnosis& diagnosis,
                               const Context& ctx) {
  nlohmann::json log = doctor_json(*situation.snapshot, diagnosis);
  log["situation"] = situation_json(situation);
  log["environment"] = ctx.env;
  log["argv"] = ctx.argv;
  redact_json(log);
  return write_json(o.log_file, log, k_log_mode);
}

// Prints the report as the options ask: JSON, Markdown, or the terminal form.
void print_doctor_report(const DoctorOptions& o, const Situation& situation, const Diagnosis& diagnosis, Context& ctx) {
  const Snapshot& snapshot = *situation.snapshot;
  if (o.json) {
    nlohmann::json report = doctor_json(snapshot, diagnosis);
    report["situation"] = situation_json(situation);
    redact_json(report);  // pasted into bug reports as often as --log files
    ctx.out->block(json_text(report));
  } else if (o.markdown) {
    auto home = ctx.env.find("HOME");
    ctx.out->block(doctor_markdown(situation, diagnosis, home == ctx.env.end() ? "" : home->second));
  } else {
    // -vvv: the facts every decision read, before the report they led to.
    if (ctx.verbosity >= 3) {
      ctx.err->block("torchfix: the situation the doctor judged:\n" + json_text(situation_json(situation)));
    }
    print_doctor(snapshot, diagnosis, *ctx.out, ctx.verbosity > 0 ? Detail::verbose : Detail::summary);
  }
}

// Runs the doctor: knowledge, a probe or a replayed snapshot, what-ifs,
// the diagnosis with its extras, saved files, the report. Returns the
// diagnosis' exit code, or k_exit_tool_failure after one line.
int run_doctor(const DoctorOptions& o, Context& ctx) {
  const Failure failed{ctx, "doctor"};
  auto inputs = load_inputs(ctx);
  if (!inputs) return failed(inputs.error());
  const Knowledge& knowledge = inputs->knowledge;
  if (auto checked = check_doctor_options(o, knowledge, ctx.env); !checked) return failed(checked.error());
  auto snapshot = o.snapshot_in.empty() ? probe_for_doctor(o, knowledge, ctx) : read_snapshot_file(o.snapshot_in);
  // Ctrl-C: the probes' children are gone; no report of half a machine
  // (run() exits with 128 + the signal).
  if (interrupt_signal() != 0) return k_exit_tool_failure;
  if (!snapshot) return failed(snapshot.error());
  if (auto applied = apply_doctor_what_if(o, *snapshot, knowledge, ctx); !applied) return failed(applied.error());
  if (o.check_index) {
    // Into the snapshot before it is saved: a replay decides as this run did.
    Diagnosis first = diagnose(*snapshot, knowledge);
    check_indexes(*snapshot, first, knowledge, std::chrono::seconds(3), ctx);
  }
  if (o.snapshot_out == "-") {
    // The snapshot alone on stdout (fleet --slurm reads it from each node),
    // redacted as a saved one; the exit code is still the diagnosis'.
    nlohmann::json printed = to_json(*snapshot);
    redact_json(printed);
    ctx.out->block(json_text(printed));
    return diagnose(*snapshot, knowledge).exit_code();
  }
  if (!o.snapshot_out.empty()) {
    // A snapshot is meant to be shared: no credentials in it (report/redact.hpp).
    nlohmann::json saved_snapshot = to_json(*snapshot);
    redact_json(saved_snapshot);
    if (auto saved = write_json(o.snapshot_out, saved_snapshot, k_snapshot_mode); !saved) return failed(saved.error());
  }
  // Derived once: the diagnosis, its extras and every report read this one.
  const Situation situation = situate(*snapshot, knowledge);
  Diagnosis diagnosis = diagnose(situation, knowledge);
  DoctorExtras extras = o.extras;
  extras.timeout_s = o.timeout_s;
  if (auto added = add_doctor_extras(diagnosis, situation, knowledge, extras, ctx); !added)
    return failed(added.error());
  if (!o.log_file.empty()) {
    if (auto saved = save_doctor_log(o, situation, diagnosis, ctx); !saved) return failed(saved.error());
  }
  print_doctor_report(o, situation, diagnosis, ctx);
  return diagnosis.exit_code();
}

}  // namespace

void add_doctor(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<DoctorOptions>();
  auto* cmd = app.add_subcommand("doctor", "Find why PyTorch does (not) run on this machine's GPUs, and the fix");
  cmd->add_flag("--json", options->json, "Print the report as JSON (schema: docs/json-schema.md)");
  cmd->add_flag("--markdown", options->markdown,
                "Print a short report to paste into a GitHub issue: facts, verdicts, fixes; home folder and "
                "credentials removed")
      ->excludes("--json");
  cmd->add_option("--python", options->pythons,
                  "Python interpreter to check (repeatable; default: active env, python3)");
  cmd->add_flag("--import", options->import_torch,
                "Also import torch (slow) to read its compiled-in arch flags and compare them with its binaries");
  cmd->add_flag("--no-binaries", options->no_binaries, "Do not read the CUDA kernels of installed packages");
  cmd->add_option("--save-snapshot", options->snapshot_out,
                  "Write what was probed to FILE (JSON); - prints it alone on stdout");
  cmd->add_option("--snapshot", options->snapshot_in, "Diagnose a saved snapshot instead of probing")
      ->check(CLI::ExistingFile);
  cmd->add_option("--log", options->log_file, "Write version, environment, probe results and findings to FILE (JSON)");
  cmd->add_option("--timeout", options->timeout_s,
                  "Seconds each probe may take, Python interpreters and the kernel scan included (default 10; 60 for "
                  "the Python probe with --import)")
      ->check(seconds_check());
  cmd->add_option("--gpu", options->what_if.gpus,
                  "What-if: a GPU (name, sm_120 or 12.0) instead of the probed ones (repeatable)");
  cmd->add_option("--driver", options->driver, "What-if: a driver version (570.124.04) or the CUDA it supports (12.8)")
      ->check(non_empty_check("570.124.04 or 12.8"));
  cmd->add_option("--torch", options->torch,
                  "What-if: a torch version (2.6.0+cu126; 2.6.0 means that release's PyPI default) instead of the "
                  "installed one")
      ->check(torch_version_check());
  cmd->add_option("--platform", options->platform,
                  "What-if: linux-x86_64, linux-aarch64, windows or wsl2 (x86_64 and aarch64 work too)");
  cmd->add_option("--with", options->what_if.with,
                  "What-if: an installed extension at a version, like flash-attn==2.7.4 (repeatable)");
  cmd->add_option("--python-version", options->python_version, "What-if: the Python version, like 3.12");
  cmd->add_option("--container", options->extras.container,
                  "What-if: would this NGC image (nvcr.io/nvidia/pytorch:YY.MM-py3) run on these GPUs and driver?");
  cmd->add_flag("--run", options->extras.run,
                "Also launch a kernel from torch and each CUDA extension on every GPU, and compare with the verdicts");
  cmd->add_flag("--check-index", options->check_index,
                "Ask the package index each wheel fix names (your mirror, else upstream) whether it has the wheel for "
                "this Python and platform; a hole moves the fix to the next candidate");
  cmd->add_flag("--fix", options->fix,
                "Apply the first fix to the environment, diagnose again, roll back if not clean (torchfix fix)");
  cmd->add_flag("-y,--yes", options->yes, "With --fix: apply without asking");
  cmd->callback([options, &ctx, cmd] {
    options->timeout_given = cmd->count("--timeout") > 0;
    if (options->fix) {
      FixOptions fix;
      fix.pythons = options->pythons;
      fix.gpus = options->what_if.gpus;
      fix.driver = options->driver;
      fix.confirm = options->yes ? Confirm::yes : Confirm::ask;
      fix.timeout_s = options->timeout_s;
      ctx.exit_code = run_fix(fix, ctx);
      return;
    }
    ctx.exit_code = run_doctor(*options, ctx);
  });
}

}  // namespace torchfix::cli
