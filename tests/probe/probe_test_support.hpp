#pragma once
// Helpers for the probe tests: the temp dir and file writer of the build
// tests (kept, with its path printed, when a test fails), and fake programs.

#include <filesystem>
#include <string>

#include "../build/test_support.hpp"

namespace torchfix::testing {

/// Writes an executable shell script (mode 0755) to `path`, creating its folders.
inline void write_script(const std::filesystem::path& path, const std::string& body) {
  write_file(path, "#!/bin/sh\n" + body);
  make_executable(path);
}

}  // namespace torchfix::testing
