#pragma once
// The shell runner of the hostile-input suites: a script through /bin/sh
// with torchfix and two fixture snapshots in its environment.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "../build/test_support.hpp"

namespace torchfix::testing {

inline const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";
inline const std::string k_healthy = k_fixtures + "h200-torch211-cu130.json";
inline const std::string k_f1 = k_fixtures + "F1-rtx5090d-torch26-cu126.json";

// Runs `script` with /bin/sh; T is torchfix, S and F1 two fixture snapshots.
inline ProcessResult sh(const std::string& script, const std::filesystem::path& cwd, Environment extra = {}) {
  Environment env = {{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"},
                     {"LANG", "C.UTF-8"},
                     {"T", TORCHFIX_BINARY},
                     {"S", k_healthy},
                     {"F1", k_f1},
                     {"HOME", cwd.string()}};
  for (auto& [k, v] : extra) env[k] = v;
  SystemProcessRunner runner;
  auto r = runner.run(Command{"/bin/sh", {"-c", script}, env, cwd.string(), std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  EXPECT_FALSE(r && r->timed_out) << "hung: " << script;
  return r ? *r : ProcessResult{};
}

}  // namespace torchfix::testing
