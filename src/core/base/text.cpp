#include "core/base/text.hpp"

#include <algorithm>
#include <cctype>

namespace torchfix {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string normalise_distribution(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool sep = c == '-' || c == '_' || c == '.';
    if (sep && !out.empty() && out.back() == '-') continue;
    out += sep ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace torchfix
