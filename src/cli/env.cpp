// torchfix env: shell snippets that set the environment right for this
// machine (docs/env.md), printed, as JSON, or installed into an rc file
// between marker lines.

#include <memory>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/guard.hpp"
#include "cli/machine.hpp"
#include "cli/tables.hpp"
#include "core/base/json_text.hpp"
#include "core/base/version_info.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/toolchain.hpp"
#include "probe/data_dir.hpp"
#include "shellenv/quote.hpp"
#include "shellenv/rc_file.hpp"
#include "shellenv/selection.hpp"
#include "shellenv/snippet.hpp"
#include "util/session.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;
using namespace torchfix::shellenv;

struct EnvOptions {
  std::string shell = "auto";
  std::string purpose = "all";
  bool json = false;
  bool install = false;
  bool uninstall = false;
  std::string rc;
  std::string snapshot;
  std::vector<std::string> gpus;
  bool guard = false;
  std::string python;  // --python, for --guard
};

std::string env_or(const Environment& env, const std::string& name, const std::string& fallback) {
  auto it = env.find(name);
  return it != env.end() && !it->second.empty() ? it->second : fallback;
}

// Picks the shell to write for: --shell, else $SHELL's basename, else the
// parent process when it is a shell (containers and CI runners often leave
// SHELL unset: `docker exec ... bash` sets none; on Windows cmd.exe,
// pwsh.exe or powershell.exe).
Expected<Shell> pick_shell(const std::string& option, const Environment& env) {
  if (option != "auto") return parse_shell(option);
  const std::string login = env_or(env, "SHELL", "");
  if (auto shell = parse_shell(fs::path(login).filename().string())) return shell;
  const std::string parent = util::parent_process_name();
  if (auto shell = shell_of_program(parent)) return *shell;
#ifdef _WIN32
  return Shell::powershell;  // no SHELL on Windows, no shell as parent: PowerShell unless --shell cmd
#else
  return fail("cannot tell your shell from SHELL='" + login + "' or the parent process '" + parent +
              "'; pass --shell bash, zsh or fish");
#endif
}

// The rc file each shell reads for interactive sessions: ~/.bashrc,
// ${ZDOTDIR:-~}/.zshrc, ${XDG_CONFIG_HOME:-~/.config}/fish/config.fish, on
// Windows the $PROFILE of the PowerShell that started torchfix; none for
// cmd (which reads no profile).
Expected<fs::path> default_rc(Shell shell, const Environment& env) {
  const std::string home = env_or(env, "HOME", "");
  if (home.empty() && (shell == Shell::bash || shell == Shell::zsh || shell == Shell::fish)) {
    return fail("HOME is not set, so there is no default rc file; pass --rc FILE");
  }
  switch (shell) {
    case Shell::bash:
      return fs::path(home) / ".bashrc";
    case Shell::zsh:
      return fs::path(env_or(env, "ZDOTDIR", home)) / ".zshrc";
    case Shell::fish:
      return fs::path(env_or(env, "XDG_CONFIG_HOME", home + "/.config")) / "fish" / "config.fish";
    case Shell::powershell: {
      auto documents = util::documents_folder();
      if (!documents)
        return fail("cannot find your PowerShell profile: " + documents.error().message + "; pass --rc $PROFILE");
      return powershell_profile(*documents, util::parent_process_name());
    }
    case Shell::cmd:
      return fail("cmd has no profile file to install into; run the printed set lines, or use --shell powershell");
  }
  return fail("unknown shell");
}

nlohmann::json vars_json(const std::vector<EnvVar>& vars, Shell shell, PurposeFilter filter) {
  nlohmann::json list = nlohmann::json::array();
  for (const EnvVar& v : vars) {
    list.push_back({{"name", v.name},
                    {"value", v.value},
                    {"action", to_string(v.action)},
                    {"purpose", to_string(v.purpose)},
                    {"reason", v.reason}});
  }
  return {{"schema_version", 1}, {"shell", to_string(shell)}, {"for", to_string(filter)}, {"variables", list}};
}

std::string describe(const RcChange& change, std::string_view done) {
  if (!change.changed) return change.target.string() + " already up to date; nothing written";
  std::string text = std::string(done) + " " + change.target.string();
  if (change.backup) text += " (backup: " + change.backup->string() + ")";
  if (change.hard_links > 1) {
    text += "; it has " + std::to_string(change.hard_links) +
            " hard links, so it was edited in place and every name shows the change";
  }
  return text;
}

// What reads the edited file into the running shell: `source FILE`, or
// PowerShell's dot-sourcing (which runs only where the execution policy lets
// scripts run: about_Profiles, "Profiles and Execution Policy").
std::string reload_hint(Shell shell, const fs::path& rc) {
  if (shell != Shell::powershell) return "open a new shell, or run: source " + rc.string();
  auto quoted = quote(Shell::powershell, rc.string());
  return "open a new PowerShell, or run: . " + (quoted ? *quoted : rc.string()) +
         " (profiles run only where the execution policy allows scripts)";
}

int run_env(const EnvOptions& o, Context& ctx) {
  const Failure failed{ctx, "env"};
  if (o.install && o.uninstall) return failed("--install and --uninstall exclude each other");
  if (!o.rc.empty() && !o.install && !o.uninstall) return failed("--rc needs --install or --uninstall");
  auto shell = pick_shell(o.shell, ctx.env);
  if (!shell) return failed(shell.error().message);
  if ((o.install || o.uninstall) && *shell == Shell::cmd) {
    return failed("cmd has no profile file to install into; run the printed set lines, or use --shell powershell");
  }
  auto filter = parse_purpose_filter(o.purpose);
  if (!filter) return failed(filter.error().message);
  Expected<fs::path> rc = o.rc.empty() ? default_rc(*shell, ctx.env) : Expected<fs::path>(fs::path(o.rc));
  if ((o.install || o.uninstall) && !rc) return failed(rc.error().message);
  if (o.uninstall) {
    auto change = uninstall_from_rc(*rc);
    if (!change) return failed(change.error().message);
    ctx.out->line(describe(*change, "removed the torchfix block from"));
    return k_exit_ok;
  }

  auto inputs = load_inputs(ctx);
  if (!inputs) return failed(inputs.error());
  const Knowledge& knowledge = inputs->knowledge;
  auto snapshot = machine_snapshot(o.snapshot, o.gpus, ProbeDepth::full, knowledge, ctx);
  if (!snapshot) return failed(snapshot.error().message);
  // The toolchain decision doctor and build make for this snapshot, with a
  // generic CUDA extension's jobs arithmetic (recipes/build/cuda-extension.toml).
  if (!knowledge.build_recipe(k_generic_recipe))
    return failed("recipe '" + std::string(k_generic_recipe) + "' is missing from " + inputs->data.where());
  const Situation situation = situate(*snapshot, knowledge);
  const std::vector<EnvVar> vars = select_variables(*snapshot, {&knowledge, situation.toolchain}, *filter);
  if (o.json) {
    // Values are raw bytes; a path that is not UTF-8 is shown with U+FFFD.
    ctx.out->block(json_text(vars_json(vars, *shell, *filter)));
    if (!o.install) return k_exit_ok;
  }
  auto tmpl = load_template(inputs->data, *shell);
  if (!tmpl) return failed(tmpl.error().message);
  auto snippet = render_snippet(*tmpl, vars, {std::string(k_torchfix_version), *filter});
  if (!snippet) return failed(snippet.error().message);
  if (!o.install) {
    std::string text = *snippet;
    if (!text.empty() && text.back() == '\n') text.pop_back();
    ctx.out->block(text);
    return k_exit_ok;
  }
  if (o.rc.empty()) {
    // fish's config folder may not exist yet on a fresh account.
    std::error_code ec;
    fs::create_directories(rc->parent_path(), ec);
  }
  auto change = install_into_rc(*rc, *snippet);
  if (!change) return failed(change.error().message);
  ctx.out->line(describe(*change, "installed the " + std::string(to_string(*shell)) + " snippet into"));
  if (change->changed) ctx.out->line(reload_hint(*shell, *rc));
  return k_exit_ok;
}

}  // namespace

void add_env(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<EnvOptions>();
  auto* cmd =
      app.add_subcommand("env", "Print (or install into your rc file) the environment variables this machine needs");
  cmd->add_option(
      "--shell", options->shell,
      "bash, zsh, fish, powershell, cmd, or auto (default: from $SHELL or the shell that started torchfix; on "
      "Windows cmd from cmd.exe, else PowerShell)");
  cmd->add_option("--for", options->purpose, "build (compiling CUDA code), runtime (running torch), or all (default)");
  cmd->add_flag("--json", options->json, "Print the variables as JSON instead of a snippet");
  cmd->add_flag(
      "--install", options->install,
      "Put the snippet into the shell's rc file between '# >>> torchfix >>>' marker lines (replacing an old block)");
  cmd->add_option("--rc", options->rc,
                  "The rc file for --install/--uninstall (default: ~/.bashrc, ~/.zshrc, ~/.config/fish/config.fish; "
                  "on Windows the $PROFILE of the PowerShell running torchfix)")
      // `--rc "$RC"` with RC unset must not edit the real ~/.bashrc, and
      // "-" is no file a shell reads.
      ->check([](const std::string& v) {
        return v.empty() || v == "-" ? std::string("give the rc file's path (empty and - are not rc files)")
                                     : std::string();
      });
  cmd->add_flag("--uninstall", options->uninstall, "Remove the torchfix block from the rc file");
  cmd->add_option("--snapshot", options->snapshot, "Use a snapshot saved by doctor --save-snapshot instead of probing");
  cmd->add_option("--gpu", options->gpus,
                  "Plan for this GPU instead of the probed ones: a name, sm_XY or X.Y (repeatable)");
  cmd->add_flag("--guard", options->guard,
                "Pin this environment's CUDA torch and companions so later pip/uv installs cannot replace them "
                "(--uninstall removes the guard)");
  cmd->add_option("--python", options->python, "With --guard: the environment's interpreter (default: $VIRTUAL_ENV)");
  cmd->callback([options, &ctx] {
    if (options->guard) {
      ctx.exit_code = run_guard(options->python, options->uninstall ? GuardAction::remove : GuardAction::write, ctx);
      return;
    }
    ctx.exit_code = run_env(*options, ctx);
  });
}

}  // namespace torchfix::cli
