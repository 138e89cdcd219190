// torchfix fix: show the plan of the doctor's first fix, ask, record what is
// installed, run the install steps with the environment's installer,
// diagnose again from a fresh probe (and launch kernels where a GPU exists),
// and restore the recorded set when the result is not clean.

#include "cli/fix.hpp"

#include <unistd.h>

#include <iostream>

#include "cli/app.hpp"
#include "cli/doctor_extras.hpp"
#include "cli/index_check.hpp"
#include "cli/machine.hpp"
#include "cli/tables.hpp"
#include "core/diagnosis/conda_plan.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/diagnosis/fix_plan.hpp"
#include "core/resolver/wheel_index.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/what_if.hpp"
#include "probe/installer_probe.hpp"
#include "probe/snapshot_probe.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

struct Judged {
  Snapshot snapshot;
  Diagnosis diagnosis;
};

// Probes (only `pythons`, when given), applies the what-if, diagnoses.
Expected<Judged> judge(const FixOptions& o, const std::vector<std::string>& pythons, const Knowledge& knowledge,
                       Context& ctx) {
  ProbeOptions probe;
  probe.python.interpreters = pythons;
  probe.binaries = BinaryScan::run;
  probe.timeout = std::chrono::milliseconds(static_cast<long>(o.timeout_s * 1000));
  probe.python.timeout = probe.timeout;
  Judged j{probe_machine(probe, ctx.env, *ctx.runner, knowledge), {}};
  if (interrupt_signal() != 0) return fail("interrupted");
  WhatIf what_if;
  what_if.gpus = o.gpus;
  if (!o.driver.empty()) what_if.driver = o.driver;
  if (auto applied = apply_what_if(j.snapshot, what_if, knowledge); !applied) return std::unexpected(applied.error());
  j.diagnosis = diagnose(j.snapshot, knowledge);
  return j;
}

// The environment's problems: findings about it (or a kernel launch in it) that will fail.
std::vector<std::string> problems_of(const Diagnosis& d, const std::string& interpreter) {
  std::vector<std::string> out;
  for (const Finding& f : d.findings) {
    if (f.severity == Severity::problem && f.python == interpreter) out.push_back(f.title);
  }
  return out;
}

const RemedyReport* first_fix(const Judged& j) {
  for (const RemedyReport& r : j.diagnosis.remedies) {
    if (r.python && !r.fixes.empty() && !problems_of(j.diagnosis, j.snapshot.pythons[*r.python].interpreter).empty())
      return &r;
  }
  return nullptr;
}

void print_plan(const FixPlan& plan, const InstallTarget& target, std::optional<CondaRoute> conda, Printer& out) {
  const std::string installer(to_string(target.installer));
  out.line("torchfix fix: " + target.interpreter + " (installs with " +
           (!conda                              ? installer
            : *conda == CondaRoute::conda_build ? std::string("conda: conda owns its torch")
                                                : installer + ", after conda removes its torch") +
           ")");
  out.line("  plan: " + plan.summary);
  for (const std::string& line : plan.changes) out.line("  changes: " + line);
  if (!plan.commands.empty()) out.line("  runs, in order:");
  for (const PlannedCommand& c : plan.commands) {
    out.line("    " + c.shown);
    if (!c.note.empty()) out.line("      (" + c.note + ")");
    if (!c.index_check.empty()) out.line("      (index: " + c.index_check + ")");
  }
  for (const std::string& line : plan.shown_only) out.line("  shown only, never run by torchfix: " + line);
  for (const std::string& line : plan.leaves_behind) out.line("  leaves behind: " + line);
}

bool confirmed(const FixOptions& o, Context& ctx) {
  if (o.confirm == Confirm::yes) return true;
  ctx.out->line("Apply this fix? [y/N]");
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  return answer == "y" || answer == "Y" || answer == "yes";
}

struct Recorded {
  std::map<std::string, std::string> packages;
  fs::path file;
};

Expected<std::map<std::string, std::string>> freeze(const InstallTarget& target, Context& ctx) {
  PlannedCommand c;
  c.argv = freeze_argv(target);
  TF_TRY(r, run_planned(c, ctx.env, *ctx.runner, std::chrono::seconds(120)));
  if (!r.succeeded()) return fail("`" + c.argv.front() + " ... freeze` failed: " + r.err);
  return parse_freeze(r.out);
}

Expected<Recorded> record(const fs::path& prefix, const InstallTarget& target, Context& ctx) {
  TF_TRY(packages, freeze(target, ctx));
  std::string text;
  for (const auto& [name, line] : packages) text += line + "\n";
  const fs::path dir = prefix / ".torchfix";
  std::error_code ec;
  fs::create_directories(dir, ec);
  const fs::path file = dir / "fix-before.txt";
  constexpr fs::perms mode =
      fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  if (auto written = util::write_file_atomically(file, text, mode); !written) return std::unexpected(written.error());
  return Recorded{std::move(packages), file};
}

// Runs `commands`; returns the first that failed (its line and the tail of its output), or nullopt.
std::optional<std::string> run_all(const std::vector<PlannedCommand>& commands, std::chrono::milliseconds timeout,
                                   Context& ctx) {
  for (std::size_t i = 0; i < commands.size(); ++i) {
    ctx.out->line("[" + std::to_string(i + 1) + "/" + std::to_string(commands.size()) + "] " + commands[i].shown);
    auto r = run_planned(commands[i], ctx.env, *ctx.runner, timeout);
    if (!r) return commands[i].shown + ": " + r.error().message;
    if (r->succeeded()) continue;
    std::string tail = r->err.size() > 2000 ? r->err.substr(r->err.size() - 2000) : r->err;
    const std::string how = r->interrupted ? "interrupted" : r->timed_out ? "timed out" : "failed";
    return commands[i].shown + " " + how + (tail.empty() ? "" : ":\n" + tail);
  }
  return std::nullopt;
}

// Brings the environment back to `recorded`; returns whether it now matches.
bool restore(const Recorded& recorded, const InstallTarget& target, Context& ctx) {
  clear_interrupt();  // the restore must run even after Ctrl-C
  auto now = freeze(target, ctx);
  if (!now) {
    ctx.out->line("restore: " + now.error().message + "; the recorded set is in " + recorded.file.string());
    return false;
  }
  const auto commands = restore_commands(recorded.packages, *now, target);
  if (commands.empty()) {
    ctx.out->line("restore: nothing had changed; the environment is as recorded (" + recorded.file.string() + ")");
    return true;
  }
  ctx.out->line("restoring the recorded set (" + recorded.file.string() + "):");
  if (auto failed = run_all(commands, std::chrono::minutes(30), ctx)) ctx.out->line("restore: " + *failed);
  clear_interrupt();
  auto after = freeze(target, ctx);
  const auto differ = after ? freeze_differences(recorded.packages, *after) : std::vector<std::string>{"(freeze)"};
  if (differ.empty()) {
    ctx.out->line("restored: the environment holds exactly the recorded set again");
    return true;
  }
  std::string names;
  for (const std::string& n : differ) names += " " + n;
  ctx.out->line("restore incomplete: still different:" + names + "; the recorded set is in " + recorded.file.string());
  return false;
}

// The re-diagnosis from a fresh probe, and a kernel launch where a GPU exists.
Expected<std::vector<std::string>> prove(const FixOptions& o, const std::string& py, const Knowledge& knowledge,
                                         Context& ctx) {
  ctx.out->line("diagnosing again from a fresh probe...");
  TF_TRY(j, judge(o, {py}, knowledge, ctx));
  if (!j.snapshot.what_if && !j.snapshot.gpus.empty()) {
    DoctorExtras extras;
    extras.run = true;
    extras.timeout_s = o.timeout_s;
    if (auto added = add_doctor_extras(j.diagnosis, situate(j.snapshot, knowledge), knowledge, extras, ctx); !added)
      return std::unexpected(added.error());
  } else {
    ctx.out->line("  no kernel launch: " +
                  std::string(j.snapshot.what_if ? "the GPUs are a what-if" : "this machine has no GPU"));
  }
  for (const Finding& f : j.diagnosis.findings) {
    if (f.python == py && f.severity == Severity::ok) ctx.out->line("  [ok] " + f.title);
  }
  return problems_of(j.diagnosis, py);
}

struct Target {
  std::string interpreter;
  FixPlan plan;
  EnvInstaller where;               // probed: the prefix, the installer, the indexes
  InstallTarget install;            // the Situation's interpreter and shell with what was probed
  std::optional<CondaRoute> conda;  // conda owns its torch: how the plan reaches it; nullopt: pip or uv own it
};

// The environment the doctor judged and its plan; nullopt (with a line) when there is nothing to do.
Expected<std::optional<Target>> target(const FixOptions& o, const Knowledge& knowledge, Context& ctx, int& exit_code) {
  TF_TRY(j, judge(o, o.pythons, knowledge, ctx));
  if (o.index == IndexCheck::online)
    check_indexes(j.snapshot, j.diagnosis, knowledge,
                  std::chrono::milliseconds(static_cast<long>(o.index_timeout_s * 1000)), ctx);
  const RemedyReport* report = first_fix(j);
  if (!report) {
    exit_code = j.diagnosis.exit_code();
    ctx.out->line(exit_code == 0 ? "torchfix fix: nothing to fix; the doctor finds no problem"
                                 : "torchfix fix: the doctor finds problems but no fix for a Python environment "
                                   "(run `torchfix doctor` for the advice)");
    return std::optional<Target>();
  }
  Target t;
  t.interpreter = j.snapshot.pythons[*report->python].interpreter;
  t.where = probe_env_installer(t.interpreter, ctx.env);
  const Situation x = situate(j.snapshot, knowledge);
  t.install = install_target(x, *report->python, t.where.installer, t.where.uv, t.where.config);
  const std::vector<std::string> none;
  t.plan = plan_fix(report->fixes.front(), report->warnings_after.empty() ? none : report->warnings_after.front(), x,
                    *report->python, t.install);
  if (auto owner = conda_torch(j.snapshot.pythons[*report->python]); owner && !t.plan.refused)
    t.conda = plan_for_conda(t.plan, report->fixes.front(), *owner, t.where.conda, knowledge.conda_torch, x.shell);
  return std::optional<Target>(std::move(t));
}

int finish(const std::vector<std::string>& problems, const Recorded& recorded, const Target& t, Context& ctx) {
  if (problems.empty()) {
    ctx.out->line("fixed: the doctor finds no problem in " + t.interpreter + " (before: " + recorded.file.string() +
                  ")");
    ctx.out->line("guard it: torchfix env --guard --python " + t.interpreter +
                  " pins this torch, so that a later install cannot replace it");
    return k_exit_ok;
  }
  ctx.out->line("not fixed: the re-diagnosis still finds:");
  for (const std::string& p : problems) ctx.out->line("  [problem] " + p);
  restore(recorded, t.install, ctx);
  return k_exit_problem;
}

int apply(const FixOptions& o, const Target& t, const Knowledge& knowledge, Context& ctx) {
  std::error_code ec;
  fs::create_directories(t.where.prefix / ".torchfix", ec);
  auto lock = util::try_lock_file(t.where.prefix / ".torchfix" / "fix.lock");
  if (!lock) return ctx.err->line("torchfix fix: " + lock.error().message), k_exit_tool_failure;
  if (!*lock) {
    ctx.err->line("torchfix fix: another torchfix fix is running on " + t.where.prefix.string() +
                  "; wait for it to finish");
    return k_exit_tool_failure;
  }
  // From here a signal is recorded, not fatal: the environment is restored first.
  InterruptDeferral deferral;
  auto recorded = record(t.where.prefix, t.install, ctx);
  if (!recorded) return ctx.err->line("torchfix fix: " + recorded.error().message), k_exit_tool_failure;
  ctx.out->line("recorded " + std::to_string(recorded->packages.size()) + " packages in " + recorded->file.string());
  const auto timeout = std::chrono::milliseconds(static_cast<long>(o.install_timeout_s * 1000));
  if (auto failed = run_all(t.plan.commands, timeout, ctx)) {
    const int sig = interrupt_signal();
    ctx.out->line("not fixed: " + *failed);
    const bool back = restore(*recorded, t.install, ctx);
    if (sig != 0) {
      ctx.out->line(std::string("interrupted: the environment holds ") + (back ? "the old set" : "a changed set") +
                    " (" + recorded->file.string() + ")");
      return 128 + sig;
    }
    return k_exit_problem;
  }
  auto problems = prove(o, t.interpreter, knowledge, ctx);
  if (const int sig = interrupt_signal(); sig != 0 || !problems) {
    ctx.out->line("not proven: " + (problems ? std::string("interrupted") : problems.error().message));
    const bool back = restore(*recorded, t.install, ctx);
    ctx.out->line(std::string("the environment holds ") + (back ? "the old set" : "a changed set"));
    return sig != 0 ? 128 + sig : k_exit_problem;
  }
  return finish(*problems, *recorded, t, ctx);
}

// A torch that conda owns: the plan is shown, and what a run would record;
// applying it is refused with one line (no conda program; or conda's own
// record and rollback, which torchfix does not run yet).
int conda_dry_run_or_refusal(const FixOptions& o, const Target& t, const std::string& freeze_line, Context& ctx) {
  const CondaTarget& conda = t.where.conda;
  const std::string record = conda.conda.empty() ? "the conda-meta records of " + conda.prefix
                                                 : "`" + command_line(t.install.shell, conda_record_argv(conda)) + "`";
  if (o.run == FixRun::dry_run) {
    ctx.out->line("dry run: would record " + record + " and `" + freeze_line + "` in " +
                  (t.where.prefix / ".torchfix").string() + ", run the commands above, diagnose again");
    return k_exit_ok;
  }
  ctx.out->line(conda.conda.empty()
                    ? "torchfix fix: no conda program found (CONDA_EXE, conda on PATH), so torchfix does not run "
                      "these commands; run them where conda works"
                    : "torchfix fix: torchfix does not yet apply conda fixes (record and roll back with " + record +
                          "); run the commands above yourself");
  return k_exit_problem;
}

}  // namespace

int run_fix(const FixOptions& o, Context& ctx) {
  auto inputs = load_inputs(ctx);
  if (!inputs) return ctx.err->line("torchfix fix: " + inputs.error().message), k_exit_tool_failure;
  const Knowledge& knowledge = inputs->knowledge;
  for (const std::string& python : o.pythons) {
    if (auto checked = check_python_option(python, ctx.env); !checked)
      return ctx.err->line("torchfix fix: " + checked.error().message), k_exit_tool_failure;
  }
  int exit_code = k_exit_ok;
  auto t = target(o, knowledge, ctx, exit_code);
  if (!t) return ctx.err->line("torchfix fix: " + t.error().message), k_exit_tool_failure;
  if (!*t) return exit_code;
  if (auto missing = missing_installer((*t)->where))
    return ctx.err->line("torchfix fix: " + *missing), k_exit_tool_failure;
  print_plan((*t)->plan, (*t)->install, (*t)->conda, *ctx.out);
  if ((*t)->plan.refused) {
    ctx.out->line("torchfix fix: " + *(*t)->plan.refused);
    return k_exit_problem;
  }
  const std::string freeze_line = command_line((*t)->install.shell, freeze_argv((*t)->install));
  if ((*t)->conda) return conda_dry_run_or_refusal(o, **t, freeze_line, ctx);
  if (o.run == FixRun::dry_run) {
    ctx.out->line("dry run: would record `" + freeze_line + "` in " + ((*t)->where.prefix / ".torchfix").string() +
                  ", run the commands above, diagnose again, and restore the record if the result is not clean");
    return k_exit_ok;
  }
  if (o.confirm == Confirm::ask && !::isatty(STDIN_FILENO)) {
    ctx.err->line("torchfix fix: no terminal to ask on; pass --yes to apply the fix, or --dry-run to see it");
    return k_exit_tool_failure;
  }
  if (!confirmed(o, ctx)) {
    ctx.out->line("torchfix fix: nothing changed");
    return k_exit_problem;
  }
  return apply(o, **t, knowledge, ctx);
}

void add_fix(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<FixOptions>();
  auto yes = std::make_shared<bool>(false);
  auto dry = std::make_shared<bool>(false);
  auto offline = std::make_shared<bool>(false);
  auto* cmd =
      app.add_subcommand("fix", "Apply the doctor's first fix to a Python environment, prove it, roll back if not");
  cmd->add_option("--python", o->pythons, "Python interpreter whose environment to fix (default: the doctor's)");
  cmd->add_option("--gpu", o->gpus, "What-if: a GPU (name, sm_120 or 12.0) instead of the probed ones (repeatable)");
  cmd->add_option("--driver", o->driver, "What-if: a driver version or the CUDA it supports");
  cmd->add_flag("-y,--yes", *yes, "Apply without asking");
  cmd->add_flag("--dry-run", *dry, "Print exactly what would run, change nothing");
  cmd->add_flag("--offline", *offline,
                "Do not ask the package index whether the wheel exists for this Python (the tables decide)");
  cmd->add_option("--timeout", o->timeout_s, "Seconds each probe may take (default 10)")->check(seconds_check());
  cmd->callback([o, yes, dry, offline, &ctx] {
    o->index = *offline ? IndexCheck::offline : IndexCheck::online;
    o->confirm = *yes ? Confirm::yes : Confirm::ask;
    o->run = *dry ? FixRun::dry_run : FixRun::apply;
    ctx.exit_code = run_fix(*o, ctx);
  });
}

}  // namespace torchfix::cli
