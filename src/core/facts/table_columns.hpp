#pragma once
// One declaration per array of a knowledge table that drives both its schema
// check and the reading of its rows: a Column names a key once, beside the
// member of the row's struct it fills. The key's type and whether it must be
// present follow from the member's type (Version: a required version,
// std::optional<Version>: an optional one, bool: an optional flag, ...).
// Included only by core's table parsers (it brings toml_text.hpp).

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/facts/toml_text.hpp"

namespace torchfix {

/// Holds a pointer to the member of `S` a column fills, of one of the types a
/// table value is read into.
template <typename S>
using ColumnMember = std::variant<std::string S::*, std::vector<std::string> S::*, std::vector<Arch> S::*, Version S::*,
                                  std::optional<Version> S::*, ComputeCapability S::*,
                                  std::optional<ComputeCapability> S::*, int S::*, std::optional<int> S::*, bool S::*>;

/// Returns the key type a member `T S::*` is read from (an Arch list is
/// written as texts, "sm_90a").
template <typename S, typename T>
constexpr FieldType field_type_of(T S::*) {
  if constexpr (std::is_same_v<T, std::string>) {
    return FieldType::text;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>> || std::is_same_v<T, std::vector<Arch>>) {
    return FieldType::texts;
  } else if constexpr (std::is_same_v<T, Version> || std::is_same_v<T, std::optional<Version>>) {
    return FieldType::version;
  } else if constexpr (std::is_same_v<T, ComputeCapability> || std::is_same_v<T, std::optional<ComputeCapability>>) {
    return FieldType::cc;
  } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::optional<int>>) {
    return FieldType::integer;
  } else {
    static_assert(std::is_same_v<T, bool>);
    return FieldType::boolean;
  }
}

/// Returns whether the key of a member `T S::*` must be present: optional
/// members and flags may go without it.
template <typename S, typename T>
constexpr Need need_of(T S::*) {
  constexpr bool may_go_without = std::is_same_v<T, bool> || std::is_same_v<T, std::optional<Version>> ||
                                  std::is_same_v<T, std::optional<int>> ||
                                  std::is_same_v<T, std::optional<ComputeCapability>>;
  return may_go_without ? Need::optional : Need::required;
}

/// Describes one key of an array's rows and the member of `S` it fills: its
/// type comes from the member, whether it must be present too (column()
/// below), `words` are the only values it allows (empty: any).
template <typename S>
struct Column {
  using Struct = S;

  std::string_view key;
  ColumnMember<S> member;
  Need need;
  std::span<const std::string_view> words;

  /// Returns the schema's view of this column.
  constexpr Field field() const {
    return {key, std::visit([](auto p) { return field_type_of(p); }, member), need, words};
  }
};

/// Returns the column `key` that fills `member` of `S`, its type and need
/// from the member's type: `column("cuda", &DriverFloor::cuda)`.
template <typename S, typename T>
constexpr Column<S> column(std::string_view key, T S::*member, std::span<const std::string_view> words = {}) {
  return {key, member, need_of(member), words};
}

/// Returns the column `key` that fills `member` of `S`, with its need given
/// (a std::string member whose key may go without).
template <typename S, typename T>
constexpr Column<S> column(std::string_view key, T S::*member, Need need,
                           std::span<const std::string_view> words = {}) {
  return {key, member, need, words};
}

/// Names the key every row of every array has: where its fact comes from
/// (a URL, or the binary measured), a non-empty text.
inline constexpr std::string_view k_source_key = "source";

/// Returns the schema fields of `columns`, in their order, then `source`.
template <typename S, std::size_t N>
constexpr std::array<Field, N + 1> fields_of(const Column<S> (&columns)[N]) {
  std::array<Field, N + 1> fields{};
  for (std::size_t i = 0; i < N; ++i) fields[i] = columns[i].field();
  fields[N] = Field{k_source_key, FieldType::text};
  return fields;
}

/// Holds the schema fields of the column array `Columns` in static storage.
template <const auto& Columns>
inline constexpr auto k_fields = fields_of(Columns);

/// Describes an array of tables whose rows are `S`s (each with a `source`
/// member): its schema (the columns and `source`), the columns, and what
/// completes a row after them (checks across keys, members that follow from
/// others; null: nothing).
template <typename S>
struct ArrayOf {
  TableSchema schema;
  std::span<const Column<S>> columns;
  Expected<void> (*finish)(const Row&, S&) = nullptr;

  /// Returns the array's key: "gpu" for "[[gpu]]".
  constexpr std::string_view key() const { return schema.name.substr(2, schema.name.size() - 4); }
};

/// Declares the array `name` ("[[gpu]]") read with `Columns` and `source`,
/// its schema made of the same: `constexpr auto k_gpu = array_of<k_gpu_columns>("[[gpu]]");`.
template <const auto& Columns, typename S = typename std::remove_cvref_t<decltype(Columns[0])>::Struct>
constexpr ArrayOf<S> array_of(std::string_view name, Expected<void> (*finish)(const Row&, S&) = nullptr) {
  return {{name, k_fields<Columns>}, Columns, finish};
}

/// Reads the value of `key` in a row as the type of the member it fills
/// (chosen by a pointer to that member). After check_table the key is there
/// with its type; errors name the file and line (Row::error).
struct KeyReader {
  const Row& r;
  std::string_view key;

  Expected<std::string> operator()(const std::string*) const { return r.string(key); }
  Expected<std::vector<std::string>> operator()(const std::vector<std::string>*) const { return r.strings(key); }
  Expected<std::vector<Arch>> operator()(const std::vector<Arch>*) const;
  Expected<Version> operator()(const Version*) const { return r.version(key); }
  Expected<std::optional<Version>> operator()(const std::optional<Version>*) const { return r.version(key); }
  Expected<ComputeCapability> operator()(const ComputeCapability*) const { return r.cc(key); }
  Expected<std::optional<ComputeCapability>> operator()(const std::optional<ComputeCapability>*) const {
    return r.cc(key);
  }
  Expected<int> operator()(const int*) const;
  Expected<std::optional<int>> operator()(const std::optional<int>*) const {
    return (*this)(static_cast<const int*>(nullptr));
  }
  Expected<bool> operator()(const bool*) const { return r.flag(key); }
};

/// Reads the row `r` into a new `S`, column by column (an optional key that
/// is absent leaves its member as `S` sets it), then its source. Errors as
/// KeyReader.
template <typename S>
Expected<S> read_columns(const Row& r, std::span<const Column<S>> columns) {
  S row;
  for (const Column<S>& c : columns) {
    if (c.need == Need::optional && !r.has(c.key)) continue;
    auto read = std::visit(
        [&](auto member) -> Expected<void> {
          auto value = KeyReader{r, c.key}(&(row.*member));
          if (!value) return std::unexpected(value.error());
          row.*member = std::move(*value);
          return {};
        },
        c.member);
    if (!read) return std::unexpected(read.error());
  }
  TF_TRY(source, r.string(k_source_key));
  row.source = std::move(source);
  return row;
}

/// Reads each row of `array` in `root` (none when absent), completes it with
/// array.finish and appends it to `rows`, stopping at the first error.
template <typename S>
Expected<void> read_rows(const toml::table& root, const std::string& file, const ArrayOf<S>& array,
                         std::vector<S>& rows) {
  return for_each_toml_row(root, file, array.key(), [&](const Row& r) -> Expected<void> {
    TF_TRY(row, read_columns(r, array.columns));
    if (array.finish) {
      if (auto finished = array.finish(r, row); !finished) return finished;
    }
    rows.push_back(std::move(row));
    return {};
  });
}

}  // namespace torchfix
