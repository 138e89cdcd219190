#pragma once
// The bounds a snapshot read from a file must keep: the ones the live probes
// apply (64 GPUs, versions of a few parts, numbers in range), so a file can
// neither make torchfix compute for minutes nor reach undefined behaviour
// (a float out of an int's range, cast by nlohmann's get<int>).

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>

#include "core/base/error.hpp"

namespace torchfix {

/// Returns the deepest nesting a snapshot, report or what-if file may have
/// (64; a snapshot is 6 deep).
constexpr int k_snapshot_json_depth_max = 64;

/// Parses `text` as JSON after one allocation-free pass that refuses arrays
/// and objects nested deeper than k_snapshot_json_depth_max (10 MB of "["
/// costs no memory). Returns a discarded value (is_discarded()) when the
/// text is not JSON or is nested too deep.
nlohmann::json parse_json_bounded(std::string_view text);

/// Checks the bounds of a snapshot's JSON before snapshot_from_json reads
/// it: at most 64 GPUs (the probe's cap), 256 Python environments, 64
/// toolkits and compilers; integer fields (schema_version, cpus, index,
/// memory_*bytes, cudnn, modules) integers from 0 to 2^53 (int fields to
/// 2^31-1); cpu_quota finite and >= 0; lists are lists; strings at most
/// 64 KiB; version strings at most 8 dot-separated parts. Errors name the field.
Expected<void> check_snapshot_bounds(const nlohmann::json& snapshot);

}  // namespace torchfix
