#pragma once
// Helpers for the build tests: a temp folder per test (kept, with its path
// printed, when the test fails) and running real programs.

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "probe/process.hpp"

namespace torchfix::testing {

/// Creates a fresh folder under $TMPDIR; removes it at the end of a passing test.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("torchfix-") + (info ? info->name() : "test") + "-XXXXXX";
    std::string pattern = (std::filesystem::temp_directory_path() / name).string();
    m_path = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    if (::testing::Test::HasFailure()) {
      std::cerr << "kept test folder: " << m_path << "\n";
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  const std::filesystem::path& path() const { return m_path; }
  std::filesystem::path operator/(const std::string& rel) const { return m_path / rel; }

 private:
  std::filesystem::path m_path;
};

/// Writes `text` to `path`, creating parent folders.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

/// Sets the mode of `path` to 0755 (rwxr-xr-x), what a script needs to run.
inline void make_executable(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                            fs::perms::others_exec);
}

/// Returns the contents of `path` ("" when unreadable).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Runs `program args...` in `cwd` with the real environment; fails the test
/// (and returns the output) when it does not succeed. Goes through
/// run_streaming (stdout and stderr merged; the log is a temp file).
inline std::string run_ok(const std::string& program, std::vector<std::string> args, const std::filesystem::path& cwd) {
  StreamCommand c;
  c.program = program;
  c.args = std::move(args);
  c.env = read_process_environment();
  c.working_directory = cwd.string();
  std::string pattern = (std::filesystem::temp_directory_path() / "torchfix-run-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd >= 0) ::close(fd);
  c.log_path = pattern;
  std::string out;
  c.on_line = [&](std::string_view line) { out.append(line).append("\n"); };
  auto r = run_streaming(c);
  std::filesystem::remove(pattern);
  EXPECT_TRUE(r && r->succeeded()) << program << " failed: " << (r ? out : r.error().message);
  return out;
}

}  // namespace torchfix::testing
