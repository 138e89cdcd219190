#pragma once

#include <string_view>

namespace torchfix {
/// Names this torchfix release: project(VERSION) in CMakeLists.txt, passed in
/// by the build as TORCHFIX_VERSION.
inline constexpr std::string_view k_torchfix_version = TORCHFIX_VERSION;
}  // namespace torchfix
