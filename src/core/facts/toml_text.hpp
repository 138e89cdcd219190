#pragma once
// What every knowledge-table parser in core shares: parsing TOML text with an
// error that names the file and line, a schema per table (its keys, their
// types, the words a key allows) checked before any row is read, and one Row
// accessor for the rows. Included only by core's table parsers (toml++ is
// heavy). The schemas themselves sit beside their parsers (knowledge_tables.cpp,
// ngc_table.cpp, recipe.cpp, tune.cpp); docs/knowledge.md describes them.

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Names the type a key's value must have.
enum class FieldType {
  text,     // a string
  version,  // a string of dotted numbers and nothing else, "12.8"
  cc,       // a compute capability string, "12.0"
  integer,
  number,  // a float or an integer
  boolean,
  texts,   // a non-empty array of strings
  table,   // a [key] table, checked against Field::sub
  tables,  // an array of tables, [[key]], each checked against Field::sub
};

/// Says whether a key must be present.
enum class Need { required, optional };

struct TableSchema;

/// Describes one key of a table: its name, its type, whether it must be
/// present, the only words it allows (text and texts; empty: any) and, for
/// table and tables, the schema of what it holds.
struct Field {
  std::string_view key;
  FieldType type;
  Need need = Need::required;
  std::span<const std::string_view> words = {};
  const TableSchema* sub = nullptr;
};

/// Describes a table: the name errors show ("[[wheel]]") and its keys. A key
/// not listed is an error (a typo would otherwise be ignored).
struct TableSchema {
  std::string_view name;
  std::span<const Field> fields;
};

/// Parses `text` as TOML. Errors: "FILE:LINE: not valid TOML: WHAT".
Expected<toml::table> parse_toml_text(std::string_view text, const std::string& file);

/// Checks `table` and every table under it against `schema`: unknown keys and
/// arrays (with the closest known name), missing required keys, wrong types,
/// unparsable versions and compute capabilities, words outside a key's list.
/// Errors: "FILE:LINE: WHAT; WHAT TO DO" for the first problem found.
Expected<void> check_table(const toml::table& table, const TableSchema& schema, const std::string& file);

/// Parses `text` and checks it against `schema` (parse_toml_text, check_table).
Expected<toml::table> parse_checked_toml(std::string_view text, const std::string& file, const TableSchema& schema);

/// Returns the line a node starts on (an array of tables: its first table's), at least 1.
int line_of(const toml::node& node);

/// Reads the keys of one table (a row of an array of tables, a recipe, its
/// [memory]) with the file and line in every error. After check_table the
/// required keys are there with their types; the accessors still fail
/// cleanly on a table that was not checked.
class Row {
 public:
  /// Wraps `table` of `file`; `name` is what errors call it ("[[wheel]]").
  Row(const toml::table& table, const std::string& file, std::string name);

  const toml::table& table() const { return m_table; }
  const std::string& file() const { return m_file; }
  /// Returns the line of `key`'s value, or of the row when `key` is empty or absent.
  int line(std::string_view key = {}) const;
  /// Returns "FILE:LINE: NAME: what", LINE being `key`'s (or the row's).
  Error error(const std::string& what, std::string_view key = {}) const;
  bool has(std::string_view key) const { return m_table.contains(key); }

  Expected<std::string> string(std::string_view key) const;
  std::optional<std::string> optional_string(std::string_view key) const;
  bool flag(std::string_view key) const;
  Expected<std::int64_t> integer(std::string_view key) const;
  std::optional<std::int64_t> optional_integer(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;
  Expected<Version> version(std::string_view key) const;
  Expected<std::optional<Version>> optional_version(std::string_view key) const;
  Expected<std::vector<std::string>> strings(std::string_view key) const;
  Expected<ComputeCapability> cc(std::string_view key) const;
  Expected<std::string> source() const { return string("source"); }
  /// Returns the tables of the array `key` (empty when absent).
  std::vector<Row> rows(std::string_view key, const std::string& name) const;

 private:
  const toml::table& m_table;
  const std::string& m_file;
  std::string m_name;
};

/// Calls `parse_row(Row)` for each table of the array `name` in `root` (none
/// when the key is absent), stopping at the first error.
template <typename F>
Expected<void> for_each_toml_row(const toml::table& root, const std::string& file, std::string_view name,
                                 F&& parse_row) {
  for (const Row& row : Row(root, file, "").rows(name, "[[" + std::string(name) + "]]")) {
    if (auto r = parse_row(row); !r) return r;
  }
  return {};
}

}  // namespace torchfix
