#include "probe/data_dir.hpp"

#include <vector>

namespace torchfix {

Expected<std::filesystem::path> find_data_dir(const Environment& env) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (auto it = env.find("TORCHFIX_DATA_DIR"); it != env.end() && !it->second.empty()) {
    candidates.emplace_back(it->second);
  } else {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
      candidates.push_back(exe.parent_path());
      candidates.push_back(exe.parent_path().parent_path() / "share" / "torchfix");
    }
  }
  std::string tried;
  for (const fs::path& dir : candidates) {
    std::error_code ec;
    if (fs::is_directory(dir / "recipes", ec)) return dir;
    tried += (tried.empty() ? "" : ", ") + dir.string();
  }
  return fail("cannot find torchfix's data folder (recipes/ and templates/); looked in: " +
              (tried.empty() ? std::string("nowhere") : tried) +
              ". Reinstall torchfix or set TORCHFIX_DATA_DIR to the folder that holds recipes/");
}

}  // namespace torchfix
