#pragma once
// A copy of torchfix's data folder (recipes/, templates/) in a temp dir, to
// edit and point TORCHFIX_DATA_DIR at: what the knowledge and data-folder
// CLI tests share.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "../build/test_support.hpp"

namespace torchfix::testing {

/// Holds a copy of the repository's recipes/ and templates/ in a TempDir.
class DataCopy {
 public:
  DataCopy() {
    for (const char* dir : {"recipes", "templates"}) {
      std::filesystem::copy(std::string(TORCHFIX_SOURCE_DIR) + "/" + dir, m_dir / dir,
                            std::filesystem::copy_options::recursive);
    }
  }
  /// Returns the path of recipes/`table` in the copy.
  std::filesystem::path path(const std::string& table) const { return m_dir / "recipes" / table; }
  /// Returns the copy's folder (the value for TORCHFIX_DATA_DIR).
  std::string dir() const { return m_dir.path().string(); }

  /// Replaces the first `from` in recipes/`table` by `to`; returns the line
  /// `from` starts on, not counting a leading newline of `from` (0 and a
  /// test failure when `from` is absent).
  int replace(const std::string& table, const std::string& from, const std::string& to) const {
    std::string text = read_file(path(table));
    const std::size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << table << " lacks '" << from << "'";
    if (at == std::string::npos) return 0;
    text.replace(at, from.size(), to);
    write_file(path(table), text);
    const std::size_t start = at + (from.starts_with('\n') ? 1 : 0);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(start), '\n'));
  }
  /// Appends `rows` to recipes/`table`.
  void append(const std::string& table, const std::string& rows) const {
    write_file(path(table), read_file(path(table)) + rows);
  }

 private:
  TempDir m_dir;
};

}  // namespace torchfix::testing
