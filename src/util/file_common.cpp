// The parts of util/file.hpp that are the same on every system, over
// write_file (file.cpp on POSIX, file_win.cpp on Windows).
#include <algorithm>
#include <cctype>

#include "util/file.hpp"

namespace torchfix::util {

namespace fs = std::filesystem;

Expected<void> write_file_atomically(const fs::path& target, std::string_view bytes, fs::perms mode,
                                     std::optional<std::optional<std::string_view>> expected) {
  WriteOptions options;
  options.mode = mode;
  options.expected = expected;
  return write_file(target, bytes, options);
}

bool is_temp_file_of(std::string_view file, std::string_view target_name) {
  // The random part's length: mkstemp's XXXXXX (file.cpp) or temp_name's
  // 16 hex digits (file_win.cpp).
#ifdef _WIN32
  constexpr std::size_t random_chars = 16;
#else
  constexpr std::size_t random_chars = 6;
#endif
  const std::string prefix = "." + std::string(target_name) + std::string(temp_file_marker());
  if (!file.starts_with(prefix) || file.size() != prefix.size() + random_chars) return false;
  return std::ranges::all_of(file.substr(prefix.size()),
                             [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

}  // namespace torchfix::util
