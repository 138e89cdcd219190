#include "cli/app.hpp"

#include <charconv>
#include <cmath>
#include <exception>
#include <nlohmann/json.hpp>

#include "core/json_text.hpp"
#include "core/version_info.hpp"

namespace torchfix::cli {

CLI::Validator seconds_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        const char* end = text.data() + text.size();
        auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || stop != end || !std::isfinite(value)) {
          return "'" + text + "' is not a number of seconds; give one like 10 or 2.5";
        }
        if (value <= 0) return "must be more than 0 seconds (got " + text + "); give one like 10 or 2.5";
        if (value > 86400) return text + " seconds is more than a day; give at most 86400";
        return {};
      },
      "SECONDS");
}

CLI::Validator count_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        int value = 0;
        const char* end = text.data() + text.size();
        auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (ec != std::errc() || stop != end) return "'" + text + "' is not a whole number; give one like 8";
        if (value < 1 || value > 4096) return "must be from 1 to 4096 (got " + text + ")";
        return {};
      },
      "N");
}

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
  app.set_version_flag("--version",
                       "torchfix " + std::string(k_torchfix_version) + " (" + std::string(k_torchfix_identity) + ")");
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
  add_fleet(app, ctx);

  // `torchfix`, `torchfix help [COMMAND]` and a mistyped command get the
  // usage, not CLI11's "A subcommand is required" or "arguments were not expected".
  const auto known = [&](const std::string& name) {
    try {
      return app.get_subcommand(name);
    } catch (const CLI::OptionNotFound&) {
      return static_cast<CLI::App*>(nullptr);
    }
  };
  app.name("torchfix");            // the usage line names the program even before parse() sees argv[0]
  std::vector<std::string> words;  // arguments that are not flags: the command and what follows
  bool asks_help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--version") asks_help = true;
    if (!arg.starts_with('-')) words.emplace_back(arg);
  }
  if (words.empty() && !asks_help) {
    err.block(app.help());
    return k_exit_tool_failure;
  }
  if (!words.empty() && words.front() == "help") {
    CLI::App* sub = words.size() > 1 ? known(words[1]) : nullptr;
    if (words.size() > 1 && !sub) {
      err.line("torchfix help: unknown command '" + words[1] + "'");
      err.block(app.help());
      return k_exit_tool_failure;
    }
    out.block(sub ? sub->help() : app.help());
    return k_exit_ok;
  }
  if (!words.empty() && !known(words.front())) {
    err.line("torchfix: unknown command '" + words.front() + "'; the usage is below");
    err.block(app.help());
    return k_exit_tool_failure;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return k_exit_tool_failure;
  } catch (const nlohmann::json::exception& e) {
    // Library code reports failures as Expected; anything that still escapes
    // is a bug, but the user gets one line and exit code 2, not an abort, and
    // not nlohmann's internal "[json.exception...]" tag.
    err.line("torchfix: internal error (a bug in torchfix; please report it with this line): " + json_error_text(e));
    return k_exit_tool_failure;
  } catch (const std::exception& e) {
    err.line(std::string("torchfix: internal error (a bug in torchfix; please report it with this line): ") + e.what());
    return k_exit_tool_failure;
  }
  // Ctrl-C (or SIGTERM, SIGHUP) during a probe or a build step: the children
  // are gone by now; exit as an interrupted program does.
  if (const int sig = interrupt_signal(); sig != 0) return 128 + sig;
  return ctx.exit_code;
}

}  // namespace torchfix::cli
