#include "shellenv/triton_ptxas.hpp"

#include <toml++/toml.h>
#include <sstream>

namespace torchfix::shellenv {
namespace {

Version major_minor(const Version& v) {
  return Version({v.major(), v.minor()});
}

}  // namespace

Expected<std::vector<TritonPtxas>> parse_triton_ptxas(std::string_view text, std::string_view file) {
  toml::table table;
  try {
    table = toml::parse(text, std::string(file));
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    return fail(std::string(file) + ": " + std::string(e.description()) + " at " + where.str());
  }
  std::vector<TritonPtxas> rows;
  const toml::array* array = table["triton"].as_array();
  if (!array) return fail(std::string(file) + ": no [[triton]] rows");
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::table* row = (*array)[i].as_table();
    const std::string where = std::string(file) + ": [[triton]] row " + std::to_string(i + 1);
    if (!row) return fail(where + " is not a table");
    const auto version = [&](const char* key) -> Expected<std::optional<Version>> {
      auto text_value = (*row)[key].value<std::string>();
      if (!text_value) return std::optional<Version>();
      auto v = Version::parse(*text_value);
      if (!v) return fail(where + ": " + key + " = '" + *text_value + "' is not a version");
      return v;
    };
    TritonPtxas entry;
    for (auto [key, out] :
         {std::pair{"min", &entry.min}, std::pair{"max", &entry.max}, std::pair{"ptxas", &entry.ptxas}}) {
      auto v = version(key);
      if (!v) return std::unexpected(v.error());
      if (!*v) return fail(where + ": the field '" + key + "' is missing");
      *out = **v;
    }
    auto blackwell = version("ptxas_blackwell");
    if (!blackwell) return std::unexpected(blackwell.error());
    entry.ptxas_blackwell = *blackwell;
    entry.source = (*row)["source"].value_or(std::string());
    if (entry.source.empty()) return fail(where + ": the field 'source' is missing (every fact names its source)");
    rows.push_back(std::move(entry));
  }
  return rows;
}

std::optional<TritonPtxas> triton_ptxas_for(const std::vector<TritonPtxas>& rows, std::string_view triton_version) {
  auto parsed = Version::parse(triton_version);
  if (!parsed || rows.empty()) return std::nullopt;
  const Version mm = major_minor(*parsed);
  const TritonPtxas* newest = nullptr;
  for (const TritonPtxas& row : rows) {
    if (mm >= major_minor(row.min) && mm <= major_minor(row.max)) return row;
    if (!newest || row.max > newest->max) newest = &row;
  }
  if (mm > major_minor(newest->max)) return *newest;
  return std::nullopt;
}

}  // namespace torchfix::shellenv
