// builder/fetch.hpp for builds without libgit2 (TORCHFIX_CLONE=OFF, the Windows
// build for now): nothing is cloned and no git state is read; `--src DIR`
// builds a tree the user cloned with git.
#include "builder/fetch.hpp"
#include "builder/source_listing.hpp"

namespace torchfix {

SourceStatus inspect_source(const std::filesystem::path& dir) {
  SourceStatus s;
  if (!list_source_folder(dir, s)) return s;
  // Not a checkout torchfix can vouch for: the planner refuses it unless
  // --src or --force says to build it as it is.
  s.state = SourceState::not_git;
  s.detail = "this build of torchfix cannot read git checkouts (built without libgit2); use --src " + dir.string();
  return s;
}

Expected<FetchResult> fetch_source(const PlanFetch& /*fetch*/, const std::filesystem::path& /*dir*/,
                                   const FetchProgressFn& /*progress*/) {
  return fail("torchfix build: cloning is not available in this Windows build yet; clone with git and use --src DIR");
}

}  // namespace torchfix
