#pragma once
// Gathers node snapshots into a FleetBuilder: from saved files and folders
// (`fleet --snapshots`), or from a Slurm cluster through sinfo and srun
// (`fleet --slurm`), every process through the ProcessRunner. A node that
// gives no snapshot is recorded as a failure with its reason, never dropped.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "core/fleet/fleet.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Adds the snapshots at `paths` to `fleet`: a file is one node (named by
/// its file name without .json); a folder adds every *.json file in it
/// (not recursive), sorted by name. A file that is not a snapshot becomes a
/// failed node with the parse error. A file given more than once (the same
/// real path through another spelling, folder or link) is one node; returns
/// one note per such file, for the user. Errors: a path that does not exist,
/// a folder without any *.json file.
Expected<std::vector<std::string>> add_snapshot_paths(const std::vector<std::filesystem::path>& paths,
                                                      FleetBuilder& fleet);

/// Parses one snapshot document (doctor --save-snapshot) from `text`.
/// Errors: not JSON, or a field of the wrong type (named).
Expected<Snapshot> parse_snapshot_text(std::string_view text);

/// Describes which nodes to probe and how (`fleet --slurm`).
struct SlurmRequest {
  std::vector<std::string> partitions;  // --partition, repeatable; empty: every partition
  std::string nodes;                    // --nodes hostlist ("gpu[01-04]"); empty: every node of the partitions
  std::vector<std::string> pythons;     // --python, passed to each node's doctor
  std::string torchfix;                 // torchfix path on the nodes (shared filesystem or installed there)
  int time_limit_minutes = 5;           // srun --time
  bool gres_gpu = false;                // ask for --gres=gpu:1 where the site requires it to see a GPU
  std::vector<std::string> srun_args;   // extra srun arguments (--account, --qos, --reservation)
  std::filesystem::path save_dir;       // when set, each node's snapshot is also written to DIR/NODE.json
};

/// Describes one node as sinfo lists it.
struct SlurmNode {
  std::string name;
  std::string state;  // sinfo %T: "idle", "mixed", "down*", "drained"
  bool usable = false;
};

/// Returns the sinfo command listing nodes with their states (`sinfo -h -N -o %N|%T`).
Command sinfo_command(const SlurmRequest& request);

/// Parses sinfo's "NAME|STATE" lines: nodes listed once; usable when the
/// state is idle, mixed, allocated, completing or planned without a flag of
/// trouble (`*` not responding, `~` powered off, `#`/`%`/`!` powering, `@`/`^` reboot).
std::vector<SlurmNode> parse_sinfo(std::string_view out);

/// Returns the srun command that runs `torchfix doctor --save-snapshot -` once
/// on each node of `nodes`: one task per node (--ntasks-per-node=1), labelled
/// output, --time and --immediate bounds, a shell line that prints the node's
/// Slurm name before the snapshot and the doctor's exit status after it.
Command srun_command(const SlurmRequest& request, const std::vector<std::string>& nodes);

/// Holds what one srun task printed.
struct SlurmTaskOutput {
  std::string node;              // SLURMD_NODENAME as the task printed it
  std::optional<int> exit;       // the doctor's exit status, when the task got that far
  std::string snapshot;          // the snapshot JSON text
  std::vector<std::string> err;  // the task's stderr lines
};

/// Splits srun's labelled stdout and stderr ("  3: text") into per-task outputs.
std::vector<SlurmTaskOutput> parse_srun_output(std::string_view out, std::string_view err);

/// Runs sinfo, then srun on the usable nodes, and adds every node's snapshot
/// to `fleet`; unusable nodes (with their state), tasks without a snapshot
/// (with the doctor's exit status and last error line) and nodes srun never
/// reached (with srun's error) are added as failures. Errors: sinfo or srun
/// cannot be started, sinfo fails, no node matches.
Expected<void> collect_slurm(const SlurmRequest& request, const Environment& env, ProcessRunner& runner,
                             FleetBuilder& fleet);

/// Holds the GPUs a build for a whole fleet targets (`build --arch fleet:DIR`).
struct FleetArch {
  std::vector<ComputeCapability> ccs;      // union over the fleet, deduplicated, sorted; only compilable ones
  std::vector<ComputeCapability> dropped;  // fleet GPUs no installed nvcc can compile
  std::string label;                       // "fleet:DIR (3 groups, 12 nodes; 3.5 left out: ...)", for the plan
};

/// Reads the snapshots at `dir` (as add_snapshot_paths) and returns the union
/// of their GPUs' compute capabilities, keeping those for which at least one
/// of `toolkits` accepts SASS (its probed list, else `knowledge`'s table for
/// its version); with no toolkit, every capability is kept. Errors: those of
/// add_snapshot_paths, a fleet without any known GPU.
Expected<FleetArch> fleet_arch(const std::filesystem::path& dir, const std::vector<Toolkit>& toolkits,
                               const Knowledge& knowledge);

}  // namespace torchfix
