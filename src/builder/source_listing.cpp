#include "builder/source_listing.hpp"

#include <system_error>

namespace torchfix {

bool list_source_folder(const std::filesystem::path& dir, SourceStatus& s) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec) || std::filesystem::is_empty(dir, ec)) {
    s.state = SourceState::absent;
    s.detail = "no folder yet";
    return false;
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    s.top_files.push_back(entry.path().filename().string());
  }
  return true;
}

}  // namespace torchfix
