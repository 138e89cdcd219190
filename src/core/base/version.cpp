#include "core/base/version.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace torchfix {

Version::Version(std::vector<int> parts, std::string text) : m_parts(std::move(parts)), m_text(std::move(text)) {}

std::optional<Version> Version::parse(std::string_view text) {
  std::vector<int> parts;
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), value);
    if (ec != std::errc{}) return std::nullopt;
    parts.push_back(value);
    i = static_cast<std::size_t>(end - text.data());
    // Only a '.' followed by a digit continues the version ("12.2.0-14", "2.6.0+cu126").
    if (i + 1 < text.size() && text[i] == '.' && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  if (parts.empty()) return std::nullopt;
  return Version(std::move(parts), std::string(text.substr(0, i)));
}

Version Version::from_cuda_int(int value) {
  return Version({value / 1000, (value % 1000) / 10});
}

std::string Version::str() const {
  if (!m_text.empty()) return m_text;
  std::string out;
  for (std::size_t i = 0; i < m_parts.size(); ++i) {
    if (i) out += '.';
    out += std::to_string(m_parts[i]);
  }
  return out;
}

std::optional<Version> Version::from_cuda_variant(std::string_view variant) {
  if (!variant.starts_with("cu") || variant.size() < 4) return std::nullopt;
  const std::string_view digits = variant.substr(2);
  if (!std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  const int number = std::stoi(std::string(digits));
  return Version({number / 10, number % 10});
}

std::string Version::major_minor() const {
  return std::to_string(major()) + "." + std::to_string(minor());
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  const std::size_t n = std::max(m_parts.size(), other.m_parts.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (auto c = part(i) <=> other.part(i); c != 0) return c;
  }
  return std::strong_ordering::equal;
}

}  // namespace torchfix
