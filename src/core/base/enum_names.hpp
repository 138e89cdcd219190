#pragma once
// One constexpr name table per enum: to_string and the parser of a name read
// the same rows, so each name is written once. Rows are in enumerator order
// (checked by in_order), so a table that lost a row in the middle fails to
// compile. Pure.

#include <cstddef>
#include <optional>
#include <string_view>

namespace torchfix {

/// Pairs an enumerator with its name (in JSON, reports and options).
template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

/// Returns true when row i of `table` holds enumerator i: a static_assert
/// beside each table keeps it in step with its enum.
template <typename Enum, std::size_t N>
constexpr bool in_order(const EnumName<Enum> (&table)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].value) != i) return false;
  }
  return true;
}

/// Returns the name of `value` in `table`; the first row's name for a value
/// outside the enum (a cast from a bad integer).
template <typename Enum, std::size_t N>
constexpr std::string_view name_in(const EnumName<Enum> (&table)[N], Enum value) {
  for (const EnumName<Enum>& row : table) {
    if (row.value == value) return row.name;
  }
  return table[0].name;
}

/// Returns the enumerator named `name` in `table`, nullopt when no row is.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> value_in(const EnumName<Enum> (&table)[N], std::string_view name) {
  for (const EnumName<Enum>& row : table) {
    if (row.name == name) return row.value;
  }
  return std::nullopt;
}

}  // namespace torchfix
