#include "builder/cache_stats.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace torchfix {

std::optional<double> CacheStats::hit_rate() const {
  if (hits + misses == 0) return std::nullopt;
  return 100.0 * hits / (hits + misses);
}

CacheStats parse_ccache_stats_log(std::string_view log) {
  CacheStats s;
  while (!log.empty()) {
    const std::size_t nl = log.find('\n');
    std::string_view line = log.substr(0, nl);
    log = nl == std::string_view::npos ? std::string_view() : log.substr(nl + 1);
    // direct_cache_hit or preprocessed_cache_hit: one hit; cache_miss: one miss
    // (ccache's own counters, doc/MANUAL.adoc "Cache statistics").
    if (line == "direct_cache_hit" || line == "preprocessed_cache_hit") {
      ++s.hits;
    } else if (line == "cache_miss") {
      ++s.misses;
    } else if (line == "called_for_link" || line == "unsupported_compiler_option" ||
               line == "unsupported_source_language" || line == "multiple_source_files" ||
               line == "called_for_preprocessing" || line == "no_input_file") {
      ++s.not_cached;
    }
  }
  return s;
}

namespace {

int sum_counts(const nlohmann::json& j) {
  int total = 0;
  if (j.is_object() && j.contains("counts") && j["counts"].is_object()) {
    for (const auto& [lang, n] : j["counts"].items()) {
      if (n.is_number_integer()) total += n.get<int>();
    }
  } else if (j.is_object()) {
    for (const auto& [key, n] : j.items()) {
      if (n.is_number_integer()) total += n.get<int>();
    }
  }
  return total;
}

}  // namespace

Expected<CacheStats> parse_sccache_stats(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object() || !json.contains("stats") || !json["stats"].is_object()) {
    return fail("sccache --show-stats --stats-format=json printed no stats object; is sccache 0.4 or newer?");
  }
  const auto& st = json["stats"];
  CacheStats s;
  if (st.contains("cache_hits")) s.hits = sum_counts(st["cache_hits"]);
  if (st.contains("cache_misses")) s.misses = sum_counts(st["cache_misses"]);
  if (st.contains("dist_compiles")) s.remote = sum_counts(st["dist_compiles"]);
  if (st.contains("not_cached")) s.not_cached = sum_counts(st["not_cached"]);
  return s;
}

Expected<DistCluster> parse_dist_status(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded()) {
    return fail("sccache --dist-status did not answer with JSON: " + std::string(text.substr(0, 200)));
  }
  if (!json.is_object() || !json.contains("SchedulerStatus")) {
    return fail("sccache-dist is not usable: sccache --dist-status says " + json.dump() +
                "; give --dist-scheduler URL and --dist-token, or set [dist] in your sccache config");
  }
  const auto& status = json["SchedulerStatus"];
  if (!status.is_array() || status.size() != 2 || !status[1].is_object()) {
    return fail("sccache --dist-status: unexpected SchedulerStatus " + status.dump());
  }
  DistCluster c;
  c.scheduler = status[0].is_string() ? status[0].get<std::string>() : "";
  c.servers = status[1].value("num_servers", 0);
  c.cpus = status[1].value("num_cpus", 0);
  if (c.servers == 0) {
    return fail("the sccache-dist scheduler at " + c.scheduler + " has no build server; start sccache-dist server");
  }
  return c;
}

std::string cache_summary(std::string_view tool, const CacheStats& stats) {
  std::string out = "cache: " + std::string(tool) + ", ";
  if (auto rate = stats.hit_rate()) {
    char pct[16];
    std::snprintf(pct, sizeof pct, "%.1f%%", *rate);
    out += std::to_string(stats.hits) + " of " + std::to_string(stats.hits + stats.misses) +
           " compilations from the cache (" + pct + ")";
  } else {
    out += "no cacheable compilation ran";
  }
  if (stats.not_cached > 0) out += ", " + std::to_string(stats.not_cached) + " calls not cacheable";
  if (stats.remote > 0) out += ", " + std::to_string(stats.remote) + " compiled on sccache-dist servers";
  return out;
}

}  // namespace torchfix
