#pragma once
// Compiler cache statistics of one build (torchfix build --cache): ccache
// through its per-build stats log (CCACHE_STATSLOG, ccache 4.x), sccache
// through the JSON of `sccache --show-stats --stats-format=json` of the
// build's own server (SCCACHE_SERVER_PORT), so other builds on the machine
// do not count. Parsing only; running the tools is the CLI's job.

#include <optional>
#include <string>
#include <string_view>

#include "builder/plan.hpp"
#include "core/base/error.hpp"

namespace torchfix {

/// Counts the cacheable compilations of one build.
struct CacheStats {
  int hits = 0;
  int misses = 0;
  int remote = 0;      // compilations sccache-dist ran on a build server
  int not_cached = 0;  // calls the cache could not handle (links, unsupported flags)

  /// Returns hits / (hits + misses) in percent; nullopt when nothing was cacheable.
  std::optional<double> hit_rate() const;
};

/// Counts a ccache stats log (one "# FILE" line per call, then one counter
/// name a line: direct_cache_hit, preprocessed_cache_hit, cache_miss, ...).
CacheStats parse_ccache_stats_log(std::string_view log);

/// Reads sccache's stats JSON: cache_hits and cache_misses summed over
/// languages, dist_compiles summed over servers, not_cached summed.
/// Errors: not JSON or no "stats" object.
Expected<CacheStats> parse_sccache_stats(std::string_view json);

/// Returns "cache: ccache, 12 of 40 compilations from the cache (30.0%)",
/// plus ", 28 ran on sccache-dist servers" when any did.
std::string cache_summary(std::string_view tool, const CacheStats& stats);

/// Reads `sccache --dist-status` ({"SchedulerStatus": [URL, {"num_servers": N,
/// "num_cpus": C, "in_progress": P}]}) into the scheduler URL, servers and
/// CPUs. Errors: sccache says distribution is disabled or the scheduler
/// cannot be reached (its words are in the message), or the text is not that JSON.
Expected<DistCluster> parse_dist_status(std::string_view json);

}  // namespace torchfix
