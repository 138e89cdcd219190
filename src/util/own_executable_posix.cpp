#include <system_error>

#include "util/own_executable.hpp"

namespace torchfix::util {

std::optional<std::filesystem::path> own_executable() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  return exe;
}

}  // namespace torchfix::util
