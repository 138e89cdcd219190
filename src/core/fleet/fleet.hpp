#pragma once
// The fleet doctor's decision: many node snapshots (one per node, as
// `doctor --save-snapshot` writes them) grouped into identical nodes, a
// verdict per Python environment path and group, and the one fix that covers
// every group, or the groups no single fix can cover. Pure: snapshots in,
// values out (reading files or running srun is cli/fleet's job).

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/diagnosis/diagnosis.hpp"
#include "core/facts/knowledge.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Describes a set of nodes that look the same to a diagnosis: the same GPU
/// models and compute capabilities, driver, toolkits and platform.
struct FleetGroup {
  std::string label;                                   // "NVIDIA A100 (8.0) x4, driver 570.124.04 (CUDA 12.8), ..."
  std::vector<std::string> gpus;                       // "NVIDIA A100-SXM4-80GB (8.0)" per GPU, sorted
  std::vector<ComputeCapability> ccs;                  // distinct compute capabilities, sorted
  std::optional<Version> driver;                       // driver version, nullopt when unknown
  std::optional<Version> driver_cuda;                  // CUDA the driver supports
  std::vector<std::string> toolkits;                   // nvcc versions, sorted
  std::string machine;                                 // "x86_64", "aarch64"
  PlatformKind platform = PlatformKind::linux_x86_64;  // situate(): the one platform mapping
  std::string os;                                      // PRETTY_NAME
  std::vector<std::string> nodes;                      // node names, in the order added
};

/// Says whether an environment's torch runs on a group's GPUs.
enum class FleetVerdict {
  runs,          // native SASS on every GPU
  runs_ptx_jit,  // some GPU only through PTX JIT (slow first start)
  cannot_run,    // a problem finding: no kernel image, driver too old, import fails
  no_torch,      // the environment exists there but has no torch
  absent,        // the nodes have no environment at this path
};

/// Holds one environment's verdict on a group of nodes (or on part of the
/// group, when the environment differs between its nodes).
struct FleetEnvRow {
  std::size_t group = 0;  // index into FleetReport::groups
  FleetVerdict verdict = FleetVerdict::absent;
  std::string torch;               // torch version there, "" when none
  std::string reason;              // the deciding finding's title
  std::vector<std::string> nodes;  // the nodes this row is about
};

/// Says what kind of remedy covers the fleet.
enum class FleetFixKind {
  none_needed,  // every group runs natively
  wheel,        // one official wheel runs on every covered group
  build,        // one source build (one arch list) covers every group
  driver,       // a group's driver cannot drive its GPUs: only a driver upgrade helps there
  none,         // no single fix covers every group: see left_out
};

/// Describes the fix that covers every group at once, or as many as one can.
struct FleetFix {
  FleetFixKind kind = FleetFixKind::none_needed;
  std::string summary;                // one line: what it does and for which GPUs
  std::vector<std::string> commands;  // run once in the shared environment
  std::vector<std::string> reasons;   // how it was chosen, one fact a line
  std::vector<std::size_t> left_out;  // groups the fix does not cover
  std::string arch_list;              // TORCH_CUDA_ARCH_LIST for a build covering every group
};

/// Holds the verdicts of one Python environment path across the fleet.
struct FleetEnv {
  std::string path;  // interpreter path as probed ("/shared/venv/bin/python")
  std::vector<FleetEnvRow> rows;
  FleetFix fix;
};

/// Names a node that gave no usable snapshot, and why (unreachable, down,
/// torchfix missing there, a snapshot that does not parse).
struct FleetFailure {
  std::string node;
  std::string reason;
};

/// Holds the whole fleet report.
struct FleetReport {
  std::vector<FleetGroup> groups;
  std::vector<FleetEnv> envs;
  std::vector<FleetFailure> failures;
  std::size_t nodes = 0;  // nodes with a snapshot

  /// Returns the exit code as the doctor picks it: 1 when an environment
  /// cannot run on some group or a node failed, else 0.
  int exit_code() const;
};

/// Aggregates node snapshots. Memory grows with the number of distinct
/// groups and software variants, not with the number of nodes: only one
/// snapshot per (group, software variant) is kept.
class FleetBuilder {
 public:
  /// Adds the snapshot of `node` (its name; the snapshot's hostname is not
  /// consulted, the caller decides the name). Returns the variant it joined,
  /// for add_same().
  std::size_t add(const std::string& node, Snapshot snapshot);
  /// Adds `node` as one more node of `variant` (a value add() returned): for
  /// callers that know the node's snapshot equals that variant's (same bytes
  /// but for values no decision reads), without parsing it again.
  void add_same(const std::string& node, std::size_t variant);
  /// Records a node that gave no snapshot, with the reason shown to the user.
  void add_failure(std::string node, std::string reason);
  /// Diagnoses one snapshot per variant with `knowledge` and returns the
  /// report; only environments at `python` when it is not empty, else every
  /// path that has torch on some node.
  FleetReport finish(const Knowledge& knowledge, const std::string& python = {}) const;

 private:
  struct Variant {
    std::size_t group = 0;
    Snapshot snapshot;
    std::vector<std::string> nodes;
  };
  std::vector<FleetGroup> m_groups;
  std::unordered_map<std::string, std::size_t> m_group_index;
  std::vector<Variant> m_variants;
  std::unordered_map<std::string, std::size_t> m_variant_index;
  std::vector<FleetFailure> m_failures;
};

/// Returns the distinct compute capabilities of every group, sorted: the
/// union an arch list must cover (`build --arch fleet:DIR`).
std::vector<ComputeCapability> fleet_capabilities(const FleetReport& report);

/// Returns "runs", "runs through PTX JIT", "cannot run", "no torch", "absent".
std::string_view to_string(FleetVerdict verdict);
/// Returns "none-needed", "wheel", "build", "none".
std::string_view to_string(FleetFixKind kind);

}  // namespace torchfix
