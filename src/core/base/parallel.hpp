#pragma once
// One way to spread independent work over the CPUs: the fleet's snapshot
// reading (fleet/collect.cpp) and its per-variant verdicts (core/fleet/fleet.cpp).

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace torchfix {

/// Returns how many threads parallel work uses: the CPUs this process may
/// run on (std::thread::hardware_concurrency), between 1 and 16.
inline std::size_t worker_count() {
  return std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
}

/// Calls `work(i)` for every i in [0, count) on up to worker_count()
/// threads (the caller's among them), each index once, in no set order;
/// returns when all are done. `work` must be safe to call concurrently and
/// must not throw.
template <typename Work>
void for_each_index(std::size_t count, Work&& work) {
  std::atomic<std::size_t> next{0};
  const auto drain = [&] {
    for (std::size_t i = next++; i < count; i = next++) work(i);
  };
  std::vector<std::jthread> pool;
  for (std::size_t t = 1; t < std::min(worker_count(), count); ++t) pool.emplace_back(drain);
  drain();
}

}  // namespace torchfix
