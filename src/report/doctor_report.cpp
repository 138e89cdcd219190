#include "report/doctor_report.hpp"

#include "core/base/text.hpp"
#include "core/resolver/wheel_index.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

// ASCII marks where the locale is not UTF-8 (LC_ALL=C), which would show
// the UTF-8 ones as mojibake.
std::string mark(Severity severity, const Printer& out) {
  switch (severity) {
    case Severity::ok:
      return out.paint(out.symbol("[✓]", "[ok]"), Colour::green);
    case Severity::note:
      return out.paint(out.symbol("[•]", "[-]"), Colour::dim);
    case Severity::warning:
      return out.paint("[!]", Colour::yellow);
    case Severity::problem:
      return out.paint(out.symbol("[✗]", "[x]"), Colour::red);
  }
  return "[ ]";
}

// `pages`: the torch pages asked for the finding's environment (doctor
// --check-index), whose answer is said under each install from them.
void print_finding(const Finding& f, Printer& out, Detail detail, const std::vector<IndexPage>& pages = {}) {
  out.line(fmt::format("  {} {}", mark(f.severity, out), f.title));
  if (detail == Detail::verbose || f.severity == Severity::problem || f.severity == Severity::warning) {
    // Problems and warnings always explain themselves; oks only under -v.
    const bool all = detail == Detail::verbose;
    for (std::size_t i = 0; i < f.details.size(); ++i) {
      if (!all && i >= 2) break;
      out.line(fmt::format("      {}", f.details[i]));
    }
  }
  for (const Fix& fix : f.fixes) {
    out.line(fmt::format("      {} {}", out.paint("fix:", Colour::bold), fix.summary));
    for (const std::string& command : fix.commands) out.line(fmt::format("        $ {}", command));
    for (const std::string& line : fix.file_lines) out.line(fmt::format("        {}: {}", fix.file, line));
    for (const FixStep& step : fix.steps) {
      if (const std::string note = index_note(step, pages); !note.empty())
        out.line(fmt::format("          (index: {})", note));
    }
  }
}

// Where the interpreter was found, as the user would name it: " (the active
// venv)", " (python3 on PATH)"; "" for one the snapshot does not list.
std::string python_origin(const Snapshot& snapshot, const std::string& interpreter) {
  for (const PythonEnv& py : snapshot.pythons) {
    if (py.interpreter != interpreter) continue;
    if (py.origin == "VIRTUAL_ENV") return " (the active venv, VIRTUAL_ENV)";
    if (py.origin == "CONDA_PREFIX") return " (the active conda env, CONDA_PREFIX)";
    if (py.origin == "torchfix's venv") return " (the venv torchfix is installed in)";
    if (py.origin == "PATH") return " (first on PATH)";
    if (py.origin == "--python") return " (--python)";
    if (py.origin == "system") return " (the system Python)";
    return py.origin.empty() ? "" : " (" + py.origin + ")";
  }
  return {};
}

std::string plural(int n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// The order in which fixes take effect: nothing runs without a GPU and
// driver; torch's wheel carries its own CUDA libraries, so fixing torch makes
// PyTorch run, while the toolkit and the host compiler matter only for
// building extensions, which then build against the fixed torch.
int fix_rank(Section section) {
  switch (section) {
    case Section::gpus:
      return 0;
    case Section::python:
      return 1;
    case Section::toolkits:
      return 2;
    case Section::compilers:
      return 3;
  }
  return 4;
}

}  // namespace

std::string first_fix_reason(const Finding& first) {
  switch (first.section) {
    case Section::gpus:
      return "nothing CUDA runs until the GPU and its driver do";
    case Section::python:
      if (first.id == "torch.import") {
        return "`import torch` fails until this is done: every other check and fix assumes torch loads";
      }
      // Findings are ordered torch first: a package's problem comes first only where torch has none.
      if (first.id == "package.companion-build") {
        return "torch has nothing to fix first: this builds " + first.package + "'s ops against it";
      }
      if (first.id == "package.runtime-build") {
        return first.package + " compiles its ops at run time with CUDA_HOME's nvcc, whose CUDA major must be torch's";
      }
      if (!first.package.empty() && first.package != "torch") {
        return "torch has nothing to fix first: this makes " + first.package +
               " run; a toolkit matters only where it must be built";
      }
      return "torch's wheel brings its own CUDA libraries: this makes PyTorch run; a toolkit fix matters only for "
             "building extensions, which build against this torch";
    case Section::toolkits:
      return "extensions build with this toolkit; torch itself needs none";
    case Section::compilers:
      return "nvcc needs a host compiler it supports to build extensions";
  }
  return "";
}

FirstStep first_step(const Fix& fix) {
  if (fix.commands.empty()) {
    const std::size_t more = fix.file_lines.size() - 1;
    return {false,
            "in the " + fix.file + " the image is built from: " + fix.file_lines.front() +
                (more == 0 ? "" : fmt::format(" (and the {} line{} after it above)", more, more == 1 ? "" : "s")) +
                "; then rebuild the image"};
  }
  const std::string& command = fix.commands.front();
  // A step torchfix can only describe (a rebuild from a source it does not
  // know) is shown as what to do first, never as a command to run.
  if (command.starts_with("#")) return {false, std::string(trim(std::string_view(command).substr(1)))};
  return {true, command};
}

const Finding* first_fix(const Diagnosis& diagnosis) {
  const Finding* first = nullptr;
  for (const Finding& f : diagnosis.findings) {
    if (f.severity != Severity::problem || f.fixes.empty() || f.fixes.front().role == FixRole::diagnose) continue;
    if (f.fixes.front().commands.empty() && f.fixes.front().file_lines.empty()) continue;
    if (!first || fix_rank(f.section) < fix_rank(first->section)) first = &f;
  }
  return first;
}

namespace {

// Ends the summary with the one command to run first, and why (the
// sections print in a fixed order, which is not the order of fixing).
void print_first_fix(const Diagnosis& diagnosis, Printer& out) {
  const Finding* first = first_fix(diagnosis);
  if (!first) return;
  const FirstStep step = first_step(first->fixes.front());
  out.line(fmt::format("{}: {}", step.run ? "Run first" : "Do first", step.text));
  out.line(fmt::format("  why first: {}", first_fix_reason(*first)));
}

}  // namespace

void print_doctor(const Snapshot& snapshot, const Diagnosis& diagnosis, Printer& out, Detail detail) {
  out.line(fmt::format("torchfix doctor {}{}", snapshot.torchfix_version,
                       snapshot.what_if ? " (what-if: some values given on the command line)" : ""));
  const std::pair<Section, const char*> sections[] = {
      {Section::gpus, "GPUs and driver"}, {Section::toolkits, "CUDA toolkits"}, {Section::compilers, "Host compilers"}};
  for (const auto& [section, name] : sections) {
    out.line(out.paint(name, Colour::bold));
    for (const Finding& f : diagnosis.findings) {
      if (f.section == section) print_finding(f, out, detail);
    }
  }
  std::vector<std::string> interpreters;
  for (const Finding& f : diagnosis.findings) {
    if (f.section == Section::python && std::ranges::find(interpreters, f.python) == interpreters.end()) {
      interpreters.push_back(f.python);
    }
  }
  if (interpreters.empty()) {
    out.line(out.paint("Python", Colour::bold));
    out.line(fmt::format("  {} No Python environment found (give one with --python PATH)", mark(Severity::note, out)));
  }
  for (const std::string& python : interpreters) {
    out.line(out.paint("Python " + python + python_origin(snapshot, python), Colour::bold));
    const auto env = std::ranges::find(snapshot.pythons, python, &PythonEnv::interpreter);
    const std::vector<IndexPage> none;
    const std::vector<IndexPage>& pages = env == snapshot.pythons.end() ? none : env->index_pages;
    for (const Finding& f : diagnosis.findings) {
      if (f.section == Section::python && f.python == python) print_finding(f, out, detail, pages);
    }
  }
  if (!interpreters.empty() && !snapshot.what_if) {
    out.line("To judge another Python environment: torchfix doctor --python PATH");
  }
  if (detail == Detail::verbose) {
    // How the fixes were chosen: each remedy above was applied to this
    // snapshot and diagnosed again; here are the candidates that lost, and why.
    for (const RemedyReport& r : diagnosis.remedies) {
      const std::string scope = r.python && *r.python < snapshot.pythons.size()
                                    ? snapshot.pythons[*r.python].interpreter
                                    : std::string("this machine");
      out.line(out.paint("Fixes considered for " + scope, Colour::bold));
      for (const Remedy& w : r.resolution.winners) {
        out.line(fmt::format("  {} {} (checked: applied and diagnosed again, no problem left)", mark(Severity::ok, out),
                             w.label()));
      }
      for (const Rejected& lost : r.resolution.rejected) {
        out.line(fmt::format("  {} {}: {}", mark(Severity::note, out), lost.candidate,
                             lost.reasons.empty() ? std::string("rejected") : lost.reasons.front()));
        for (std::size_t i = 1; i < lost.reasons.size(); ++i) out.line(fmt::format("      {}", lost.reasons[i]));
      }
    }
  }
  if (detail == Detail::verbose && !snapshot.notes.empty()) {
    out.line(out.paint("Probes that could not answer", Colour::bold));
    for (const ProbeNote& n : snapshot.notes) out.line(fmt::format("  {}: {}", n.probe, n.message));
  }
  const int problems = diagnosis.count(Severity::problem);
  const int warnings = diagnosis.count(Severity::warning);
  out.line("");
  const std::vector<const Finding*> unchecked = diagnosis.unchecked();
  if (problems == 0 && warnings == 0 && unchecked.empty()) {
    out.line(out.paint("No issues found.", Colour::green));
  } else if (problems == 0 && warnings == 0) {
    // Not an all-clear: what was checked is fine, the rest is named.
    out.line(fmt::format("No problem found in what could be checked, but {} could not be:",
                         plural(static_cast<int>(unchecked.size()), "thing")));
  } else {
    out.line(fmt::format("{} found {} and {}{}", "Doctor", plural(problems, "problem"), plural(warnings, "warning"),
                         unchecked.empty() ? "."
                                           : fmt::format("; {} could not be checked:",
                                                         plural(static_cast<int>(unchecked.size()), "thing"))));
  }
  for (const Finding* f : unchecked) out.line(fmt::format("  {}", f->title));
  if (problems > 0 || warnings > 0) print_first_fix(diagnosis, out);
  if (detail != Detail::verbose)
    out.line("Run torchfix doctor -v for details, --json for the machine-readable report.");
}

nlohmann::json finding_json(const Finding& f) {
  nlohmann::json fixes = nlohmann::json::array();
  for (const Fix& fix : f.fixes) {
    nlohmann::json one = {{"summary", fix.summary}, {"commands", fix.commands}};
    if (!fix.file_lines.empty()) one["file"] = {{"name", fix.file}, {"lines", fix.file_lines}};
    fixes.push_back(std::move(one));
  }
  return {
      {"id", f.id},
      {"severity", to_string(f.severity)},
      {"section", to_string(f.section)},
      {"title", f.title},
      {"details", f.details},
      {"fixes", fixes},
      {"gpu", f.gpu ? nlohmann::json(*f.gpu) : nlohmann::json(nullptr)},
      {"gpus", f.gpus},
      {"python", f.python.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.python)},
      {"package", f.package.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.package)},
      {"reach", f.reach ? nlohmann::json(to_string(*f.reach)) : nlohmann::json(nullptr)},
  };
}

nlohmann::json situation_json(const Situation& x) {
  auto version = [](const std::optional<Version>& v) { return v ? nlohmann::json(v->str()) : nlohmann::json(nullptr); };
  nlohmann::json groups = nlohmann::json::array();
  for (const GpuGroup& g : x.gpu_groups) {
    groups.push_back({{"name", g.name},
                      {"compute_capability", g.cc.str()},
                      {"indices", g.indices},
                      {"count", g.indices.size()},
                      {"label", g.label()}});
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (ComputeCapability cc : x.gpus) gpus.push_back(cc.str());
  const DriverState& d = x.driver;
  return {
      {"platform", to_string(x.platform)},
      {"wheel_platform", x.wheel_platform},
      {"l4t",
       x.l4t ? nlohmann::json(
                   {{"release", x.l4t->release.str()}, {"jetpack", x.l4t->jetpack.str()}, {"cuda", x.l4t->cuda.str()}})
             : nlohmann::json(nullptr)},
      {"driver",
       {{"version", version(d.version)},
        {"branch", d.branch() ? nlohmann::json("R" + std::to_string(*d.branch())) : nlohmann::json(nullptr)},
        {"given", d.given == DriverGiven::branch ? "branch" : "version"},
        {"cuda", d.cuda ? nlohmann::json(d.cuda->major_minor()) : nlohmann::json(nullptr)},
        {"cuda_source", d.cuda_source}}},
      {"gpus", gpus},
      {"gpu_groups", groups},
      {"current_toolkit", x.current_toolkit ? nlohmann::json(x.current_toolkit->nvcc) : nlohmann::json(nullptr)},
      {"arch_list", x.toolchain.arch.empty() ? nlohmann::json(nullptr)
                                             : nlohmann::json(render(x.toolchain.arch, ArchFormat::torch))},
  };
}

nlohmann::json doctor_json(const Snapshot& snapshot, const Diagnosis& diagnosis) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : diagnosis.findings) findings.push_back(finding_json(f));
  nlohmann::json remedies = nlohmann::json::array();
  for (const RemedyReport& r : diagnosis.remedies) {
    nlohmann::json winners = nlohmann::json::array();
    for (std::size_t i = 0; i < r.resolution.winners.size(); ++i) {
      const Remedy& w = r.resolution.winners[i];
      nlohmann::json one = {{"kind", to_string(w.kind)},      {"label", w.label()},
                            {"changes", w.changes()},         {"reach", to_string(w.reach)},
                            {"minor_compat", w.minor_compat}, {"verified", true}};
      if (i < r.warnings_after.size()) one["warnings_after"] = r.warnings_after[i];
      if (i < r.fixes.size()) one["fix"] = {{"summary", r.fixes[i].summary}, {"commands", r.fixes[i].commands}};
      if (w.container) {
        const ContainerChange& c = *w.container;
        one["container"] = {
            {"image", c.image},
            {"run_line", c.run_line},
            {"torch", c.release->torch},
            {"cuda", c.release->cuda.str()},
            {"driver_needed", c.driver_needed ? nlohmann::json(c.driver_needed->str()) : nlohmann::json(nullptr)},
            {"compat", c.compat},
        };
      }
      winners.push_back(std::move(one));
    }
    nlohmann::json rejected = nlohmann::json::array();
    for (const Rejected& lost : r.resolution.rejected) {
      rejected.push_back({{"candidate", lost.candidate}, {"reasons", lost.reasons}});
    }
    const bool has_python = r.python && *r.python < snapshot.pythons.size();
    remedies.push_back({
        {"python", has_python ? nlohmann::json(snapshot.pythons[*r.python].interpreter) : nlohmann::json(nullptr)},
        {"winners", winners},
        {"rejected", rejected},
        {"no_software_fix",
         r.resolution.no_software_fix ? nlohmann::json(*r.resolution.no_software_fix) : nlohmann::json(nullptr)},
        {"no_fix", r.resolution.no_fix ? nlohmann::json(*r.resolution.no_fix) : nlohmann::json(nullptr)},
    });
  }
  return {
      {"schema_version", 1},
      {"torchfix_version", snapshot.torchfix_version},
      {"summary",
       {{"problems", diagnosis.count(Severity::problem)},
        {"warnings", diagnosis.count(Severity::warning)},
        {"notes", diagnosis.count(Severity::note)},
        {"unchecked", diagnosis.unchecked().size()},
        {"exit_code", diagnosis.exit_code()}}},
      {"findings", findings},
      {"remedies", remedies},
      {"snapshot", to_json(snapshot)},
  };
}

}  // namespace torchfix
