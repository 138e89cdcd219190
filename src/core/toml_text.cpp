#include "core/toml_text.hpp"

namespace torchfix {

Expected<toml::table> parse_toml_text(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    return fail(file + ":" + std::to_string(e.source().begin.line) +
                ": not valid TOML: " + std::string(e.description()));
  }
}

}  // namespace torchfix
