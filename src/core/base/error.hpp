#pragma once
// Error values for failures of the tool itself (not findings about the machine).

#include <expected>
#include <string>
#include <utility>

namespace torchfix {

/// Describes a failure of torchfix itself: what was wrong (with the value) and
/// what to do. Findings about the user's machine are never Errors.
struct Error {
  std::string message;
};

/// Holds a T or the Error that prevented computing it.
template <typename T>
using Expected = std::expected<T, Error>;

/// Builds the unexpected value for an Expected<T> from a message.
inline std::unexpected<Error> fail(std::string message) {
  return std::unexpected<Error>(Error{std::move(message)});
}

}  // namespace torchfix

/// Evaluates an Expected expression; returns its Error from the enclosing
/// function when it failed, else binds the value to `var`.
#define TF_TRY(var, expr)                                            \
  auto var##_result_ = (expr);                                       \
  if (!var##_result_) return std::unexpected(var##_result_.error()); \
  auto var = std::move(*var##_result_)
