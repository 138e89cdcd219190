#pragma once
// UTF-8 validation shared by the rc editor (which refuses non-text files) and
// the quoting (which escapes bytes that are not valid UTF-8).

#include <cstddef>
#include <string_view>

namespace torchfix::shellenv {

/// Returns the length in bytes (1 to 4) of the valid UTF-8 sequence that
/// starts at `text[pos]`, or 0 when the bytes there are not valid UTF-8
/// (stray continuation byte, truncated or overlong form, surrogate, above
/// U+10FFFF; RFC 3629). A NUL byte counts as valid (length 1).
std::size_t utf8_length_at(std::string_view text, std::size_t pos);

}  // namespace torchfix::shellenv
