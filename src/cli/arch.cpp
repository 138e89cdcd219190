// torchfix arch: placeholder until its issue lands (see docs/ARCHITECTURE.md).
#include "cli/app.hpp"

namespace torchfix::cli {

void add_arch(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("arch", "(not available yet)");
  cmd->callback([&ctx] {
    ctx.err->line("torchfix arch: not available in this build yet");
    ctx.exit_code = k_exit_tool_failure;
  });
}

}  // namespace torchfix::cli
