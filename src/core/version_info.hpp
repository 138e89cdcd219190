#pragma once

#include <string_view>

namespace torchfix {
/// Names this torchfix release (kept in step with project() in CMakeLists.txt).
inline constexpr std::string_view k_torchfix_version = "0.1.0";
}  // namespace torchfix
