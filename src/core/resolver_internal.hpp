#pragma once
// Helpers shared by the resolver's files; not part of the public API.

#include <string>
#include <vector>

#include "core/resolver.hpp"

namespace torchfix::detail {

/// Returns major.minor of `v` (2.14.1 -> 2.14).
Version major_minor_of(const Version& v);
/// Returns the constraint's GPUs without duplicates, sorted.
std::vector<ComputeCapability> distinct_gpus(const Constraints& c);
/// Returns capabilities joined by ';' ("8.6;12.0").
std::string cc_list(const std::vector<ComputeCapability>& ccs);
/// Returns the branch of a driver version (570.124.04 -> 570).
int driver_branch(const Version& driver);

}  // namespace torchfix::detail
