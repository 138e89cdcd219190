#include "cli/app.hpp"

#include <exception>

#include "core/version_info.hpp"

namespace torchfix::cli {

int run(int argc, char** argv) {
  // Before any child starts: a Ctrl-C must find every child to stop.
  install_interrupt_handlers();
  Context ctx;
  ctx.env = read_process_environment();
  ctx.argv.assign(argv, argv + argc);
  SystemProcessRunner runner;
  Printer out(stdout, ctx.env);
  Printer err(stderr, ctx.env);
  ctx.runner = &runner;
  ctx.out = &out;
  ctx.err = &err;

  CLI::App app{"torchfix: makes PyTorch run on the NVIDIA GPU you have"};
  app.set_version_flag("--version", std::string(k_torchfix_version));
  app.require_subcommand(1);
  app.fallthrough();  // `torchfix doctor -v` as well as `torchfix -v doctor`
  app.add_flag("-v,--verbose", ctx.verbosity, "Show details (repeat for more)");
  add_doctor(app, ctx);
  add_inspect(app, ctx);
  add_build(app, ctx);
  add_recipes(app, ctx);
  add_env(app, ctx);
  add_arch(app, ctx);
  add_tune(app, ctx);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return k_exit_tool_failure;
  } catch (const std::exception& e) {
    // Library code reports failures as Expected; anything that still escapes
    // is a bug, but the user gets one line and exit code 2, not an abort.
    err.line(std::string("torchfix: internal error: ") + e.what());
    return k_exit_tool_failure;
  }
  // Ctrl-C (or SIGTERM, SIGHUP) during a probe or a build step: the children
  // are gone by now; exit as an interrupted program does.
  if (const int sig = interrupt_signal(); sig != 0) return 128 + sig;
  return ctx.exit_code;
}

}  // namespace torchfix::cli
