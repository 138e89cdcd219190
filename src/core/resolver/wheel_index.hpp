#pragma once
// Index truth, pure part: what a wheel index's torch page says about the
// wheels a fix would install. The probe (probe/index_probe.hpp) fetches the
// torch page of the index an install step names (the user's mirror, else
// upstream) into Snapshot::pythons[i].index_pages; the resolver then rejects
// a wheel the page has no file of for the environment's Python and
// platform, so the next candidate is printed instead of an install that
// fails. Without a page (not asked, unreachable) the tables decide alone.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"
#include "core/base/index_page.hpp"
#include "core/base/version.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Returns whether wheel file `file`
/// ("torch-2.8.0+cu128-cp312-cp312-manylinux_2_28_x86_64.whl") is a torch
/// that `torch==RELEASE` (exact, the local label ignored) or
/// `torch==RELEASE.*` (major.minor) installs for Python `python` (its cpXY
/// tag, or a py3 wheel; unknown: any) on `platform` (manylinux/linux
/// x86_64 or aarch64, win_amd64, or any). Pre-releases and free-threaded
/// builds (cp313t) do not count, as pip would not pick them.
bool wheel_file_fits(std::string_view file, const Version& release, bool exact, const std::optional<Version>& python,
                     PlatformKind platform);

/// Returns the page of `pages` probed for `upstream`, or null.
const IndexPage* find_index_page(const std::vector<IndexPage>& pages, std::string_view upstream);

/// Returns why torch `release` (exact, or major.minor) cannot be installed
/// from `page` for Python `python` on `platform` ("URL lists no torch 2.5.*
/// for cp313 on linux-x86_64 (PEP 503 HTML, 12 torch files)"), or nullopt
/// when the page lists a fitting file or gave no answer (unreachable).
std::optional<std::string> index_hole(const IndexPage& page, const Version& release, bool exact,
                                      const std::optional<Version>& python, PlatformKind platform);

/// Names a torch page the fixes want and the snapshot lacks: environment
/// `python` (an index into Snapshot::pythons) installs from `upstream`.
struct IndexQuery {
  std::size_t python = 0;
  std::string upstream;  // https://download.pytorch.org/whl/cu128
  std::string variant;   // cu128
};

/// Returns the torch pages that the wheel install steps of the fixes in
/// `diagnosis` name and `snapshot` has not probed, one per environment and index.
std::vector<IndexQuery> index_queries(const Snapshot& snapshot, const Diagnosis& diagnosis);

/// Returns what decided the wheel of install `step` for an environment with
/// `pages`: "checked on URL (PEP 691 JSON)", "not checked: URL: timed out
/// after 3 s"; empty when the step installs no wheel from a torch index or
/// no page was asked for.
std::string index_note(const FixStep& step, const std::vector<IndexPage>& pages);

}  // namespace torchfix
