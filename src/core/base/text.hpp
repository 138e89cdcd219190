#pragma once
// Small text helpers the core's parsers of configuration files share.

#include <string>
#include <string_view>
#include <vector>

namespace torchfix {

/// Returns `text` without leading and trailing blanks (space, tab, CR, LF).
std::string trim(std::string_view text);

/// Returns the lines of `text`, split at '\n' without it (a CR stays; trim
/// removes it); a final newline adds no empty line. The views point into `text`.
std::vector<std::string_view> split_lines(std::string_view text);

/// Returns the PEP 503 normalised form of a distribution name: lower case,
/// each run of '-', '_' and '.' one '-' ("Flash_Attn" -> "flash-attn"; PEP 503's
/// re.sub(r"[-_.]+", "-", name).lower()).
std::string normalise_distribution(std::string_view name);

}  // namespace torchfix
