#pragma once
// The live status line of `torchfix build`: step, progress ([n/N] from
// ninja, else counted compiler invocations), elapsed time and ETA; plain
// lines when the printer is not a smart terminal (Printer::status decides).

#include <chrono>
#include <string>
#include <string_view>

#include "builder/execute.hpp"
#include "report/printer.hpp"

namespace torchfix::cli {

/// Returns "1m05s" or "2h03m" for a number of seconds.
std::string format_duration(double seconds);

/// Draws the live status line from a build's events (BuildObserver).
class StatusObserver final : public BuildObserver {
 public:
  // `expected_compiles`: compiler invocations a build without ninja's [n/N]
  // is counted toward (the project's source files; 0: unknown, no ETA).
  explicit StatusObserver(Printer& err, int expected_compiles = 0) : m_err(err), m_expected(expected_compiles) {}

  void fetch_progress(const FetchProgress& p) override {
    const auto now = std::chrono::steady_clock::now();
    if (now - m_last < std::chrono::milliseconds(250) && p.received_objects != p.total_objects) return;
    m_last = now;
    m_err.status("fetch " + p.repository + ": " + std::to_string(p.received_objects) + "/" +
                 std::to_string(p.total_objects) + " objects, " + format_bytes(p.received_bytes) + " at " +
                 format_bytes(static_cast<std::uint64_t>(p.bytes_per_second)) + "/s");
  }
  void step_started(const PlanStep& step, int index, int total, int jobs) override {
    m_step = "[" + std::to_string(index + 1) + "/" + std::to_string(total) + " " + step.name + ", " +
             std::to_string(jobs) + " jobs]";
    m_start = std::chrono::steady_clock::now();
    m_compiles = 0;
    m_err.line("step " + m_step + ": " + join_argv(step.argv));
  }
  // Progress from ninja's "[n/N]", else from counting compiler invocations
  // (pip/setuptools echo each one) against the project's source files.
  void output_line(const PlanStep& step, std::string_view line) override {
    if (!step.compiles) return;
    auto progress = parse_ninja_progress(line);
    std::string estimate;
    if (!progress && is_compiler_invocation(line)) {
      ++m_compiles;
      progress = std::pair{m_compiles, std::max(m_compiles, m_expected)};
      estimate = m_expected > 0 ? " compiles of ~" + std::to_string(m_expected) + " sources" : " compiles";
    }
    const auto now = std::chrono::steady_clock::now();
    if (!progress ||
        (m_err.smart() ? now - m_last < std::chrono::milliseconds(100) : now - m_last < std::chrono::seconds(30))) {
      return;
    }
    m_last = now;
    const double elapsed = std::chrono::duration<double>(now - m_start).count();
    std::string text = m_step + " [" + std::to_string(progress->first) + "/" + std::to_string(progress->second) + "]" +
                       estimate + " " + format_duration(elapsed);
    if (progress->first > 0 && elapsed > 5 && progress->second > progress->first) {
      text += ", ETA " + std::string(estimate.empty() ? "" : "~") +
              format_duration(elapsed / progress->first * (progress->second - progress->first));
    }
    m_err.status(text);
  }
  void retrying(const PlanStep& step, int from, int to, const BuildFailure& f) override {
    m_err.line(m_err.paint("out of memory", Colour::yellow) + " in " + step.name + " with " + std::to_string(from) +
               " jobs (" + f.evidence + "): retrying with " + std::to_string(to) + " jobs, resuming the build");
  }

 private:
  static std::string join_argv(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
    return out;
  }
  Printer& m_err;
  int m_expected = 0;
  int m_compiles = 0;
  std::string m_step;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point m_last{};
};

}  // namespace torchfix::cli
