#pragma once
// The guard against later installs, pure part: which lines of an
// environment's `pip freeze` pin its CUDA torch and companions, and what the
// doctor says about a guard it finds.

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnosis.hpp"

namespace torchfix {

/// Returns the constraints file text that pins torch and its companions
/// (torchvision, torchaudio, triton, pytorch-triton, nvidia-* libraries) to
/// the lines of `frozen` (a parse_freeze result), with a header comment
/// naming `interpreter`. nullopt when torch is not in `frozen`.
std::optional<std::string> guard_constraints(const std::map<std::string, std::string>& frozen,
                                             const std::string& interpreter);

/// Returns the doctor's finding about a guard of the environment `env`
/// (`constraints`: the text of its PREFIX/.torchfix/constraints.txt): ok when
/// the installed torch is the pinned one, a warning naming both when something
/// bypassed the guard (installed another torch). nullopt when the file pins no torch.
std::optional<Finding> guard_finding(const PythonEnv& env, std::string_view constraints, const std::string& file);

}  // namespace torchfix
