#include "probe/installer_probe.hpp"

#include <algorithm>
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

// The files conda reads, in its order (conda/base/constants.py SEARCH_PATH),
// with the environment's own prefix beside $CONDA_PREFIX.
std::vector<std::filesystem::path> condarc_files(const Environment& env, const std::filesystem::path& prefix) {
  namespace fs = std::filesystem;
  const std::string home = env_or(env, "HOME");
  std::vector<fs::path> folders = {"/etc/conda", "/var/lib/conda"};
  if (const std::string root = env_or(env, "CONDA_ROOT"); !root.empty()) folders.emplace_back(root);
  if (const std::string xdg = env_or(env, "XDG_CONFIG_HOME"); !xdg.empty()) folders.push_back(fs::path(xdg) / "conda");
  if (!home.empty()) folders.insert(folders.end(), {fs::path(home) / ".config/conda", fs::path(home) / ".conda"});
  std::vector<fs::path> files;
  const auto add_folder = [&](const fs::path& folder) {
    files.insert(files.end(), {folder / ".condarc", folder / "condarc"});
    std::vector<fs::path> more;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder / "condarc.d", ec)) {
      const auto ext = entry.path().extension();
      if (ext == ".yml" || ext == ".yaml") more.push_back(entry.path());
    }
    std::ranges::sort(more);
    files.insert(files.end(), more.begin(), more.end());
  };
  for (const fs::path& folder : folders) add_folder(folder);
  if (!home.empty()) files.push_back(fs::path(home) / ".condarc");
  add_folder(prefix);
  if (const std::string active = env_or(env, "CONDA_PREFIX"); !active.empty() && fs::path(active) != prefix)
    add_folder(active);
  if (const std::string given = env_or(env, "CONDARC"); !given.empty()) files.emplace_back(given);
  return files;
}

void probe_conda(EnvInstaller& out, const Environment& env) {
  std::error_code ec;
  out.conda_env = std::filesystem::is_directory(out.prefix / "conda-meta", ec);
  if (!out.conda_env) return;
  out.conda.prefix = out.prefix.string();
  const std::string exe = env_or(env, "CONDA_EXE");
  if (!exe.empty() && std::filesystem::is_regular_file(exe, ec)) {
    out.conda.conda = exe;
  } else if (auto conda = find_program("conda", env)) {
    out.conda.conda = *conda;
  }
  for (const auto& file : condarc_files(env, out.prefix)) {
    if (auto text = read_text(file)) add_condarc(out.conda.channels, *text, file.string());
  }
  add_conda_variables(out.conda.channels, env);
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
  probe_conda(out, env);
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
