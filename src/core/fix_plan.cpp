#include "core/fix_plan.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

#include "core/quote.hpp"

namespace torchfix {
namespace {

constexpr std::string_view k_upstream_base = "https://download.pytorch.org/whl/";

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (char ch : text) {
    if (std::isspace(static_cast<unsigned char>(ch))) {
      if (!word.empty()) out.push_back(std::move(word));
      word.clear();
    } else {
      word += ch;
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

void add_url(IndexConfig& config, std::string url, const std::string& origin) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.empty()) return;
  for (const auto& [known, from] : config.urls) {
    if (known == url) return;
  }
  config.urls.emplace_back(std::move(url), origin);
}

// A torch variant as the PyTorch index names its folders.
bool is_variant(std::string_view segment) {
  static const std::regex variant(R"(cpu|xpu|cu[0-9]{2,3}|rocm[0-9]+(\.[0-9]+)*)");
  return std::regex_match(segment.begin(), segment.end(), variant);
}

// A word as a POSIX shell reads it; options (--index-url) stay bare, as a user types them.
std::string shell_word(const std::string& word) {
  const auto body = word.find_first_not_of('-');
  if (body != 0 && body != std::string::npos && quote_word(CommandShell::posix, word.substr(body)) == word.substr(body))
    return word;
  return quote_word(CommandShell::posix, word);
}

std::string shown(const std::vector<std::pair<std::string, std::string>>& env, const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& [name, value] : env) line += name + "=" + quote_word(CommandShell::posix, value) + " ";
  for (std::size_t i = 0; i < argv.size(); ++i) line += (i ? " " : "") + shell_word(argv[i]);
  return line;
}

// The installer's argv up to the options: `PY -m pip install` or `uv pip install --python PY`.
std::vector<std::string> install_head(Installer installer, const std::string& py, const std::string& uv) {
  if (installer == Installer::uv) return {uv, "pip", "install", "--python", py};
  return {py, "-m", "pip", "install"};
}

PlannedCommand install_command(const FixStep& step, Installer installer, const std::string& py, const std::string& uv,
                               const IndexConfig& config) {
  PlannedCommand c;
  c.argv = install_head(installer, py, uv);
  const char* reinstall = installer == Installer::uv ? "--reinstall" : "--force-reinstall";
  if (step.mode == InstallMode::pin_no_deps) c.argv.push_back("--no-deps");
  if (step.mode == InstallMode::source_build && !step.requirements.empty()) {
    std::string name = step.requirements.front();
    name = name.substr(0, name.find_first_of("=<>!~ "));
    c.argv.insert(c.argv.end(), {"--no-build-isolation", "--no-binary", name, "--no-deps"});
  }
  if (step.mode != InstallMode::pin_no_deps) c.argv.push_back(reinstall);
  c.argv.insert(c.argv.end(), step.requirements.begin(), step.requirements.end());
  if (!step.index_url.empty()) {
    const ChosenIndex index = choose_index(step.index_url, step.variant, config);
    c.argv.insert(c.argv.end(), {"--index-url", index.url});
    if (!index.origin.empty()) c.note = "the mirror configured in " + index.origin + "; upstream: " + index.upstream;
  }
  c.env = step.env;
  c.shown = shown(c.env, c.argv);
  return c;
}

// The local variant label of a pinned version ("torch==2.7.1+cu126" -> "cu126").
std::string local_variant(const std::string& line) {
  const auto plus = line.find('+');
  if (line.find(" @ ") != std::string::npos || plus == std::string::npos) return {};
  const std::string label = line.substr(plus + 1);
  return is_variant(label) ? label : std::string();
}

std::string normalize(std::string_view name) {
  std::string out;
  for (char ch : name) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out += (lower == '_' || lower == '.') ? '-' : lower;
  }
  return out;
}

}  // namespace

std::string_view to_string(Installer installer) {
  return installer == Installer::uv ? "uv" : "pip";
}

Installer installer_from_pyvenv_cfg(std::string_view pyvenv_cfg) {
  std::size_t start = 0;
  while (start < pyvenv_cfg.size()) {
    const auto end = std::min(pyvenv_cfg.find('\n', start), pyvenv_cfg.size());
    const std::string line = trim(pyvenv_cfg.substr(start, end - start));
    const auto eq = line.find('=');
    if (eq != std::string::npos && trim(line.substr(0, eq)) == "uv") return Installer::uv;
    start = end + 1;
  }
  return Installer::pip;
}

void add_pip_conf(IndexConfig& config, std::string_view text, const std::string& origin) {
  bool continuing = false;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';' || line[0] == '[') {
      continuing = false;
      continue;
    }
    // Values continue on indented lines (configparser's multi-line values).
    if (continuing && (raw[0] == ' ' || raw[0] == '\t')) {
      for (std::string& url : words(line)) add_url(config, std::move(url), origin);
      continue;
    }
    const auto eq = line.find_first_of("=:");
    continuing = false;
    if (eq == std::string::npos) continue;
    const std::string key = normalize(trim(line.substr(0, eq)));
    if (key != "index-url" && key != "extra-index-url") continue;
    continuing = true;
    for (std::string& url : words(line.substr(eq + 1))) add_url(config, std::move(url), origin);
  }
}

void add_uv_toml(IndexConfig& config, std::string_view text, const std::string& origin) {
  static const std::regex url_line(R"(^\s*(url|index-url|extra-index-url)\s*=\s*["']([^"']+)["'])");
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string line(text.substr(start, end - start));
    start = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, url_line)) add_url(config, m[2].str(), origin);
  }
}

void add_index_variables(IndexConfig& config, const std::map<std::string, std::string>& env) {
  for (const char* name :
       {"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL"}) {
    const auto it = env.find(name);
    if (it == env.end()) continue;
    for (std::string& word : words(it->second)) {
      // uv's named indexes: NAME=URL.
      const auto eq = word.find('=');
      if (eq != std::string::npos && word.find("://") > eq) word = word.substr(eq + 1);
      add_url(config, std::move(word), name);
    }
  }
}

ChosenIndex choose_index(const std::string& upstream, const std::string& variant, const IndexConfig& config) {
  ChosenIndex chosen{upstream, upstream, {}};
  if (variant.empty()) return chosen;
  for (const auto& [url, origin] : config.urls) {
    const auto slash = url.rfind('/');
    if (slash == std::string::npos || !is_variant(url.substr(slash + 1))) continue;
    const std::string base = url.substr(0, slash + 1);
    if (base == k_upstream_base) continue;
    chosen.url = base + variant;
    chosen.origin = origin;
    return chosen;
  }
  return chosen;
}

FixPlan plan_fix(const Fix& fix, const std::vector<std::string>& leaves_behind, Installer installer,
                 const std::string& interpreter, const std::string& uv, const IndexConfig& config) {
  FixPlan plan;
  plan.summary = fix.summary;
  plan.leaves_behind = leaves_behind;
  for (const FixStep& step : fix.steps) {
    if (step.kind == StepKind::install) {
      plan.commands.push_back(install_command(step, installer, interpreter, uv, config));
    } else {
      plan.shown_only.push_back(step.command);
    }
  }
  if (fix.steps.empty() && !fix.commands.empty()) {
    plan.refused = "this fix has no commands torchfix can run; run them yourself";
    plan.shown_only = fix.commands;
  } else if (plan.commands.empty()) {
    plan.refused = "this fix changes the driver or the container, which torchfix never does; do it yourself";
  }
  return plan;
}

std::string command_line(const std::vector<std::string>& argv) {
  return shown({}, argv);
}

std::vector<std::string> freeze_argv(Installer installer, const std::string& interpreter, const std::string& uv) {
  if (installer == Installer::uv) return {uv, "pip", "freeze", "--python", interpreter};
  return {interpreter, "-m", "pip", "freeze", "--all"};
}

std::map<std::string, std::string> parse_freeze(std::string_view text) {
  static const std::regex name(R"(^([A-Za-z0-9][A-Za-z0-9._-]*))");
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const std::string line = trim(text.substr(start, end - start));
    start = end + 1;
    if (line.empty() || line[0] == '#' || line.starts_with("-e ")) continue;
    std::smatch m;
    if (std::regex_search(line, m, name)) out[normalize(m[1].str())] = line;
  }
  return out;
}

std::vector<std::string> freeze_differences(const std::map<std::string, std::string>& a,
                                            const std::map<std::string, std::string>& b) {
  std::vector<std::string> out;
  for (const auto& [name, line] : a) {
    const auto it = b.find(name);
    if (it == b.end() || it->second != line) out.push_back(name);
  }
  for (const auto& [name, line] : b) {
    if (!a.contains(name)) out.push_back(name);
  }
  std::ranges::sort(out);
  return out;
}

std::vector<PlannedCommand> restore_commands(const std::map<std::string, std::string>& recorded,
                                             const std::map<std::string, std::string>& now, Installer installer,
                                             const std::string& interpreter, const std::string& uv,
                                             const IndexConfig& config) {
  std::vector<PlannedCommand> out;
  std::vector<std::string> added;
  for (const auto& [name, line] : now) {
    if (!recorded.contains(name)) added.push_back(name);
  }
  if (!added.empty()) {
    PlannedCommand c;
    c.argv = installer == Installer::uv ? std::vector<std::string>{uv, "pip", "uninstall", "--python", interpreter}
                                        : std::vector<std::string>{interpreter, "-m", "pip", "uninstall", "-y"};
    c.argv.insert(c.argv.end(), added.begin(), added.end());
    c.shown = shown({}, c.argv);
    out.push_back(std::move(c));
  }
  for (const auto& [name, line] : recorded) {
    const auto it = now.find(name);
    if (it != now.end() && it->second == line) continue;
    FixStep step{.mode = InstallMode::reinstall, .requirements = {line}};
    if (const std::string variant = local_variant(line); !variant.empty()) {
      step.index_url = std::string(k_upstream_base) + variant;
      step.variant = variant;
    }
    PlannedCommand c = install_command(step, installer, interpreter, uv, config);
    // The exact recorded set: nothing else moves.
    c.argv.insert(c.argv.begin() + static_cast<long>(install_head(installer, interpreter, uv).size()), "--no-deps");
    c.shown = shown(c.env, c.argv);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace torchfix
