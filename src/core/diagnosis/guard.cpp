#include "core/diagnosis/guard.hpp"

#include "core/diagnosis/fix_plan.hpp"

namespace torchfix {
namespace {

bool guarded(const std::string& name) {
  return name == "torch" || name == "torchvision" || name == "torchaudio" || name == "triton" ||
         name.starts_with("pytorch-triton") || name.starts_with("nvidia-");
}

}  // namespace

std::optional<std::string> guard_constraints(const std::map<std::string, std::string>& frozen,
                                             const std::string& interpreter) {
  if (!frozen.contains("torch")) return std::nullopt;
  std::string text = "# torchfix env --guard: the CUDA torch of " + interpreter +
                     " and its companions, as installed.\n"
                     "# pip and uv read it through PIP_CONSTRAINT / UV_CONSTRAINT and this environment's pip.conf.\n";
  for (const auto& [name, line] : frozen) {
    if (guarded(name)) text += line + "\n";
  }
  return text;
}

std::optional<Finding> guard_finding(const PythonEnv& env, std::string_view constraints, const std::string& file) {
  const auto pinned = parse_freeze(constraints);
  const auto torch = pinned.find("torch");
  if (torch == pinned.end()) return std::nullopt;
  const std::string want = torch->second.substr(
      torch->second.find("==") == std::string::npos ? torch->second.size() : torch->second.find("==") + 2);
  Finding f;
  f.section = Section::python;
  f.python = env.interpreter;
  f.package = "torch";
  f.details.push_back("constraints file: " + file);
  const std::string have = env.torch ? env.torch->version : std::string("no torch");
  if (have == want) {
    f.id = "guard.present";
    f.severity = Severity::ok;
    f.title = "a torchfix guard pins torch " + want + " here; pip and uv installs cannot replace it";
    return f;
  }
  f.id = "guard.bypassed";
  f.severity = Severity::warning;
  f.title = "the torchfix guard pins torch " + want + " but " + have +
            " is installed: something installed another torch around it (PIP_CONFIG_FILE=/dev/null, another "
            "installer, a copied wheel)";
  f.fixes.push_back(
      {"put the guarded torch back, or guard the new one",
       {env.interpreter + " -m pip install -c " + file + " torch", "torchfix env --guard --python " + env.interpreter},
       {}});
  return f;
}

}  // namespace torchfix

namespace torchfix {
namespace {

std::string_view trim_view(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// A dotted TOML key or header as one path: blanks and quotes dropped ("tool . 'uv'" -> "tool.uv").
std::string key_path(std::string_view text) {
  std::string out;
  for (char ch : text) {
    if (ch != ' ' && ch != '\t' && ch != '"' && ch != '\'') out += ch;
  }
  return out;
}

bool is_or_under(const std::string& path, const std::string& table) {
  return path == table || path.starts_with(table + ".");
}

// Why a key (or table) at `path` keeps the guard out; nullopt when it does not.
std::optional<std::string> conflict_at(const std::string& path, const UvProjectGuard& guard, bool header) {
  for (const std::string& p : guard.packages) {
    if (is_or_under(path, "tool.uv.sources." + p)) return "it already has a [tool.uv.sources] entry for " + p;
  }
  if (header) return std::nullopt;
  if (path == "tool" || path == "tool.uv" || path == "tool.uv.sources" || path == "tool.uv.index")
    return "it sets " + path +
           " inline (as one value), which a [tool.uv.sources.*] or [[tool.uv.index]] header "
           "cannot extend";
  return std::nullopt;
}

}  // namespace

bool is_uv_project(std::string_view pyproject, bool has_lock) {
  if (has_lock) return true;
  std::size_t start = 0;
  while (start < pyproject.size()) {
    const auto end = std::min(pyproject.find('\n', start), pyproject.size());
    const std::string_view line = trim_view(pyproject.substr(start, end - start));
    start = end + 1;
    if (!line.starts_with('[')) continue;
    const std::string path = key_path(line.substr(0, line.find(']') + 1));
    if (path.starts_with("[tool.uv]") || path.starts_with("[tool.uv.") || path.starts_with("[[tool.uv.")) return true;
  }
  return false;
}

std::optional<UvProjectGuard> uv_project_guard(const std::map<std::string, std::string>& frozen,
                                               const std::string& variant, const std::string& url) {
  if (!frozen.contains("torch")) return std::nullopt;
  UvProjectGuard g{{"torch"}, "torchfix-pytorch-" + variant, url};
  for (const char* companion : k_torch_companions) {
    if (const auto it = frozen.find(companion); it != frozen.end() && local_variant(it->second) == variant)
      g.packages.emplace_back(companion);
  }
  return g;
}

std::string uv_project_block(const UvProjectGuard& guard) {
  std::string text;
  for (const std::string& p : guard.packages)
    text += "[tool.uv.sources." + p + "]\nindex = \"" + guard.index_name + "\"\n\n";
  return text + "[[tool.uv.index]]\nname = \"" + guard.index_name + "\"\nurl = \"" + guard.url +
         "\"\nexplicit = true\n";
}

std::optional<std::string> uv_project_conflict(std::string_view pyproject, const UvProjectGuard& guard) {
  std::string table;  // the current table's path; "" at the root
  bool index_entry = false;
  std::size_t start = 0;
  while (start < pyproject.size()) {
    const auto end = std::min(pyproject.find('\n', start), pyproject.size());
    const std::string_view line = trim_view(pyproject.substr(start, end - start));
    start = end + 1;
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      const bool array = line.starts_with("[[");
      table = key_path(line.substr(array ? 2 : 1, line.find(']') - (array ? 2 : 1)));
      index_entry = array && table == "tool.uv.index";
      if (auto why = conflict_at(table, guard, true)) return why;
      continue;
    }
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string key = key_path(line.substr(0, eq));
    if (index_entry && key == "name" && key_path(line.substr(eq + 1)) == guard.index_name)
      return "it already has an index named " + guard.index_name + " that torchfix did not write";
    if (auto why = conflict_at(table.empty() ? key : table + "." + key, guard, false)) return why;
  }
  return std::nullopt;
}

}  // namespace torchfix
