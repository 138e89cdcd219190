#pragma once
// The shell runner of the hostile-input suites: a script through /bin/sh
// with torchfix and two fixture snapshots in its environment.

#include <gtest/gtest.h>
#include <unistd.h>

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

// Returns the peak resident set of the programs `script` runs, in KiB (the
// largest of them, as getrusage(RUSAGE_CHILDREN) reports it once they have
// ended), and fills `result` with the script's output; -1 when it is unknown.
inline long peak_rss_kib(const std::string& script, const std::filesystem::path& cwd, ProcessResult& result) {
  result =
      sh("/usr/bin/python3 -c 'import os, resource, subprocess\n"
         "subprocess.run([\"/bin/sh\", \"-c\", os.environ[\"MEASURED\"]])\n"
         "print(\"peak_kib=%d\" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)'",
         cwd, {{"MEASURED", script}});
  const std::size_t at = result.out.rfind("peak_kib=");
  return at == std::string::npos ? -1 : std::stol(result.out.substr(at + 9));
}

}  // namespace torchfix::testing

// Runs `script` as root inside a private mount namespace (with `mnt` a fresh
// tmpfs); skips when this is not root or unshare is not permitted.
#define RUN_IN_NAMESPACE(result, script, dir)                                                                  \
  if (::geteuid() != 0) GTEST_SKIP() << "needs root (CI runs as root)";                                        \
  if (sh("unshare -m --propagation private true", dir.path()).exit_code != 0)                                  \
    GTEST_SKIP() << "unshare -m is not permitted here";                                                        \
  fs::create_directories(dir / "mnt");                                                                         \
  fs::permissions(dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |           \
                                  fs::perms::others_read | fs::perms::others_exec);                            \
  const ProcessResult result =                                                                                 \
      sh("unshare -m --propagation private sh -c 'mount -t tmpfs -o size=4m tmpfs mnt && set -e; " script "'", \
         dir.path())
