#include "cli/index_check.hpp"

#include "core/resolver/wheel_index.hpp"
#include "probe/data_dir.hpp"
#include "probe/index_probe.hpp"
#include "probe/process.hpp"

namespace torchfix::cli {

void check_indexes(Snapshot& snapshot, Diagnosis& diagnosis, const Knowledge& knowledge,
                   std::chrono::milliseconds timeout, Context& ctx) {
  auto data = find_data(ctx.env);
  if (!data) return;  // no script to ask with: the tables decide, as offline
  auto script = read_data_file(*data, "templates/index_page.py", data_file_limits("script"));
  if (!script) return;
  IndexProbeOptions probe;
  probe.script = std::move(*script);
  probe.cache_dir = index_cache_dir(ctx.env);
  probe.timeout = timeout;
  for (int round = 0; round < 3 && interrupt_signal() == 0; ++round) {
    const std::vector<IndexQuery> queries = index_queries(snapshot, diagnosis);
    if (queries.empty()) return;
    probe_index_pages(snapshot, queries, probe, ctx.env, *ctx.runner);
    diagnosis = diagnose(snapshot, knowledge);
  }
}

}  // namespace torchfix::cli
