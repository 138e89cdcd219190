// The parts of util/file.hpp that are the same on every system, over
// write_file (file.cpp on POSIX, file_win.cpp on Windows).
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

}  // namespace torchfix::util
