#include "core/base/nearest.hpp"

#include <algorithm>
#include <numeric>

namespace torchfix {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest_word(std::string_view word, const std::vector<std::string>& candidates) {
  const std::size_t allowed = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t best_distance = allowed + 1;
  for (const std::string& candidate : candidates) {
    // A prefix is an abbreviation, never a worse match than `allowed` edits.
    const bool prefix = word.size() >= 2 && candidate.starts_with(word);
    const std::size_t d = prefix ? std::min(edit_distance(word, candidate), allowed) : edit_distance(word, candidate);
    if (d < best_distance) {
      best = candidate;
      best_distance = d;
    }
  }
  return best;
}

}  // namespace torchfix
