#include "core/facts/toml_text.hpp"

#include <algorithm>
#include <cctype>

#include "core/base/nearest.hpp"

namespace torchfix {
namespace {

// toml++ 3.3 parses a dotted key by recursion: 100,000 parts overflow the
// stack (SIGSEGV). No table of torchfix's needs more than a few parts, or a
// line longer than 64 KiB; both are refused before the text reaches toml++.
constexpr std::size_t k_line_max = 64u << 10;
constexpr std::size_t k_dots_max = 64;

Expected<void> check_lines(std::string_view text, const std::string& file) {
  std::size_t line = 1;
  for (std::size_t start = 0; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view row = text.substr(start, end - start);
    if (row.size() > k_line_max) return fail(file + ":" + std::to_string(line) + ": line longer than 64 KiB");
    // The key is what comes before '=' (a string value may hold dots).
    const std::string_view key = row.substr(0, row.find('='));
    if (static_cast<std::size_t>(std::ranges::count(key, '.')) > k_dots_max) {
      return fail(file + ":" + std::to_string(line) + ": a key of more than " + std::to_string(k_dots_max) +
                  " dotted parts");
    }
    start = end + 1;
  }
  return {};
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <typename Range, typename Name>
std::string closest(std::string_view wanted, const Range& candidates, Name name) {
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    const std::string n(name(c));
    const std::size_t d = edit_distance(wanted, n);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(n);
    }
  }
  return best;
}

std::string shown(const Field& f) {
  return f.type == FieldType::tables  ? "[[" + std::string(f.key) + "]]"
         : f.type == FieldType::table ? "[" + std::string(f.key) + "]"
                                      : "'" + std::string(f.key) + "'";
}

std::string list_keys(const TableSchema& schema) {
  std::string out;
  for (const Field& f : schema.fields) out += (out.empty() ? "" : ", ") + shown(f);
  return out;
}

std::string list_words(std::span<const std::string_view> words) {
  std::string out;
  for (std::string_view w : words) out += (out.empty() ? "'" : ", '") + std::string(w) + "'";
  return out;
}

std::string_view type_text(FieldType type) {
  switch (type) {
    case FieldType::text:
      return "a string";
    case FieldType::version:
      return "a version string like \"12.8\"";
    case FieldType::cc:
      return "a compute capability string like \"12.0\"";
    case FieldType::integer:
      return "an integer";
    case FieldType::number:
      return "a number";
    case FieldType::boolean:
      return "true or false";
    case FieldType::texts:
      return "a non-empty list of strings";
    case FieldType::table:
      return "a table";
    case FieldType::tables:
      return "an array of tables";
  }
  return "a value";
}

bool is_version(std::string_view text) {
  auto v = Version::parse(text);
  return v && v->str() == text;
}

// Says what is wrong with one string value of `field`, empty when nothing is.
std::string check_word(const Field& field, std::string_view text) {
  if (field.type == FieldType::version && !is_version(text)) {
    return "is not a version; write dotted numbers only, like \"12.8\" or \"570.26\"";
  }
  if (field.type == FieldType::cc) {
    if (auto cc = ComputeCapability::parse(text); !cc) return "is not a compute capability; write it like \"12.0\"";
  }
  if (!field.words.empty() && std::ranges::find(field.words, text) == field.words.end()) {
    const std::string near = closest(lower(text), field.words, [](std::string_view w) { return lower(w); });
    std::string spelled;
    for (std::string_view w : field.words) {
      if (lower(w) == near) spelled = w;
    }
    return "is not a known word" + (near.empty() ? std::string() : " (did you mean '" + spelled + "'?)") +
           "; use one of " + list_words(field.words);
  }
  return {};
}

bool type_fits(const toml::node& node, FieldType type) {
  switch (type) {
    case FieldType::text:
    case FieldType::version:
    case FieldType::cc:
      return node.is_string();
    case FieldType::integer:
      return node.is_integer();
    case FieldType::number:
      return node.is_floating_point() || node.is_integer();
    case FieldType::boolean:
      return node.is_boolean();
    case FieldType::texts:
      return node.is_array() && !node.as_array()->empty() &&
             std::ranges::all_of(*node.as_array(), [](const toml::node& n) { return n.is_string(); });
    case FieldType::table:
      return node.is_table();
    case FieldType::tables:
      return node.is_array_of_tables();
  }
  return false;
}

class Checker {
 public:
  explicit Checker(const std::string& file) : m_file(file) {}

  Expected<void> table(const toml::table& t, const TableSchema& schema) const {
    for (const auto& [key, node] : t) {
      const auto field = std::ranges::find(schema.fields, key.str(), &Field::key);
      if (field == schema.fields.end()) return unknown(key.str(), node, schema);
      if (auto r = value(*field, node, schema); !r) return r;
    }
    for (const Field& f : schema.fields) {
      if (f.need == Need::required && !t.contains(f.key)) {
        return at(line_of(t), std::string(schema.name) + " lacks " + shown(f) + " (" + std::string(type_text(f.type)) +
                                  "); add it" + (f.key == "source" ? ": every fact carries its source" : ""));
      }
    }
    return {};
  }

 private:
  Expected<void> unknown(std::string_view key, const toml::node& node, const TableSchema& schema) const {
    const bool array = node.is_array_of_tables();
    const std::string name = array ? "[[" + std::string(key) + "]]" : "'" + std::string(key) + "'";
    const std::string near = closest(key, schema.fields, [](const Field& f) { return f.key; });
    std::string hint;
    if (!near.empty()) hint = " (did you mean " + shown(*std::ranges::find(schema.fields, near, &Field::key)) + "?)";
    return at(line_of(node), std::string(schema.name) + " has no " + name + hint + "; " + std::string(schema.name) +
                                 " holds " + list_keys(schema) + " (docs/knowledge.md)");
  }

  Expected<void> value(const Field& field, const toml::node& node, const TableSchema& schema) const {
    const std::string where = std::string(schema.name) + " " + shown(field);
    if (!type_fits(node, field.type)) {
      return at(line_of(node), where + " must be " + std::string(type_text(field.type)) + "; fix its value");
    }
    if (field.type == FieldType::table) return table(*node.as_table(), *field.sub);
    if (field.type == FieldType::tables) {
      for (const toml::node& item : *node.as_array()) {
        if (auto r = table(*item.as_table(), *field.sub); !r) return r;
      }
      return {};
    }
    if (field.type == FieldType::texts) {
      for (const toml::node& item : *node.as_array()) {
        const std::string why = check_word(field, *item.value<std::string>());
        if (!why.empty()) return at(line_of(item), where + ": '" + *item.value<std::string>() + "' " + why);
      }
      return {};
    }
    if (field.key == "source" && node.value<std::string>()->empty()) {
      return at(line_of(node), where + " is empty; every fact carries its source (a URL or the binary measured)");
    }
    if (node.is_string()) {
      const std::string why = check_word(field, *node.value<std::string>());
      if (!why.empty()) return at(line_of(node), where + " = '" + *node.value<std::string>() + "' " + why);
    }
    return {};
  }

  std::unexpected<Error> at(int line, const std::string& what) const {
    return fail(m_file + ":" + std::to_string(line) + ": " + what);
  }

  const std::string& m_file;
};

}  // namespace

Expected<toml::table> parse_toml_text(std::string_view text, const std::string& file) {
  if (auto ok = check_lines(text, file); !ok) return std::unexpected(ok.error());
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return fail(file + ":" + std::to_string(e.source().begin.line) +
                ": not valid TOML: " + std::string(e.description()));
  }
}

Expected<void> check_table(const toml::table& table, const TableSchema& schema, const std::string& file) {
  return Checker(file).table(table, schema);
}

Expected<toml::table> parse_checked_toml(std::string_view text, const std::string& file, const TableSchema& schema) {
  TF_TRY(root, parse_toml_text(text, file));
  if (auto ok = check_table(root, schema, file); !ok) return std::unexpected(ok.error());
  return root;
}

int line_of(const toml::node& node) {
  if (node.source().begin.line > 0) return static_cast<int>(node.source().begin.line);
  if (const toml::array* a = node.as_array(); a && !a->empty()) return line_of(*a->begin());
  return 1;
}

Row::Row(const toml::table& table, const std::string& file, std::string name)
    : m_table(table), m_file(file), m_name(std::move(name)) {}

int Row::line(std::string_view key) const {
  const toml::node* node = key.empty() ? nullptr : m_table.get(key);
  return line_of(node ? *node : m_table);
}

Error Row::error(const std::string& what, std::string_view key) const {
  return Error{m_file + ":" + std::to_string(line(key)) + ": " + m_name + ": " + what};
}

Expected<std::string> Row::string(std::string_view key) const {
  if (auto v = m_table[key].value<std::string>()) return *v;
  return std::unexpected(error("missing or non-string field '" + std::string(key) + "'", key));
}

std::optional<std::string> Row::optional_string(std::string_view key) const {
  return m_table[key].value<std::string>();
}

bool Row::flag(std::string_view key) const {
  return m_table[key].value_or(false);
}

Expected<std::int64_t> Row::integer(std::string_view key) const {
  if (auto v = m_table[key].value<std::int64_t>()) return *v;
  return std::unexpected(error("missing integer field '" + std::string(key) + "'", key));
}

std::optional<std::int64_t> Row::optional_integer(std::string_view key) const {
  return m_table[key].value<std::int64_t>();
}

std::optional<double> Row::number(std::string_view key) const {
  return m_table[key].value<double>();
}

Expected<Version> Row::version(std::string_view key) const {
  TF_TRY(text, string(key));
  if (is_version(text)) return *Version::parse(text);
  return std::unexpected(error("field '" + std::string(key) + "' = '" + text + "' is not a version", key));
}

Expected<std::optional<Version>> Row::optional_version(std::string_view key) const {
  if (!m_table.contains(key)) return std::optional<Version>{};
  TF_TRY(v, version(key));
  return std::optional<Version>(v);
}

Expected<std::vector<std::string>> Row::strings(std::string_view key) const {
  const toml::array* array = m_table[key].as_array();
  if (!array || array->empty()) return std::unexpected(error("missing or empty list '" + std::string(key) + "'", key));
  std::vector<std::string> out;
  for (const auto& item : *array) {
    auto s = item.value<std::string>();
    if (!s) return std::unexpected(error("list '" + std::string(key) + "' must hold strings", key));
    out.push_back(*s);
  }
  return out;
}

Expected<ComputeCapability> Row::cc(std::string_view key) const {
  TF_TRY(text, string(key));
  auto cc = ComputeCapability::parse(text);
  if (!cc) return std::unexpected(error(cc.error().message, key));
  return *cc;
}

std::vector<Row> Row::rows(std::string_view key, const std::string& name) const {
  std::vector<Row> out;
  if (const toml::array* array = m_table[key].as_array()) {
    for (const toml::node& item : *array) {
      if (const toml::table* t = item.as_table()) out.emplace_back(*t, m_file, name);
    }
  }
  return out;
}

}  // namespace torchfix
