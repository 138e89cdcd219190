// libFuzzer target for the snapshot reader (from the second reliability
// audit): JSON text -> parse_json_bounded -> snapshot_from_json -> to_json ->
// read again. Traps when torchfix cannot read back what it wrote or the round
// trip changes it; UBSan reports any out-of-range number cast (the audit's
// float-cast-overflow on schema_version 1e30, an index of 1e300).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/base/snapshot_bounds.hpp"
#include "core/situation/snapshot.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto json = torchfix::parse_json_bounded(text);
  if (json.is_discarded()) return 0;
  auto snapshot = torchfix::snapshot_from_json(json);
  if (!snapshot) return 0;
  const nlohmann::json once = torchfix::to_json(*snapshot);
  auto again = torchfix::snapshot_from_json(once);
  if (!again) __builtin_trap();  // what torchfix wrote, torchfix cannot read back
  if (torchfix::to_json(*again) != once) __builtin_trap();
  (void)once.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return 0;
}
