#pragma once
// Index truth, probe side: fetches the torch page of the index an install
// step names (the user's mirror from the environment's pip/uv
// configuration, else upstream: the URL `torchfix fix` prints) through the
// environment's own Python (templates/index_page.py: urllib, the
// environment's proxies), once, with a short timeout, and keeps what it
// listed under $XDG_CACHE_HOME/torchfix/index (~/.cache/torchfix/index).

#include <chrono>
#include <filesystem>
#include <vector>

#include "core/resolver/wheel_index.hpp"
#include "core/situation/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Holds how torch pages are asked for and kept.
struct IndexProbeOptions {
  std::string script;                        // the text of templates/index_page.py, run with python -I -c
  std::filesystem::path cache_dir;           // index_cache_dir(); empty: no cache
  std::chrono::milliseconds timeout{3'000};  // per page
  std::chrono::seconds max_age{3'600};       // a cached listing older than this is asked again
};

/// Returns the folder of cached torch pages: $XDG_CACHE_HOME/torchfix/index,
/// else $HOME/.cache/torchfix/index; empty when neither variable is set.
std::filesystem::path index_cache_dir(const Environment& env);

/// Fetches the torch page of each query on the index the environment's
/// configuration gives for its upstream (a fresh cached listing first) and
/// adds it to `snapshot.pythons[query.python].index_pages`. A page that
/// gives no answer (network, timeout, no Python to ask with) is added as
/// unreachable with the reason; never fails, never asks twice.
void probe_index_pages(Snapshot& snapshot, const std::vector<IndexQuery>& queries, const IndexProbeOptions& options,
                       const Environment& env, ProcessRunner& runner);

}  // namespace torchfix
