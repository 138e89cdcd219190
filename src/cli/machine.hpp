#pragma once
// Where `torchfix env` and `torchfix arch` get the machine from: a saved
// snapshot (--snapshot FILE), the probes, and what-if GPUs (--gpu).

#include <filesystem>
#include <string>
#include <vector>

#include "cli/context.hpp"
#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix::cli {

/// Reads a Snapshot saved with `doctor --save-snapshot` (JSON), or the one
/// inside a `doctor --json` report or `--log` file (its "snapshot" key).
/// Errors name the file and what is wrong with it.
Expected<Snapshot> read_snapshot_file(const std::filesystem::path& path);

/// Checks a --python value before anything runs it: a path must name an
/// existing executable file, a bare name must be found on env's PATH.
/// Errors: "--python X: no such executable", "... is not an executable
/// file", "... not found on PATH", each with what to give instead.
Expected<void> check_python_option(const std::string& python, const Environment& env);

/// Says how much of the machine a subcommand needs probed.
enum class ProbeDepth {
  gpus,  // GPUs and driver only (fast): torchfix arch
  full,  // also platform, toolkits, compilers, Python environments: torchfix env
};

/// Returns the Snapshot for a subcommand: `snapshot_file` when not empty,
/// else a probe of this machine at `depth` (skipped for GPUs when `gpus` is
/// not empty); then `gpus` (--gpu values: name, sm_XY or X.Y) replace the
/// GPUs. Errors: unreadable snapshot, unknown GPU name.
Expected<Snapshot> machine_snapshot(const std::string& snapshot_file, const std::vector<std::string>& gpus,
                                    ProbeDepth depth, const Knowledge& knowledge, Context& ctx);

}  // namespace torchfix::cli
