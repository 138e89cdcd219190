#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace torchfix {

/// Finds the field of `doc` that makes `error_of` (a reader's error for a
/// document, "" when it reads) say `error`, by reading edited copies: an
/// array element or an object's container is the culprit when leaving it out
/// makes the error go; a scalar when giving it the type the error asks for
/// ("type must be string, ...") does. Returns its path as a user writes it,
/// "gpus[0].compute_capability", or "" when no single field explains it.
/// Runs the reader O(depth x log(width)) times, only after a failure.
std::string find_offending_field(const nlohmann::json& doc, const std::string& error,
                                 const std::function<std::string(const nlohmann::json&)>& error_of);

}  // namespace torchfix
