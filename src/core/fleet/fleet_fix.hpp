#pragma once
// The fix that covers every group of a fleet at once (fleet_fix.cpp): one
// official wheel, one source build for the union of the groups' GPUs, the
// driver upgrade a group needs first, or what one wheel leaves out.

#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/fleet/fleet.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix::detail {

/// Returns the fix of environment `env` over the report's groups:
/// `group_snapshots` holds one snapshot per group (what the environment
/// holds now). A source build is offered only where every group's driver
/// drives its GPUs (the doctor's rule: otherwise only a driver upgrade helps).
FleetFix covering_fix(const FleetReport& report, const std::vector<const Snapshot*>& group_snapshots,
                      const FleetEnv& env, const Knowledge& knowledge);

}  // namespace torchfix::detail
