#pragma once
// The nearest of some known words to a mistyped one, for "did you mean"
// hints (an unknown option, command or GPU name).

#include <string>
#include <string_view>
#include <vector>

namespace torchfix {

/// Returns the Levenshtein distance of `a` and `b` (insertions, deletions
/// and substitutions of bytes, each costing 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// Returns the candidate closest to `word` by edit distance, or "" when none
/// is close enough to be a typo of it: at most max(2, |word| / 3) edits, or
/// `word` is a prefix of the candidate ("--jso" for "--json"). Ties go to
/// the first candidate.
std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace torchfix
