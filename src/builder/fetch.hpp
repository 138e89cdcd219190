#pragma once
// Fetching sources with libgit2: inspect a folder (absent, partial, clean,
// dirty), clone or resume, check out a tag/branch/commit, and initialise and
// update submodules recursively after syncing their URLs. Never resets or
// overwrites local changes. Credentials in URLs never reach messages.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "builder/plan.hpp"
#include "core/base/error.hpp"

namespace torchfix {

/// Reports fetch progress (objects and bytes received for one repository).
struct FetchProgress {
  std::string repository;  // "pytorch" or a submodule path "third_party/nccl"
  std::size_t received_objects = 0;
  std::size_t total_objects = 0;
  std::size_t indexed_objects = 0;
  std::uint64_t received_bytes = 0;
  double bytes_per_second = 0;  // since this repository's transfer started
};

/// Receives progress; returns false to cancel the fetch (Ctrl-C, tests).
using FetchProgressFn = std::function<bool(const FetchProgress&)>;

/// Summarises what a fetch did.
struct FetchResult {
  std::string commit;                // checked-out commit of the top repository (hex)
  std::size_t objects_received = 0;  // objects downloaded in this run, all repositories
  int repositories_fetched = 0;      // repositories that needed a network fetch in this run
  int submodules = 0;                // submodules checked out (recursively)
};

/// Inspects `dir`: absent (missing or empty), not_git, partial (no commit
/// checked out yet, or a submodule not initialised or not checked out), dirty
/// (tracked files modified, staged or deleted, in the top repository or a
/// submodule), else clean. Fills head and top_files. Never fails: what cannot
/// be read is reported in `detail`.
SourceStatus inspect_source(const std::filesystem::path& dir);

/// Makes `dir` a checkout of `fetch.ref` from `fetch.url_with_credentials`:
/// initialises a repository when absent, fetches only when the ref is not
/// there yet (or is a branch), checks it out without overwriting local
/// changes, then syncs and updates submodules recursively (when
/// fetch.submodules). A rerun after an interruption fetches only what is
/// missing. Errors: a dirty tree (never touched), a ref that does not exist
/// (named), network or libgit2 failures (URL redacted), cancelled by `progress`.
Expected<FetchResult> fetch_source(const PlanFetch& fetch, const std::filesystem::path& dir,
                                   const FetchProgressFn& progress);

}  // namespace torchfix
