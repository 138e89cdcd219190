#pragma once
// torchfix env --guard (cli/guard.cpp).

#include <string>

#include "cli/context.hpp"

namespace torchfix::cli {

/// Says whether --guard writes the guard or (with --uninstall) removes it.
enum class GuardAction { write, remove };

/// Writes (or removes) the guard of the environment of `python` (empty: $VIRTUAL_ENV's);
/// returns the exit code (0 done, 2 bad input or a failed edit, with one line).
int run_guard(const std::string& python, GuardAction action, Context& ctx);

}  // namespace torchfix::cli
