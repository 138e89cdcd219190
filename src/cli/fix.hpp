#pragma once
// torchfix fix (and doctor --fix): apply the doctor's first fix to one
// Python environment, prove it by diagnosing again, and roll back if not.

#include <string>
#include <vector>

#include "cli/context.hpp"

namespace torchfix::cli {

/// Says whether torchfix fix asks before changing anything.
enum class Confirm { ask, yes };
/// Says whether torchfix fix runs the plan or only prints it.
enum class FixRun { apply, dry_run };

/// Says whether torchfix fix asks the package index whether a wheel exists.
enum class IndexCheck { online, offline };

/// Holds the options of torchfix fix.
struct FixOptions {
  std::vector<std::string> pythons;  // --python; empty: the environments the doctor finds
  std::vector<std::string> gpus;     // --gpu what-if (the re-diagnosis keeps it)
  std::string driver;                // --driver what-if
  Confirm confirm = Confirm::ask;
  FixRun run = FixRun::apply;
  IndexCheck index = IndexCheck::online;  // --offline
  double index_timeout_s = 3;             // per torch page asked
  double timeout_s = 10;                  // per probe
  double install_timeout_s = 1800;        // per install command
};

/// Runs torchfix fix; returns the exit code (0 fixed or nothing to fix, 1 not
/// fixed or rolled back, 2 bad input or torchfix failed, 128+N on signal N).
int run_fix(const FixOptions& options, Context& ctx);

}  // namespace torchfix::cli
