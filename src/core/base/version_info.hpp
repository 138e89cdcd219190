#pragma once

#include <string_view>

namespace torchfix {
/// Names this torchfix release: project(VERSION) in CMakeLists.txt, passed in
/// by the build as TORCHFIX_VERSION.
inline constexpr std::string_view k_torchfix_version = TORCHFIX_VERSION;

/// Says which tool this is in `torchfix --version`: the PyPI name `torchfix`
/// belongs to TorchFix, a linter for PyTorch code that installs a command of
/// the same name, so this one ships as the distribution `torchfix-gpu`.
inline constexpr std::string_view k_torchfix_identity =
    "torchfix-gpu, the GPU doctor for PyTorch; not the TorchFix linter that PyPI's `torchfix` installs";
}  // namespace torchfix
