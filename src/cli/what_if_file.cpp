#include "cli/what_if_file.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace torchfix::cli {

Expected<void> merge_what_if_file(const Environment& env, WhatIf& what_if) {
  const auto it = env.find("TORCHFIX_WHAT_IF");
  if (it == env.end() || it->second.empty()) return {};
  const std::string& path = it->second;
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("TORCHFIX_WHAT_IF names '" + path + "', which cannot be read; fix the path or unset it");
  std::stringstream text;
  text << in.rdbuf();
  const auto json = nlohmann::json::parse(text.str(), nullptr, false);
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
