#pragma once
// Helpers for the probe tests: a temp dir per test (kept, with its path
// printed, when the test failed) and writers for fake trees and programs.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

namespace torchfix::testing {

/// Creates a fresh directory under the system temp dir; removes it at the end
/// of the test unless the test failed, in which case it prints the path.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "torchfix-probe-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    m_path = pattern;
  }
  ~TempDir() {
    if (::testing::Test::HasFailure()) {
      std::cerr << "kept temp dir of the failed test: " << m_path << "\n";
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

/// Writes `text` to `path`, creating its parent directories.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

/// Writes an executable shell script (mode 0755) to `path`.
inline void write_script(const std::filesystem::path& path, const std::string& body) {
  write_file(path, "#!/bin/sh\n" + body);
  ::chmod(path.c_str(), 0755);
}

}  // namespace torchfix::testing
