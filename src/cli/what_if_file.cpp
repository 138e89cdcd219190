#include "cli/what_if_file.hpp"

#include <nlohmann/json.hpp>

#include "core/base/snapshot_bounds.hpp"
#include "util/file.hpp"

namespace torchfix::cli {

Expected<void> merge_what_if_file(const Environment& env, WhatIf& what_if) {
  const auto it = env.find("TORCHFIX_WHAT_IF");
  if (it == env.end() || it->second.empty()) return {};
  const std::string& path = it->second;
  // util's reader: no hang on a FIFO, no unbounded read of /dev/zero.
  auto text = util::read_file_bytes(path, util::snapshot_limits());
  if (!text) {
    return fail("TORCHFIX_WHAT_IF names '" + path + "', which cannot be read (" + text.error().message +
                "); fix the path or unset it");
  }
  const auto json = parse_json_bounded(*text);
  if (json.is_discarded() || !json.is_object()) {
    return fail("what-if file '" + path +
                "' is not a JSON object like {\"gpus\": [\"A100\"], \"driver\": \"570.124.04\"}");
  }
  const auto string_of = [&](const char* key) -> Expected<std::optional<std::string>> {
    if (!json.contains(key)) return std::optional<std::string>();
    if (!json[key].is_string()) return fail("what-if file '" + path + "': \"" + key + "\" must be a string");
    return std::optional<std::string>(json[key].get<std::string>());
  };
  if (json.contains("gpus") && what_if.gpus.empty()) {
    if (!json["gpus"].is_array()) return fail("what-if file '" + path + "': \"gpus\" must be a list of GPU names");
    if (json["gpus"].size() > 64) return fail("what-if file '" + path + "': more than 64 \"gpus\" (a probe's cap)");
    for (const auto& gpu : json["gpus"]) {
      if (!gpu.is_string()) return fail("what-if file '" + path + "': \"gpus\" must be a list of GPU names");
      what_if.gpus.push_back(gpu.get<std::string>());
    }
  }
  TF_TRY(driver, string_of("driver"));
  TF_TRY(torch, string_of("torch"));
  TF_TRY(platform, string_of("platform"));
  if (!what_if.driver) what_if.driver = driver;
  if (!what_if.torch) what_if.torch = torch;
  if (!what_if.machine) what_if.machine = platform;
  return {};
}

}  // namespace torchfix::cli
