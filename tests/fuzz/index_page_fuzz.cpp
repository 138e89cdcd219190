// libFuzzer target for the simple-API page readers (core/base/index_page.cpp):
// bytes a mirror serves, read as PEP 691 JSON and as PEP 503 HTML. Traps
// when a name comes back that is not a torch wheel file name.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/base/index_page.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto check = [](const std::vector<std::string>& names) {
    for (const std::string& n : names) {
      if (!n.starts_with("torch-") || !n.ends_with(".whl")) __builtin_trap();
    }
  };
  check(torchfix::parse_pep503_files(body));
  if (auto files = torchfix::parse_pep691_files(body)) check(*files);
  return 0;
}
