#include "cli/app.hpp"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli/completion.hpp"
#include "cli/help_text.hpp"
#include "cli/trace_runner.hpp"
#include "cli/usage.hpp"
#include "core/base/json_text.hpp"
#include "core/base/version_info.hpp"

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
      "");  // the placeholder (SECONDS) comes from cli/help_text.cpp
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
      "");
}

CLI::Validator torch_version_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::string joined;
        for (char c : text) {
          if (c != ' ' && c != '\t') joined += c;
        }
        const auto variant = joined.find_first_of("cr", joined.find_first_not_of("0123456789."));
        const bool bare_variant = joined.find('+') == std::string::npos && variant != std::string::npos &&
                                  (joined.compare(variant, 2, "cu") == 0 || joined.compare(variant, 3, "cpu") == 0 ||
                                   joined.compare(variant, 4, "rocm") == 0);
        std::string meant = joined;
        if (bare_variant) meant.insert(variant, "+");
        if (meant != text) return "'" + text + "' is not a torch version; did you mean " + meant + "?";
        return {};
      },
      "");
}

CLI::Validator non_empty_check(std::string example) {
  return CLI::Validator(
      [example](std::string& text) -> std::string {
        if (text.find_first_not_of(" \t") == std::string::npos) return "needs a value, like " + example;
        return {};
      },
      "");
}

Expected<void> check_torch_variant(const std::string& torch, const Knowledge& knowledge) {
  const auto plus = torch.find('+');
  if (plus == std::string::npos || !torch.substr(plus + 1).starts_with("cu")) return {};
  const std::string variant = torch.substr(plus + 1);
  std::set<std::string> known;
  for (const WheelVariant& w : knowledge.wheels) known.insert(w.variant);
  if (known.contains(variant)) return {};
  std::string names;
  for (const std::string& k : known) {
    if (k.starts_with("cu")) names += (names.empty() ? "" : ", ") + k;
  }
  return fail("--torch " + torch + ": PyTorch publishes no " + variant + " wheels (recipes/torch-wheels.toml knows " +
              names + ")");
}

namespace {

CLI::App* find_command(CLI::App& app, const std::string& name) {
  try {
    return app.get_subcommand(name);
  } catch (const CLI::OptionNotFound&) {
    return nullptr;
  }
}

// The command line before CLI11 sees it: the command word and the flags
// before it.
struct Words {
  std::vector<std::string> words;  // arguments that are not flags: the command and what follows
  std::vector<std::string> flags;  // flags before the command
  bool asks_help = false;          // -h, --help or --version anywhere
};

Words split_arguments(int argc, char** argv) {
  Words w;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--version") w.asks_help = true;
    if (arg == "--color" && w.words.empty()) {  // `torchfix --color never doctor`: "never" is no command
      w.flags.emplace_back(arg);
      if (i + 1 < argc) w.flags.emplace_back(std::string("--color=") + argv[++i]);
      continue;
    }
    if (!arg.starts_with('-')) {
      w.words.emplace_back(arg);
    } else if (w.words.empty()) {
      w.flags.emplace_back(arg);
    }
  }
  return w;
}

// `torchfix`, `torchfix -V`, `torchfix help [COMMAND]`, `torchfix doktor`:
// answered before CLI11 parses, with torchfix's one line, not CLI11's "A
// subcommand is required" or "arguments were not expected"; the usage only
// when asked for (or when nothing at all was given).
std::optional<int> answer_before_parsing(CLI::App& app, const Words& w, Printer& out, Printer& err) {
  if (w.words.empty() && !w.asks_help) {
    const std::vector<std::string> names = option_names(app);
    for (const std::string& flag : w.flags) {
      const bool repeated_short =
          flag.size() > 2 && flag[1] != '-' && flag.find_first_not_of(flag[1], 1) == std::string::npos;  // -vv
      const bool quiet_or_verbose = flag.find_first_not_of("-vq") == std::string::npos;                  // -qv
      if (std::ranges::find(names, flag.substr(0, flag.find('='))) == names.end() && !repeated_short &&
          !quiet_or_verbose) {
        err.line(unknown_option_line("torchfix", flag, app));
        return k_exit_tool_failure;
      }
    }
    err.block(app.help());
    return k_exit_tool_failure;
  }
  if (!w.words.empty() && w.words.front() == "help") {
    CLI::App* sub = w.words.size() > 1 ? find_command(app, w.words[1]) : nullptr;
    if (w.words.size() > 1 && !sub) {
      err.line("torchfix help: " + unknown_command_line(w.words[1], app).substr(std::string_view("torchfix: ").size()));
      return k_exit_tool_failure;
    }
    out.block(sub ? sub->help() : app.help());
    return k_exit_ok;
  }
  if (!w.words.empty() && !find_command(app, w.words.front()) && !w.asks_help) {
    err.line(unknown_command_line(w.words.front(), app));
    return k_exit_tool_failure;
  }
  return std::nullopt;
}

int parse_and_run(CLI::App& app, CLI::App* command, int argc, char** argv, Context& ctx) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App* where = command ? command : &app;
    ctx.err->line(parse_error_line(command ? "torchfix " + command->get_name() : "torchfix", e, *where));
    return k_exit_tool_failure;
  } catch (const nlohmann::json::exception& e) {
    // Library code reports failures as Expected; anything that still escapes
    // is a bug, but the user gets one line and exit code 2, not an abort, and
    // not nlohmann's internal "[json.exception...]" tag.
    ctx.err->line("torchfix: internal error (a bug in torchfix; please report it with this line): " +
                  json_error_text(e));
    return k_exit_tool_failure;
  } catch (const std::exception& e) {
    ctx.err->line(std::string("torchfix: internal error (a bug in torchfix; please report it with this line): ") +
                  e.what());
    return k_exit_tool_failure;
  }
  // Ctrl-C (or SIGTERM, SIGHUP) during a probe or a build step: the children
  // are gone by now; exit as an interrupted program does.
  if (const int sig = interrupt_signal(); sig != 0) return 128 + sig;
  return ctx.exit_code;
}

// `torchfix doctor --json > /dev/full`: output that never arrived is a
// failure, not exit 0. stdio buffers what the Printer wrote and CLI11 writes
// --help and --version through std::cout; both are flushed here, where an
// error can still change the exit code. The one check of torchfix's output:
// the Printer's first failed write (first_write_error) or this flush's; a
// closed pipe (EPIPE: `torchfix doctor | head -1`) is the reader's choice.
int finish_output(int code, const std::string& command, Printer& err) {
  errno = 0;
  std::cout.flush();
  const bool flushed = std::fflush(stdout) == 0;
  const int flush_error = flushed ? 0 : errno;
  const int error = first_write_error() != 0 ? first_write_error() : flush_error;
  if (error == EPIPE) return code;
  if (error == 0 && std::cout.good()) return code;
  const std::string why = error != 0 ? std::strerror(error) : std::string("a write failed (a full disk?)");
  err.line(command + ": cannot write the output: " + why + "; check the disk or the file it goes to");
  return k_exit_tool_failure;
}

// The environment the printers see: --color and FORCE_COLOR said the way
// Printer reads them (NO_COLOR, CLICOLOR_FORCE). The children torchfix
// runs still get the user's environment unchanged.
Environment printer_environment(const Environment& env, int argc, char** argv) {
  Environment printing = env;
  if (auto force = env.find("FORCE_COLOR");
      force != env.end() && !force->second.empty() && force->second != "0" && !env.contains("CLICOLOR_FORCE"))
    printing["CLICOLOR_FORCE"] = "1";
  std::string when;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--color" && i + 1 < argc) when = argv[i + 1];
    if (arg.starts_with("--color=")) when = arg.substr(8);
  }
  if (when == "never") printing["NO_COLOR"] = "1";
  if (when == "always") {
    printing.erase("NO_COLOR");
    printing.erase("CLICOLOR");
    printing["CLICOLOR_FORCE"] = "1";
  }
  return printing;
}

bool asks_quiet(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--quiet" ||
        (arg.starts_with('-') && !arg.starts_with("--") && arg.find('q') != std::string_view::npos &&
         arg.find_first_not_of("-vq") == std::string_view::npos))
      return true;
  }
  return false;
}

// The flags every command takes: read before parsing (asks_quiet,
// printer_environment), held here so that CLI11 accepts them.
struct GlobalFlags {
  bool quiet = false;
  std::string colour = "auto";
};

// Builds the command tree: the global options, every subcommand, their help.
void add_commands(CLI::App& app, Context& ctx, GlobalFlags& flags) {
  app.set_version_flag("--version", [&ctx] { return version_text(ctx.env); });
  app.require_subcommand(1);
  app.fallthrough();  // `torchfix doctor -v` as well as `torchfix -v doctor`
  app.add_flag("-v,--verbose", ctx.verbosity,
               "Show details (-v: evidence, fixes considered; -vv: also the tables and each probe command with its "
               "time; -vvv: also what each printed)");
  // Before the subcommand runs, so that the line comes first.
  app.parse_complete_callback([&ctx] {
    if (ctx.verbosity >= 2) ctx.err->line("torchfix: " + tables_text(ctx.env));
  });
  app.add_flag("-q,--quiet", flags.quiet, "Print nothing but errors; the exit code tells");
  app.add_option("--color", flags.colour,
                 "Colour: auto (on a terminal; NO_COLOR, CLICOLOR_FORCE, FORCE_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}).description(""));
  add_doctor(app, ctx);
  add_inspect(app, ctx);
  add_build(app, ctx);
  add_recipes(app, ctx);
  add_env(app, ctx);
  add_arch(app, ctx);
  add_tune(app, ctx);
  add_fleet(app, ctx);
  add_fix(app, ctx);
  add_version(app, ctx);
  add_completions(app, ctx);
  describe_commands(app);
  app.name("torchfix");  // the usage line names the program even before parse() sees argv[0]
}

}  // namespace

int run(int argc, char** argv) {
  // Before any child starts: a Ctrl-C must find every child to stop.
  install_interrupt_handlers();
  Context ctx;
  ctx.env = read_process_environment();
  ctx.argv.assign(argv, argv + argc);
  SystemProcessRunner system_runner;
  TraceRunner runner(system_runner, ctx);  // -vv: each command run, -vvv: what it printed
  const Environment printing = printer_environment(ctx.env, argc, argv);
  // -q: nothing on stdout (the exit code tells); errors still on stderr.
  std::FILE* null_output = asks_quiet(argc, argv) ? std::fopen("/dev/null", "w") : nullptr;
  Printer out(null_output ? null_output : stdout, printing);
  Printer err(stderr, printing);
  ctx.runner = &runner;
  ctx.out = &out;
  ctx.err = &err;

  CLI::App app{"torchfix: makes PyTorch run on the NVIDIA GPU you have"};
  GlobalFlags flags;
  add_commands(app, ctx, flags);

  const Words words = split_arguments(argc, argv);
  CLI::App* command = words.words.empty() ? nullptr : find_command(app, words.words.front());
  const std::string name = command ? "torchfix " + command->get_name() : "torchfix";
  const int code = [&] {
    // What the completion scripts ask (templates/completion.*): answered from the tree built above.
    if (argc > 1 && std::string_view(argv[1]) == "__complete")
      return finish_output(answer_completion(app, std::vector<std::string>(argv + 2, argv + argc), ctx),
                           "torchfix __complete", err);
    if (auto answered = answer_before_parsing(app, words, out, err)) return finish_output(*answered, name, err);
    return finish_output(parse_and_run(app, command, argc, argv, ctx), name, err);
  }();
  if (null_output) std::fclose(null_output);
  return code;
}

}  // namespace torchfix::cli
