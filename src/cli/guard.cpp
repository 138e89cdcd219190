// torchfix env --guard: pin the CUDA torch of one environment and its
// companions in a constraints file that pip (the environment's pip.conf) and
// uv and pip in an activated shell (UV_CONSTRAINT / PIP_CONSTRAINT in
// bin/activate) read, and for a uv project (PROJECT/.venv) steer uv's
// resolution to torch's index in PROJECT/pyproject.toml, all written with
// the safe, reversible rc-file edit.

#include "cli/guard.hpp"

#include "cli/machine.hpp"
#include "core/base/quote.hpp"
#include "core/diagnosis/guard.hpp"
#include "probe/installer_probe.hpp"
#include "shellenv/rc_edit.hpp"
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

// The pyproject.toml of the uv project whose environment is `prefix` (PROJECT/.venv); nullopt: none.
std::optional<fs::path> uv_project_of(const fs::path& prefix) {
  const fs::path pyproject = prefix.parent_path() / "pyproject.toml";
  auto text = util::read_file_bytes(pyproject);
  if (!text || !is_uv_project(*text, fs::exists(prefix.parent_path() / "uv.lock"))) return std::nullopt;
  return pyproject;
}

struct ProjectEdit {
  fs::path pyproject;
  std::string body;
};

// What the guard writes into the uv project's pyproject.toml, checked
// before anything is written; nullopt: no uv project, or torch has no variant
// label (PyPI's torch: uv's default source already). Errors: why it is refused.
Expected<std::optional<ProjectEdit>> project_edit(const EnvInstaller& where,
                                                  const std::map<std::string, std::string>& frozen, Context& ctx) {
  const auto pyproject = uv_project_of(where.prefix);
  if (!pyproject || !frozen.contains("torch")) return std::optional<ProjectEdit>();
  const std::string variant = local_variant(frozen.at("torch"));
  if (variant.empty()) {
    ctx.out->line("  " + pyproject->string() + " left alone: " + frozen.at("torch") +
                  " has no variant label, so no PyTorch index to steer uv to");
    return std::optional<ProjectEdit>();
  }
  TF_TRY(text, util::read_file_bytes(*pyproject));
  TF_TRY(outside, shellenv::remove_block(text));
  // The project's own indexes first: uv prefers them to the user's uv.toml.
  IndexConfig config;
  add_uv_toml(config, outside, pyproject->string());
  for (const auto& [url, origin] : where.config.urls) config.urls.emplace_back(url, origin);
  const std::string upstream = "https://download.pytorch.org/whl/" + variant;
  const auto guard = uv_project_guard(frozen, variant, choose_index(upstream, variant, config).url);
  if (auto why = uv_project_conflict(outside, *guard))
    return fail(pyproject->string() + ": " + *why + "; remove that entry, or pin torch's index there yourself");
  return std::optional<ProjectEdit>(ProjectEdit{*pyproject, uv_project_block(*guard)});
}

}  // namespace

int run_guard(const std::string& python, GuardAction action, Context& ctx) {
  const Failure failed{ctx, "env"};
  auto py = interpreter_of(python, ctx.env);
  if (!py) return failed(py.error().message);
  const EnvInstaller where = probe_env_installer(*py, ctx.env);
  const fs::path file = where.prefix / ".torchfix" / "constraints.txt";
  if (auto missing = missing_installer(where); missing && action == GuardAction::write) return failed(*missing);
  if (action == GuardAction::remove) {
    std::vector<fs::path> files = {where.prefix / "pip.conf", where.prefix / "bin" / "activate"};
    if (auto pyproject = uv_project_of(where.prefix)) files.push_back(*pyproject);
    for (const fs::path& f : files) {
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
  const auto packages = parse_freeze(frozen->out);
  const auto text = guard_constraints(packages, *py);
  if (!text) return failed("no torch installed in " + *py + ": nothing to guard");
  auto project = project_edit(where, packages, ctx);
  if (!project) return failed(project.error().message);
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
    // bin/activate is a POSIX script: the lines every printed fix uses.
    const std::string lines = set_env_command(CommandShell::posix, "PIP_CONSTRAINT", file.string()) + "\n" +
                              set_env_command(CommandShell::posix, "UV_CONSTRAINT", file.string()) + "\n";
    if (auto e = edit(where.prefix / "bin" / "activate", lines, ctx); !e) return failed(e.error().message);
  }
  if (*project) {
    if (auto e = edit((*project)->pyproject, (*project)->body, ctx); !e) return failed(e.error().message);
  }
  ctx.out->line("  undo: torchfix env --guard --uninstall --python " + *py);
  return k_exit_ok;
}

}  // namespace torchfix::cli
