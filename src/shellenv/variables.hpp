#pragma once
// The environment variables a snippet sets, as plain values: what `torchfix
// env` prints, installs and reports with --json. Chosen by select_variables
// (selection.hpp), rendered per shell by render_snippet (snippet.hpp).

#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.hpp"

namespace torchfix::shellenv {

/// Says how a snippet line changes a variable.
enum class VarAction {
  set,      // NAME=value
  prepend,  // put a directory in front of a ':'-separated list (PATH), once
};

/// Says which use a variable serves: building CUDA code, or running torch.
enum class Purpose { build, runtime };

/// Says which variables a snippet holds (`--for build|runtime|all`).
enum class PurposeFilter { build, runtime, all };

/// Describes one variable of a snippet and why it is there.
struct EnvVar {
  std::string name;   // "CUDA_HOME"
  std::string value;  // raw bytes, unquoted: "/usr/local/cuda-13.0"
  VarAction action = VarAction::set;
  Purpose purpose = Purpose::build;
  std::string reason;  // one line, shown as the comment above the line

  bool operator==(const EnvVar&) const = default;
};

/// Returns "set" / "prepend", "build" / "runtime", "build" / "runtime" / "all".
std::string_view to_string(VarAction action);
std::string_view to_string(Purpose purpose);
std::string_view to_string(PurposeFilter filter);
/// Parses "build", "runtime" or "all"; errors name the value and the choices.
Expected<PurposeFilter> parse_purpose_filter(std::string_view text);

/// Returns true when a variable serving `purpose` belongs in a snippet for `filter`.
bool wanted(PurposeFilter filter, Purpose purpose);

/// Checks that `name` is a portable variable name ([A-Za-z_][A-Za-z0-9_]*)
/// and that `value` can be set (no NUL byte; no ':' in a prepended directory,
/// which a PATH list cannot hold). Errors name the variable and the value.
Expected<void> validate(const EnvVar& var);

}  // namespace torchfix::shellenv
