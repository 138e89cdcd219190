#include "core/facts/table_columns.hpp"

namespace torchfix {

Expected<std::vector<Arch>> KeyReader::operator()(const std::vector<Arch>*) const {
  TF_TRY(names, r.strings(key));
  std::vector<Arch> archs;
  for (const std::string& name : names) {
    auto arch = Arch::parse(name);
    if (!arch) return std::unexpected(r.error(arch.error().message, key));
    archs.push_back(*arch);
  }
  return archs;
}

Expected<int> KeyReader::operator()(const int*) const {
  TF_TRY(value, r.integer(key));
  return static_cast<int>(value);
}

}  // namespace torchfix
