#include "shellenv/variables.hpp"

namespace torchfix::shellenv {

std::string_view to_string(VarAction action) {
  return action == VarAction::set ? "set" : "prepend";
}

std::string_view to_string(Purpose purpose) {
  return purpose == Purpose::build ? "build" : "runtime";
}

std::string_view to_string(PurposeFilter filter) {
  switch (filter) {
    case PurposeFilter::build:
      return "build";
    case PurposeFilter::runtime:
      return "runtime";
    case PurposeFilter::all:
      return "all";
  }
  return "all";
}

Expected<PurposeFilter> parse_purpose_filter(std::string_view text) {
  for (PurposeFilter f : {PurposeFilter::build, PurposeFilter::runtime, PurposeFilter::all}) {
    if (to_string(f) == text) return f;
  }
  return fail("unknown --for value '" + std::string(text) + "'; choose build, runtime or all");
}

bool wanted(PurposeFilter filter, Purpose purpose) {
  return filter == PurposeFilter::all || (filter == PurposeFilter::build) == (purpose == Purpose::build);
}

Expected<void> validate(const EnvVar& var) {
  const auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool ok = !var.name.empty() && alpha(var.name[0]);
  for (char c : var.name) ok = ok && (alpha(c) || digit(c));
  if (!ok) return fail("'" + var.name + "' is not a valid environment variable name");
  if (var.value.find('\0') != std::string::npos) {
    return fail(var.name + ": the value holds a NUL byte, which no environment variable can");
  }
  if (var.action == VarAction::prepend && var.value.find(':') != std::string::npos) {
    return fail(var.name + ": the directory '" + var.value +
                "' contains ':', which a ':'-separated list cannot hold; move or link it to a path without ':'");
  }
  if (var.action == VarAction::prepend && var.value.empty()) {
    return fail(var.name + ": an empty directory would put the current folder on the list");
  }
  return {};
}

}  // namespace torchfix::shellenv
