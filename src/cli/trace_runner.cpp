#include "cli/trace_runner.hpp"

#include <fmt/format.h>

#include <string_view>
#include <vector>

#include "core/base/quote.hpp"

namespace torchfix::cli {
namespace {

constexpr std::size_t k_longest_argument = 120;  // the index script's text is an argument (python -c)
constexpr int k_lines_per_stream = 40;

std::string shown_command(const Command& c) {
  std::vector<std::string> argv = {c.program};
  for (const std::string& a : c.args) {
    argv.push_back(a.size() > k_longest_argument ? fmt::format("<{} bytes>", a.size()) : a);
  }
  return command_line(CommandShell::posix, argv);
}

std::string ending(const Expected<ProcessResult>& r) {
  if (!r) return "not started: " + r.error().message;
  const std::string how = r->timed_out     ? "timed out"
                          : r->interrupted ? "interrupted"
                          : r->overflowed  ? "killed: printed too much"
                          : r->signal      ? "killed by signal " + std::to_string(*r->signal)
                                           : "exit " + std::to_string(r->exit_code);
  return fmt::format("{:.3f} s, {}, {} bytes out, {} bytes err", r->seconds, how, r->out.size(), r->err.size());
}

void show_stream(Printer& err, std::string_view name, std::string_view text) {
  int shown = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    if (shown == k_lines_per_stream) {
      err.line(fmt::format("  | ({} more bytes of {})", text.size() - start, name));
      return;
    }
    err.line(fmt::format("  | {}: {}", name, text.substr(start, end - start)));
    ++shown;
    start = end + 1;
  }
}

}  // namespace

Expected<ProcessResult> TraceRunner::run(const Command& command) {
  if (m_ctx.verbosity < 2 || m_ctx.err == nullptr) return m_inner.run(command);
  auto result = m_inner.run(command);
  const std::lock_guard lock(m_mutex);
  m_ctx.err->line("torchfix: ran " + shown_command(command) + " (" + ending(result) + ")");
  if (m_ctx.verbosity >= 3 && result) {
    show_stream(*m_ctx.err, "out", result->out);
    show_stream(*m_ctx.err, "err", result->err);
  }
  return result;
}

}  // namespace torchfix::cli
