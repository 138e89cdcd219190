#include "cli/tables.hpp"

#include <fstream>
#include <sstream>

namespace torchfix::cli {
namespace {

Expected<std::string> read_table(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (!in || !(text << in.rdbuf())) {
    return fail("cannot read " + path.string() +
                ": missing or unreadable; reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/");
  }
  return text.str();
}

}  // namespace

Expected<std::vector<GpuPeak>> load_gpu_peaks(const std::filesystem::path& data_dir) {
  const auto path = data_dir / "recipes" / "gpu-peaks.toml";
  TF_TRY(text, read_table(path));
  return parse_gpu_peaks(text, path.string());
}

}  // namespace torchfix::cli
