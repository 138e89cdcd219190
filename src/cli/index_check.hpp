#pragma once
// Index truth for the doctor and `torchfix fix`: asks the package index each
// wheel fix would install from (the user's mirror, else upstream) for its
// torch page, so that a wheel the index lacks for the environment's Python
// moves the choice to the next candidate.

#include <chrono>

#include "cli/context.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/facts/knowledge.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix::cli {

/// Fetches the torch pages the fixes of `diagnosis` name into `snapshot`
/// (pythons[].index_pages; templates/index_page.py run by each
/// environment's Python, `timeout` per page, cached under
/// ~/.cache/torchfix/index) and diagnoses `snapshot` again into
/// `diagnosis`: a rejected wheel moves the choice to the next candidate,
/// whose index is asked in the next round (three rounds at most). Without
/// the script (no data folder, no embedded copy) nothing is asked and the
/// tables decide; never fails.
void check_indexes(Snapshot& snapshot, Diagnosis& diagnosis, const Knowledge& knowledge,
                   std::chrono::milliseconds timeout, Context& ctx);

}  // namespace torchfix::cli
