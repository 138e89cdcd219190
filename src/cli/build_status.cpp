#include "cli/build_status.hpp"

#include <cstdio>

namespace torchfix::cli {

std::string format_duration(double seconds) {
  const long s = static_cast<long>(seconds);
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s / 60) % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  }
  return buf;
}

}  // namespace torchfix::cli
