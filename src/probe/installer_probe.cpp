#include "probe/installer_probe.hpp"

#include <fstream>
#include <sstream>

namespace torchfix {
namespace {

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string env_or(const Environment& env, const char* name, std::string fallback = {}) {
  const auto it = env.find(name);
  return it == env.end() || it->second.empty() ? fallback : it->second;
}

}  // namespace

EnvInstaller probe_env_installer(const std::string& interpreter, const Environment& env) {
  EnvInstaller out;
  out.prefix = std::filesystem::path(interpreter).parent_path().parent_path();
  if (auto uv = find_program("uv", env)) out.uv = *uv;
  if (auto cfg = read_text(out.prefix / "pyvenv.cfg")) {
    out.made_by_uv = installer_from_pyvenv_cfg(*cfg) == Installer::uv;
    if (out.made_by_uv && !out.uv.empty()) out.installer = Installer::uv;
  }
  const std::string home = env_or(env, "HOME");
  const std::string xdg = env_or(env, "XDG_CONFIG_HOME", home.empty() ? std::string() : home + "/.config");
  // pip reads these in this order, later ones overriding; a mirror is a
  // mirror wherever it is configured, so all are collected.
  std::vector<std::string> pip_files = {"/etc/pip.conf", "/etc/xdg/pip/pip.conf"};
  if (!xdg.empty()) pip_files.push_back(xdg + "/pip/pip.conf");
  if (!home.empty()) pip_files.push_back(home + "/.pip/pip.conf");
  pip_files.push_back((out.prefix / "pip.conf").string());
  if (const std::string given = env_or(env, "PIP_CONFIG_FILE"); !given.empty())
    pip_files.insert(pip_files.begin(), given);
  for (const std::string& file : pip_files) {
    if (auto text = read_text(file)) add_pip_conf(out.config, *text, file);
  }
  std::vector<std::string> uv_files = {"/etc/uv/uv.toml"};
  if (!xdg.empty()) uv_files.push_back(xdg + "/uv/uv.toml");
  if (const std::string given = env_or(env, "UV_CONFIG_FILE"); !given.empty()) uv_files.insert(uv_files.begin(), given);
  for (const std::string& file : uv_files) {
    if (auto text = read_text(file)) add_uv_toml(out.config, *text, file);
  }
  add_index_variables(out.config, env);
  return out;
}

std::optional<std::string> missing_installer(const EnvInstaller& where) {
  std::error_code ec;
  if (!where.made_by_uv || !where.uv.empty() || std::filesystem::exists(where.prefix / "bin" / "pip", ec))
    return std::nullopt;
  return "uv made " + where.prefix.string() + ", which has no pip, and there is no uv on PATH; put uv on PATH";
}

Expected<ProcessResult> run_planned(const PlannedCommand& command, const Environment& env, ProcessRunner& runner,
                                    std::chrono::milliseconds timeout) {
  if (command.argv.empty()) return fail("an empty command");
  Environment child = env;
  for (const auto& [name, value] : command.env) child[name] = value;
  Command c;
  c.program = command.argv.front();
  c.args.assign(command.argv.begin() + 1, command.argv.end());
  c.env = std::move(child);
  c.timeout = timeout;
  return runner.run(c);
}

}  // namespace torchfix
