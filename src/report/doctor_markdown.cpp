#include "report/doctor_markdown.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <string_view>

#include "core/base/text.hpp"
#include "report/doctor_report.hpp"
#include "report/redact.hpp"

namespace torchfix {
namespace {

std::string severity_mark(Severity severity) {
  switch (severity) {
    case Severity::ok:
      return "✓";
    case Severity::note:
      return "•";
    case Severity::warning:
      return "!";
    case Severity::problem:
      return "✗";
  }
  return " ";
}

// Table cells: a '|' would end the cell, a newline the row.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

// The GPUs as the Situation groups them ("GPUs 0-7 (8x NVIDIA B200, 10.0)"),
// then those whose capability nobody knows.
std::string gpu_cell(const Situation& x) {
  std::string gpus;
  for (const GpuGroup& g : x.gpu_groups) gpus += fmt::format("{}{}", gpus.empty() ? "" : "; ", cell(g.label()));
  for (const Gpu& g : x.snapshot->gpus) {
    if (!g.cc) gpus += fmt::format("{}GPU {} ({}, cc unknown)", gpus.empty() ? "" : "; ", g.index, cell(g.name));
  }
  return gpus.empty() ? "none found" : gpus;
}

// The facts the verdicts read, as the Situation has them (platform, the
// driver in its platform's numbering and the CUDA it supports, the GPUs).
std::string facts_table(const Situation& x) {
  const Snapshot& s = *x.snapshot;
  std::string out = "| | |\n|---|---|\n";
  out += fmt::format("| torchfix | {}{} |\n", cell(s.torchfix_version), s.what_if ? " (what-if values given)" : "");
  out += fmt::format("| platform | {} ({}{}{}) |\n", to_string(x.platform), cell(s.platform.os),
                     s.platform.container ? ", container" : "", x.l4t ? ", L4T " + x.l4t->release.str() : "");
  const bool none = !x.driver.version && !x.driver.cuda;
  out += fmt::format("| driver | {}{} |\n", none ? "none found" : cell(x.driver.text()),
                     x.driver.version && x.driver.cuda ? " (CUDA " + x.driver.cuda->major_minor() + ")" : "");
  out += fmt::format("| GPUs | {} |\n", gpu_cell(x));
  std::string toolkits;
  for (const Toolkit& t : s.toolkits) {
    toolkits +=
        fmt::format("{}nvcc {} ({})", toolkits.empty() ? "" : "; ", t.version ? t.version->str() : "?", cell(t.nvcc));
  }
  out += fmt::format("| CUDA toolkits | {} |\n", toolkits.empty() ? "none found" : toolkits);
  for (const PythonEnv& p : s.pythons) {
    out += fmt::format("| Python {} | {}{} |\n", cell(p.interpreter),
                       p.torch ? "torch " + cell(p.torch->version) : std::string("no torch"),
                       p.python_version ? " (Python " + cell(*p.python_version) + ")" : "");
  }
  return out;
}

// One line of the block: a newline inside a GPU name, path or version would
// forge a line of its own (the block is printed with its newlines kept).
std::string one_line(std::string text) {
  std::ranges::replace(text, '\n', ' ');
  std::ranges::replace(text, '\r', ' ');
  return text;
}

std::string findings(const Diagnosis& d) {
  std::string out;
  for (const Finding& f : d.findings) {
    if (f.severity != Severity::problem && f.severity != Severity::warning) continue;
    out += fmt::format("- [{}] {}\n", severity_mark(f.severity), one_line(f.title));
    for (std::size_t i = 0; i < f.details.size() && i < 2; ++i) out += fmt::format("  - {}\n", one_line(f.details[i]));
    for (const Fix& fix : f.fixes) {
      out += fmt::format("  - fix: {}\n", one_line(fix.summary));
      if (fix.commands.empty() && fix.file_lines.empty()) continue;
      out += "    ```\n";
      for (const std::string& c : fix.commands) out += fmt::format("    {}\n", one_line(c));
      for (const std::string& l : fix.file_lines) out += fmt::format("    {}\n", one_line(l));
      out += "    ```\n";
    }
  }
  return out;
}

// Replaces `home` where it is a whole path prefix ("/root/x", not "/rootfs").
std::string without_home(std::string text, const std::string& home) {
  for (std::size_t at = text.find(home); at != std::string::npos; at = text.find(home, at + 1)) {
    const std::size_t end = at + home.size();
    const bool whole = end == text.size() || std::string_view("/ )`|\n:;,").find(text[end]) != std::string_view::npos;
    const bool starts = at == 0 || std::string_view(" (`|\n:=\"'").find(text[at - 1]) != std::string_view::npos;
    if (whole && starts) text.replace(at, home.size(), "~");
  }
  return text;
}

}  // namespace

std::string doctor_markdown(const Situation& situation, const Diagnosis& diagnosis, const std::string& home) {
  const int problems = diagnosis.count(Severity::problem);
  const int warnings = diagnosis.count(Severity::warning);
  std::string out = fmt::format("### torchfix doctor: {} problem{}, {} warning{}\n\n", problems,
                                problems == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s");
  out += facts_table(situation);
  const std::string listed = findings(diagnosis);
  out += listed.empty() ? "\nNo problems or warnings.\n" : "\n" + listed;
  if (const Finding* first = first_fix(diagnosis)) {
    const FirstStep step = first_step(first->fixes.front());
    out += step.run ? fmt::format("\nRun first: `{}` ({})\n", one_line(step.text), first_fix_reason(*first))
                    : fmt::format("\nDo first: {} ({})\n", one_line(step.text), first_fix_reason(*first));
  }
  out += "\n<sub>`torchfix doctor --markdown`: home folder shown as ~, credentials removed.</sub>\n";
  // The home folder names the user; "/home/alice" in any path becomes "~".
  if (home.size() > 1) out = without_home(out, home);
  return redact_credentials(out);
}

}  // namespace torchfix
