#include "core/base/snapshot_bounds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace torchfix {
namespace {

using json = nlohmann::json;

constexpr std::size_t k_string_max = 64u << 10;
constexpr std::size_t k_version_dots_max = 7;

struct Field {
  std::string_view key;
  std::uint64_t max;
};

// Integer fields by name, wherever they appear, and their largest value.
constexpr std::uint64_t k_int_max = std::numeric_limits<int>::max();
constexpr std::uint64_t k_u53_max = std::uint64_t{1} << 53;
constexpr Field k_integers[] = {{"schema_version", k_int_max},
                                {"cpus", 1u << 20},
                                {"index", 4095},
                                {"memory_bytes", k_u53_max},
                                {"memory_available_bytes", k_u53_max},
                                {"memory_limit_bytes", k_u53_max},
                                {"cudnn", k_int_max},
                                {"modules", k_int_max}};

struct Count {
  std::string_view key;
  std::size_t max;
};
constexpr Count k_lists[] = {{"gpus", 64}, {"pythons", 256}, {"toolkits", 64}, {"compilers", 64}, {"notes", 4096}};

bool is_version_key(std::string_view key) {
  return key == "version" || key == "cuda_version" || key == "python_version";
}

Expected<void> check_value(const json& value, const std::string& where, std::string_view key) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text.size() > k_string_max) return fail(where + " is longer than 64 KiB");
    if (is_version_key(key) && static_cast<std::size_t>(std::ranges::count(text, '.')) > k_version_dots_max)
      return fail(where + " has more than 8 version parts");
    return {};
  }
  for (const Field& f : k_integers) {
    if (key != f.key || value.is_null()) continue;
    if (!value.is_number_integer()) return fail(where + " must be a whole number");
    if (value.is_number_unsigned()
            ? value.get<std::uint64_t>() > f.max
            : value.get<std::int64_t>() < 0 || static_cast<std::uint64_t>(value.get<std::int64_t>()) > f.max)
      return fail(where + " is out of range (0 to " + std::to_string(f.max) + ")");
  }
  if (key == "cpu_quota" && !value.is_null() &&
      (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0))
    return fail(where + " must be a number from 0 up");
  return {};
}

Expected<void> walk(const json& value, const std::string& where, std::string_view key) {
  if (auto ok = check_value(value, where, key); !ok) return ok;
  if (value.is_object()) {
    for (const auto& [name, item] : value.items()) {
      if (auto ok = walk(item, where.empty() ? name : where + "." + name, name); !ok) return ok;
    }
  } else if (value.is_array()) {
    std::size_t i = 0;
    for (const json& item : value) {
      if (auto ok = walk(item, where + "[" + std::to_string(i++) + "]", key); !ok) return ok;
    }
  }
  return {};
}

}  // namespace

// Says whether `text` nests brackets deeper than the cap, outside strings:
// one pass over the bytes, no allocation (nlohmann's parser keeps a stack
// entry per level, 10 MB of "[" would cost hundreds of MB).
bool nests_too_deep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > k_snapshot_json_depth_max) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

json parse_json_bounded(std::string_view text) {
  if (nests_too_deep(text)) return json(json::value_t::discarded);
  return json::parse(text, nullptr, false);
}

Expected<void> check_snapshot_bounds(const json& snapshot) {
  if (!snapshot.is_object()) return {};  // snapshot_from_json says what is wrong
  for (const Count& c : k_lists) {
    if (!snapshot.contains(c.key) || snapshot.at(c.key).is_null()) continue;
    const json& list = snapshot.at(c.key);
    if (!list.is_array()) return fail(std::string(c.key) + " must be a list");
    if (list.size() > c.max) {
      return fail(std::string(c.key) + " holds " + std::to_string(list.size()) + " entries, more than the " +
                  std::to_string(c.max) + " a probe reports");
    }
  }
  for (const char* key : {"driver", "platform"}) {
    if (snapshot.contains(key) && !snapshot.at(key).is_object() && !snapshot.at(key).is_null())
      return fail(std::string(key) + " must be an object");
  }
  return walk(snapshot, "", "");
}

}  // namespace torchfix
