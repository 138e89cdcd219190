#pragma once
// Small text helpers the core's parsers of configuration files share.

#include <string>
#include <string_view>

namespace torchfix {

/// Returns `text` without leading and trailing blanks (space, tab, CR, LF).
std::string trim(std::string_view text);

}  // namespace torchfix
