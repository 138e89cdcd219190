#pragma once
// The two steps every knowledge-table parser in core shares: parsing TOML text
// with an error that names the file and line, and visiting the rows of one
// array of tables. Included only by core's table parsers (toml++ is heavy).

#include <toml++/toml.h>

#include <string>
#include <string_view>

#include "core/error.hpp"

namespace torchfix {

/// Parses `text` as TOML. Errors: "FILE:LINE: not valid TOML: WHAT".
Expected<toml::table> parse_toml_text(std::string_view text, const std::string& file);

/// Calls `parse_row(Row{table, file, name})` for each table of the array
/// `name` in `root` (none when the key is absent), stopping at the first
/// error. Errors: `name` is not an array of tables, or what `parse_row` says.
template <typename Row, typename F>
Expected<void> for_each_toml_row(const toml::table& root, const std::string& file, const char* name, F&& parse_row) {
  const toml::node* node = root.get(name);
  if (!node) return {};
  const toml::array* array = node->as_array();
  if (!array) return fail(file + ": '" + name + "' must be an array of tables ([[" + name + "]])");
  for (const auto& item : *array) {
    const toml::table* table = item.as_table();
    if (!table) return fail(file + ": '" + name + "' must be an array of tables ([[" + name + "]])");
    if (auto r = parse_row(Row{*table, file, name}); !r) return r;
  }
  return {};
}

}  // namespace torchfix
