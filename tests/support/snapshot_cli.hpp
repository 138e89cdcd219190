#pragma once
// Running the real binary on the snapshot fixtures (tests/fixtures/snapshots)
// and reading its JSON: what the Situation and platform CLI tests share.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../build/test_support.hpp"

namespace torchfix::testing {

/// The folder of the snapshot fixtures, with a trailing slash.
inline const std::string k_fixtures = std::string(TORCHFIX_SOURCE_DIR) + "/tests/fixtures/snapshots/";

/// Runs TORCHFIX_BINARY with `args` in a bare environment (PATH=/usr/bin:/bin,
/// HOME that does not exist, SHELL=/bin/bash), 120 s at most; a failed start
/// fails the test and returns an empty result.
inline ProcessResult torchfix(std::vector<std::string> args) {
  Environment env{{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}, {"SHELL", "/bin/bash"}};
  SystemProcessRunner runner;
  auto r = runner.run(Command{TORCHFIX_BINARY, std::move(args), env, {}, std::chrono::seconds(120)});
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? *r : ProcessResult{};
}

/// Runs `torchfix doctor` with `args` (torchfix above).
inline ProcessResult run_doctor(std::vector<std::string> args) {
  args.insert(args.begin(), "doctor");
  return torchfix(std::move(args));
}

/// Returns the line after "Run first: " in doctor's output (a CR of
/// torchfix.exe's CRLF dropped), or "" when the summary has none.
inline std::string run_first(const std::string& out) {
  const auto at = out.find("Run first: ");
  if (at == std::string::npos) return "";
  const auto start = at + std::string("Run first: ").size();
  return out.substr(start, out.find_first_of("\r\n", start) - start);
}

/// Returns the snapshot fixture `name` parsed; throws nlohmann's parse error when it is not JSON.
inline nlohmann::json fixture(const std::string& name) {
  std::ifstream in(k_fixtures + name);
  return nlohmann::json::parse(in);
}

/// Writes `snapshot` to `dir`/`name` and returns that path.
inline std::string save(const TempDir& dir, const std::string& name, const nlohmann::json& snapshot) {
  const auto path = dir / name;
  write_file(path, snapshot.dump());
  return path.string();
}

/// Returns true when `part` occurs in `text`.
inline bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Returns every fix command of every finding of a `doctor --json` report, one a line.
inline std::string commands_of(const nlohmann::json& doctor) {
  std::string out;
  for (const auto& f : doctor["findings"]) {
    for (const auto& fix : f["fixes"]) {
      for (const auto& c : fix["commands"]) out += c.get<std::string>() + "\n";
    }
  }
  return out;
}

}  // namespace torchfix::testing
