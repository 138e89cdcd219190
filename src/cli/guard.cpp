// torchfix env --guard: pin the CUDA torch of one environment and its
// companions in a constraints file that pip (the environment's pip.conf) and
// uv and pip in an activated shell (UV_CONSTRAINT / PIP_CONSTRAINT in
// bin/activate) read, both written with the safe, reversible rc-file edit.

#include "cli/guard.hpp"

#include "cli/machine.hpp"
#include "core/guard.hpp"
#include "probe/installer_probe.hpp"
#include "shellenv/rc_file.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

Expected<std::string> interpreter_of(const std::string& python, const Environment& env) {
  if (!python.empty()) {
    if (auto checked = check_python_option(python, env); !checked) return std::unexpected(checked.error());
    return python;
  }
  if (auto venv = env.find("VIRTUAL_ENV"); venv != env.end() && !venv->second.empty())
    return venv->second + "/bin/python";
  return fail("no environment to guard: pass --python PATH or activate the venv");
}

Expected<void> edit(const fs::path& file, const std::optional<std::string>& body, Context& ctx) {
  auto change = body ? shellenv::install_into_rc(file, *body) : shellenv::uninstall_from_rc(file);
  if (!change) return std::unexpected(change.error());
  if (change->changed)
    ctx.out->line(std::string(body ? "  wrote the torchfix block in " : "  removed the torchfix block from ") +
                  change->target.string());
  return {};
}

}  // namespace

int run_guard(const std::string& python, GuardAction action, Context& ctx) {
  const auto failed = [&](const std::string& message) {
    ctx.err->line("torchfix env: " + message);
    return k_exit_tool_failure;
  };
  auto py = interpreter_of(python, ctx.env);
  if (!py) return failed(py.error().message);
  const EnvInstaller where = probe_env_installer(*py, ctx.env);
  const fs::path file = where.prefix / ".torchfix" / "constraints.txt";
  if (action == GuardAction::remove) {
    for (const fs::path& f : {where.prefix / "pip.conf", where.prefix / "bin" / "activate"}) {
      if (auto removed = edit(f, std::nullopt, ctx); !removed) return failed(removed.error().message);
    }
    std::error_code ec;
    fs::remove(file, ec);
    ctx.out->line("torchfix env: removed the guard of " + *py);
    return k_exit_ok;
  }
  PlannedCommand freeze;
  freeze.argv = freeze_argv({.interpreter = *py, .installer = where.installer, .uv = where.uv});
  auto frozen = run_planned(freeze, ctx.env, *ctx.runner, std::chrono::seconds(120));
  if (!frozen || !frozen->succeeded())
    return failed("cannot list the packages of " + *py + ": " + (frozen ? frozen->err : frozen.error().message));
  const auto text = guard_constraints(parse_freeze(frozen->out), *py);
  if (!text) return failed("no torch installed in " + *py + ": nothing to guard");
  // A second [install] section would make pip refuse its whole configuration.
  if (auto conf = util::read_file_bytes(where.prefix / "pip.conf");
      conf && conf->find("[install]") != std::string::npos && conf->find("torchfix") == std::string::npos)
    return failed(where.prefix.string() +
                  "/pip.conf has its own [install] section; add `constraint = " + file.string() + "` to it yourself");
  std::error_code ec;
  fs::create_directories(file.parent_path(), ec);
  constexpr fs::perms mode =
      fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  if (auto written = util::write_file_atomically(file, *text, mode); !written) return failed(written.error().message);
  ctx.out->line("torchfix env: guarded " + *py + " with " + file.string() + ":");
  for (const auto& [name, line] : parse_freeze(*text)) ctx.out->line("  " + line);
  if (auto e = edit(where.prefix / "pip.conf", "[install]\nconstraint = " + file.string() + "\n", ctx); !e)
    return failed(e.error().message);
  if (fs::exists(where.prefix / "bin" / "activate")) {
    const std::string q = "'" + file.string() + "'";
    if (auto e = edit(where.prefix / "bin" / "activate",
                      "export PIP_CONSTRAINT=" + q + "\nexport UV_CONSTRAINT=" + q + "\n", ctx);
        !e)
      return failed(e.error().message);
  }
  ctx.out->line("  undo: torchfix env --guard --uninstall --python " + *py);
  return k_exit_ok;
}

}  // namespace torchfix::cli
