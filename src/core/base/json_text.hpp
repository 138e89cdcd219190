#pragma once
// JSON text for users: output that is always produced, and nlohmann's
// exception text without its internal "[json.exception...]" tag.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace torchfix {

/// Returns `json` as text indented by 2 spaces. Strings hold raw bytes from
/// the machine (environment values, paths, wheel member names); a byte that
/// is not valid UTF-8 becomes U+FFFD instead of failing the whole document
/// (docs/json-schema.md, "Text encoding"). Never throws for bad bytes.
inline std::string json_text(const nlohmann::json& json) {
  return json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Returns the message of a nlohmann exception without its
/// "[json.exception.type_error.302] " tag, which means nothing to a user
/// ("type must be string, but is number").
inline std::string json_error_text(const nlohmann::json::exception& e) {
  std::string_view text = e.what();
  if (text.starts_with("[json.exception.")) {
    if (const auto close = text.find("] "); close != std::string_view::npos) text.remove_prefix(close + 2);
  }
  return std::string(text);
}

}  // namespace torchfix
