#pragma once
// `torchfix doctor --markdown`: a short block to paste into a GitHub issue.

#include <string>

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix {

/// Returns the doctor's report as GitHub-flavoured Markdown: the facts the
/// verdicts rest on, as `situation` has them (platform, the driver and the
/// CUDA it supports, identical GPUs together, toolkits, Python environments
/// with torch; situation.snapshot must be set), every problem and warning with its fix, and the fix to run
/// first. Redacted for pasting: `home` (the user's $HOME; "" for none)
/// becomes "~", and credentials in URLs and token-shaped words are removed
/// (report/redact.hpp).
std::string doctor_markdown(const Situation& situation, const Diagnosis& diagnosis, const std::string& home);

}  // namespace torchfix
