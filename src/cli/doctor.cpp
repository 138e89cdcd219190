// torchfix doctor (being written).
#include "cli/app.hpp"

namespace torchfix::cli {

void add_doctor(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("doctor", "Diagnose PyTorch on this machine's GPUs");
  cmd->callback([&ctx] { ctx.exit_code = k_exit_ok; });
}

}  // namespace torchfix::cli
