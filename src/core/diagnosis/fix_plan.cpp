#include "core/diagnosis/fix_plan.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

#include "core/base/quote.hpp"
#include "core/base/text.hpp"
#include "core/resolver/wheel_index.hpp"

namespace torchfix {
namespace {

constexpr std::string_view k_upstream_base = "https://download.pytorch.org/whl/";

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

// The distribution a requirement names ("torch==2.8.*" -> "torch").
std::string requirement_name(const std::string& requirement) {
  return requirement.substr(0, requirement.find_first_of("=<>!~ @["));
}

// The line as printed for `shell`: the variables, then the command.
std::string shown(CommandShell shell, const std::vector<std::pair<std::string, std::string>>& env,
                  const std::vector<std::string>& argv) {
  return env_prefix(shell, env) + command_line(shell, argv);
}

// The installer's argv up to the options: `PY -m pip install` or `uv pip install --python PY`.
std::vector<std::string> install_head(const InstallTarget& t) {
  if (t.installer == Installer::uv) return {t.uv, "pip", "install", "--python", t.interpreter};
  return {t.interpreter, "-m", "pip", "install"};
}

PlannedCommand install_command(const FixStep& step, const InstallTarget& t) {
  PlannedCommand c;
  c.argv = install_head(t);
  const char* reinstall = t.installer == Installer::uv ? "--reinstall" : "--force-reinstall";
  if (step.mode == InstallMode::editable) {
    // The user's checkout, rebuilt where it is: nothing to reinstall or resolve.
    c.argv.insert(c.argv.end(), {"--no-build-isolation", "--no-deps", "-e"});
    c.argv.insert(c.argv.end(), step.requirements.begin(), step.requirements.end());
    c.env = step.env;
    c.shown = shown(t.shell, c.env, c.argv);
    return c;
  }
  if (step.mode == InstallMode::variant_index) {
    // The project's index beside PyPI: pip takes its `+cuNNN` build, newer than PyPI's of the release.
    c.argv.insert(c.argv.end(), {reinstall, "--no-deps"});
    c.argv.insert(c.argv.end(), step.requirements.begin(), step.requirements.end());
    c.argv.insert(c.argv.end(), {"--extra-index-url", step.index_url});
    c.env = step.env;
    c.shown = shown(t.shell, c.env, c.argv);
    return c;
  }
  const bool page_only = step.mode == InstallMode::project_page_only;
  if ((step.mode == InstallMode::project_index || page_only) && !step.requirements.empty()) {
    // The page lists wheels only; --only-binary keeps pip from building a
    // PyPI sdist of the same name when the page has no wheel for this Python,
    // --no-index from taking PyPI's release of the same version at all.
    const std::string name = requirement_name(step.requirements.front());
    c.argv.insert(c.argv.end(), {reinstall, "--no-deps"});
    if (page_only) {
      c.argv.push_back("--no-index");
    } else {
      c.argv.insert(c.argv.end(), {"--only-binary", name});
    }
    c.argv.insert(c.argv.end(), {name, "-f", step.index_url});
    c.env = step.env;
    c.shown = shown(t.shell, c.env, c.argv);
    return c;
  }
  if (step.mode == InstallMode::pin_no_deps) c.argv.push_back("--no-deps");
  if (step.mode == InstallMode::source_build && !step.requirements.empty()) {
    c.argv.insert(c.argv.end(),
                  {"--no-build-isolation", "--no-binary", requirement_name(step.requirements.front()), "--no-deps"});
  }
  if (step.mode != InstallMode::pin_no_deps) c.argv.push_back(reinstall);
  if (step.mode == InstallMode::nightly && t.installer == Installer::uv) {
    c.argv.insert(c.argv.end(), {"--prerelease", "allow"});
  } else if (step.mode == InstallMode::nightly) {
    c.argv.push_back("--pre");
  }
  c.argv.insert(c.argv.end(), step.requirements.begin(), step.requirements.end());
  if (!step.index_url.empty()) {
    const ChosenIndex index = choose_index(step.index_url, step.variant, t.config);
    c.argv.insert(c.argv.end(), {"--index-url", index.url});
    if (!index.origin.empty()) c.note = "the mirror configured in " + index.origin + "; upstream: " + index.upstream;
  }
  c.env = step.env;
  c.shown = shown(t.shell, c.env, c.argv);
  return c;
}

// What an install step changes in the environment, read from its torch facts
// (the Situation's) and its distributions: "torch 2.7.1+cu126 (cu126) -> ...".
std::string change_of(const FixStep& step, const EnvFacts& facts) {
  const std::string& req = step.requirements.front();
  if (step.mode == InstallMode::editable) {
    std::string with;
    for (const auto& [name, value] : step.env) with += (with.empty() ? " with " : " ") + name + "=" + value;
    return "the editable checkout " + req + " -> rebuilt in place" + with + " (its old build is not kept)";
  }
  const std::string name = requirement_name(req);
  std::string from = "not installed";
  if (name == "torch" && facts.env && facts.env->torch) {
    from = facts.env->torch->version + " (" + (facts.variant.empty() ? "a local build" : facts.variant) + ")";
  } else if (facts.env) {
    if (const auto it = facts.env->distributions.find(name); it != facts.env->distributions.end()) from = it->second;
  }
  const std::string to = step.mode == InstallMode::source_build ? req + " built from source here"
                         : step.variant.empty()                 ? req
                                                                : req + " from the " + step.variant + " index";
  return name + " " + from + " -> " + to;
}

}  // namespace

std::string local_variant(const std::string& line) {
  const auto plus = line.find('+');
  if (line.find(" @ ") != std::string::npos || plus == std::string::npos) return {};
  const std::string label = line.substr(plus + 1);
  return is_variant(label) ? label : std::string();
}

std::string_view to_string(Installer installer) {
  return installer == Installer::uv ? "uv" : "pip";
}

Installer installer_from_pyvenv_cfg(std::string_view pyvenv_cfg) {
  for (const std::string_view raw : split_lines(pyvenv_cfg)) {
    const std::string line = trim(raw);
    const auto eq = line.find('=');
    if (eq != std::string::npos && trim(line.substr(0, eq)) == "uv") return Installer::uv;
  }
  return Installer::pip;
}

void add_pip_conf(IndexConfig& config, std::string_view text, const std::string& origin) {
  bool continuing = false;
  for (const std::string_view raw : split_lines(text)) {
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
    const std::string key = normalise_distribution(trim(line.substr(0, eq)));
    if (key != "index-url" && key != "extra-index-url") continue;
    continuing = true;
    for (std::string& url : words(line.substr(eq + 1))) add_url(config, std::move(url), origin);
  }
}

void add_uv_toml(IndexConfig& config, std::string_view text, const std::string& origin) {
  static const std::regex url_line(R"(^\s*(url|index-url|extra-index-url)\s*=\s*["']([^"']+)["'])");
  for (const std::string_view raw : split_lines(text)) {
    const std::string line(raw);
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

InstallTarget install_target(const Situation& x, std::size_t python, Installer installer, std::string uv,
                             IndexConfig config) {
  InstallTarget t;
  if (python < x.pythons.size() && x.pythons[python].env) t.interpreter = x.pythons[python].env->interpreter;
  t.shell = x.shell;
  t.installer = installer;
  t.uv = std::move(uv);
  t.config = std::move(config);
  return t;
}

FixPlan plan_fix(const Fix& fix, const std::vector<std::string>& leaves_behind, const Situation& x, std::size_t python,
                 const InstallTarget& target) {
  FixPlan plan;
  plan.summary = fix.summary;
  plan.leaves_behind = leaves_behind;
  const EnvFacts none;
  const EnvFacts& facts = python < x.pythons.size() ? x.pythons[python] : none;
  for (const FixStep& step : fix.steps) {
    if (step.kind == StepKind::install) {
      plan.commands.push_back(install_command(step, target));
      if (facts.env) plan.commands.back().index_check = index_note(step, facts.env->index_pages);
      if (!step.requirements.empty()) plan.changes.push_back(change_of(step, facts));
    } else {
      plan.shown_only.push_back(step.command);
    }
  }
  if (x.platform == PlatformKind::windows) {
    plan.refused = "torchfix fix runs installers on Linux and WSL2, not on native Windows; run the commands yourself";
    plan.shown_only = fix.commands;
    plan.commands.clear();
  } else if (fix.steps.empty() && !fix.commands.empty()) {
    plan.refused = "this fix has no commands torchfix can run; run them yourself";
    plan.shown_only = fix.commands;
  } else if (plan.commands.empty()) {
    plan.refused = "this fix changes the driver or the container, which torchfix never does; do it yourself";
  }
  return plan;
}

std::vector<std::string> freeze_argv(const InstallTarget& t) {
  if (t.installer == Installer::uv) return {t.uv, "pip", "freeze", "--python", t.interpreter};
  return {t.interpreter, "-m", "pip", "freeze", "--all"};
}

std::map<std::string, std::string> parse_freeze(std::string_view text) {
  static const std::regex name(R"(^([A-Za-z0-9][A-Za-z0-9._-]*))");
  std::map<std::string, std::string> out;
  for (const std::string_view raw : split_lines(text)) {
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#' || line.starts_with("-e ")) continue;
    std::smatch m;
    if (std::regex_search(line, m, name)) out[normalise_distribution(m[1].str())] = line;
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
                                             const std::map<std::string, std::string>& now,
                                             const InstallTarget& target) {
  std::vector<PlannedCommand> out;
  std::vector<std::string> added;
  for (const auto& [name, line] : now) {
    if (!recorded.contains(name)) added.push_back(name);
  }
  if (!added.empty()) {
    PlannedCommand c;
    c.argv = target.installer == Installer::uv
                 ? std::vector<std::string>{target.uv, "pip", "uninstall", "--python", target.interpreter}
                 : std::vector<std::string>{target.interpreter, "-m", "pip", "uninstall", "-y"};
    c.argv.insert(c.argv.end(), added.begin(), added.end());
    c.shown = shown(target.shell, {}, c.argv);
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
    PlannedCommand c = install_command(step, target);
    // The exact recorded set: nothing else moves.
    c.argv.insert(c.argv.begin() + static_cast<long>(install_head(target).size()), "--no-deps");
    c.shown = shown(target.shell, c.env, c.argv);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace torchfix
