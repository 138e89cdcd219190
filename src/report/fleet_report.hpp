#pragma once
// Renders a fleet report (torchfix fleet): human text or JSON
// (schema in docs/fleet.md), and Slurm-style compressed node lists.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "core/fleet/fleet.hpp"
#include "report/doctor_report.hpp"
#include "report/printer.hpp"

namespace torchfix {

/// Prints the groups, each environment's verdict per group with its reason,
/// the covering fix with its commands and reasons, and the failed nodes.
/// `Detail::verbose` lists every node name instead of a compressed list and
/// each group's GPUs, compute capabilities, platform and toolkits.
void print_fleet(const FleetReport& report, Printer& out, Detail detail);

/// Returns the fleet JSON document (schema_version 1, docs/fleet.md).
nlohmann::json fleet_json(const FleetReport& report);

/// Compresses node names the way Slurm's hostlist does: "gpu[001-003,007],login1".
/// Names are grouped by prefix and zero-padded width of their numeric suffix.
std::string compress_hostlist(const std::vector<std::string>& nodes);

/// Returns node-feature-discovery's local feature file for the one node of
/// `report` (NFD customization guide, "Local feature source", features.d:
/// one `key=value` a line): torchfix.dev/cuda-driver (the CUDA the driver
/// supports), torchfix.dev/compute-capability (its GPUs' capabilities joined
/// by '_'), torchfix.dev/gpu-count and, per environment, torchfix.dev/torch.NAME
/// (runs, ptx-jit, cannot-run, no-torch) and torchfix.dev/torch-version.NAME,
/// NAME being the environment's folder (the parent of bin/). Values are
/// cut to Kubernetes' label value rules (63 characters of [A-Za-z0-9._-]).
std::string nfd_features(const FleetReport& report);

}  // namespace torchfix
