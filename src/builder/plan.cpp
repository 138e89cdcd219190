#include "builder/plan.hpp"

#include <algorithm>
#include <tuple>

namespace torchfix {

std::string_view to_string(FetchAction action) {
  switch (action) {
    case FetchAction::clone:
      return "clone";
    case FetchAction::resume:
      return "resume";
    case FetchAction::checkout:
      return "checkout";
    case FetchAction::use_as_is:
      return "use-as-is";
    case FetchAction::refuse_dirty:
      return "refuse-dirty";
  }
  return "clone";
}

std::string redact_url(std::string_view url) {
  const auto scheme = url.find("://");
  if (scheme == std::string_view::npos) return std::string(url);
  const auto host_start = scheme + 3;
  const auto path_start = url.find('/', host_start);
  const auto at = url.rfind('@', path_start == std::string_view::npos ? url.size() : path_start);
  if (at == std::string_view::npos || at < host_start) return std::string(url);
  return std::string(url.substr(0, host_start)) + "***" + std::string(url.substr(at));
}

}  // namespace torchfix
