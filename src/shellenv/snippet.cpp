#include "shellenv/snippet.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "shellenv/rc_file.hpp"
#include "shellenv/utf8.hpp"

namespace torchfix::shellenv {
namespace {

constexpr std::array<std::string_view, 3> k_global_keys = {"shell", "version", "purpose"};
constexpr std::array<std::string_view, 3> k_variable_keys = {"name", "value", "reason"};

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || c == '_';
}

// Finds the placeholder starting at `pos`, if any, and returns its key.
std::optional<std::string_view> placeholder_at(std::string_view text, std::size_t pos, std::size_t& length) {
  if (text.substr(pos, 2) != "{{") return std::nullopt;
  std::size_t end = pos + 2;
  while (end < text.size() && is_key_char(text[end])) ++end;
  if (end == pos + 2 || text.substr(end, 2) != "}}") return std::nullopt;
  length = end + 2 - pos;
  return text.substr(pos + 2, end - pos - 2);
}

std::string substitute(std::string_view text, const std::map<std::string_view, std::string>& values) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 0;
    if (auto key = placeholder_at(text, i, length)) {
      out += values.at(*key);  // keys were checked when the template was parsed
      i += length;
    } else {
      out += text[i++];
    }
  }
  return out;
}

// A reason is a comment: one line, and valid UTF-8 so the rc file stays text.
std::string one_line(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t len = utf8_length_at(text, i);
    if (len == 0) {
      out += '?';
      ++i;
    } else if (c < 0x20 || c == 0x7F) {
      out += ' ';
      ++i;
    } else {
      out.append(text.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace

Expected<SnippetTemplate> parse_template(std::string_view text, Shell shell, std::string_view origin) {
  SnippetTemplate tmpl;
  tmpl.shell = shell;
  std::map<std::string, std::string*> sections = {
      {"header", &tmpl.header}, {"set", &tmpl.set}, {"prepend", &tmpl.prepend}, {"footer", &tmpl.footer}};
  std::map<std::string, bool> seen;
  std::string* current = nullptr;
  bool per_variable = false;
  std::size_t line_no = 0;
  const auto error = [&](const std::string& what) {
    return fail(std::string(origin) + ":" + std::to_string(line_no) + ": " + what +
                " (the syntax is described at the top of the template and in docs/env.md)");
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    ++line_no;
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("##")) continue;
    if (line.starts_with("@@")) {
      std::string name(line.substr(2));
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      auto it = sections.find(name);
      if (it == sections.end())
        return error("unknown section '" + name + "'; sections are header, set, prepend, footer");
      if (seen[name]) return error("section '" + name + "' appears twice");
      seen[name] = true;
      current = it->second;
      per_variable = name == "set" || name == "prepend";
      continue;
    }
    if (!current) {
      if (line.empty()) continue;
      return error("text before the first '@@ section' line");
    }
    for (std::size_t i = 0; i < line.size(); ++i) {
      std::size_t length = 0;
      auto key = placeholder_at(line, i, length);
      if (!key) continue;
      const bool global = std::ranges::find(k_global_keys, *key) != k_global_keys.end();
      const bool variable = std::ranges::find(k_variable_keys, *key) != k_variable_keys.end();
      if (!global && !variable) {
        return error("unknown placeholder {{" + std::string(*key) +
                     "}}; known: name, value, reason, shell, version, purpose");
      }
      if (variable && !per_variable) {
        return error("{{" + std::string(*key) + "}} is only allowed in the set and prepend sections");
      }
      i += length - 1;
    }
    current->append(line);
    current->push_back('\n');
  }
  for (const char* needed : {"set", "prepend"}) {
    if (!seen[needed]) {
      return fail(std::string(origin) + ": the section '@@ " + needed + "' is missing");
    }
  }
  return tmpl;
}

std::string template_name(Shell shell) {
  switch (shell) {
    case Shell::powershell:
      return "env.ps1";
    case Shell::cmd:
      return "env.cmd";
    default:
      return "env." + std::string(to_string(shell));
  }
}

std::filesystem::path template_path(const std::filesystem::path& templates_dir, Shell shell) {
  return templates_dir / template_name(shell);
}

Expected<SnippetTemplate> load_template(const std::filesystem::path& templates_dir, Shell shell) {
  const auto path = template_path(templates_dir, shell);
  auto text = read_file_bytes(path);
  if (!text) return fail("cannot load the " + std::string(to_string(shell)) + " template: " + text.error().message);
  return parse_template(*text, shell, path.string());
}

Expected<SnippetTemplate> load_template(const DataSource& source, Shell shell) {
  const std::string relative = "templates/" + template_name(shell);
  auto text = read_data_file(source, relative, data_file_limits("template"));
  if (!text) return fail("cannot load the " + std::string(to_string(shell)) + " template: " + text.error().message);
  return parse_template(*text, shell, source.label(relative));
}

Expected<std::string> render_snippet(const SnippetTemplate& tmpl, const std::vector<EnvVar>& vars,
                                     const SnippetInfo& info) {
  std::map<std::string_view, std::string> values = {
      {"shell", std::string(to_string(tmpl.shell))},
      {"version", one_line(info.version)},
      {"purpose", std::string(to_string(info.purpose))},
  };
  std::string out = substitute(tmpl.header, values);
  for (const EnvVar& var : vars) {
    if (auto ok = validate(var); !ok) return std::unexpected(ok.error());
    auto quoted = quote(tmpl.shell, var.value);
    if (!quoted) return fail(var.name + ": " + quoted.error().message);
    values["name"] = var.name;
    values["value"] = *quoted;
    values["reason"] = one_line(var.reason);
    out += substitute(var.action == VarAction::set ? tmpl.set : tmpl.prepend, values);
  }
  out += substitute(tmpl.footer, values);
  return out;
}

}  // namespace torchfix::shellenv
