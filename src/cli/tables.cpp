#include "cli/tables.hpp"

#include "probe/knowledge_files.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

Expected<std::string> read_table(const std::filesystem::path& path) {
  auto text = util::read_file_bytes(path, table_limits());
  if (!text) {
    return fail(text.error().message + "; reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/");
  }
  return text;
}

}  // namespace

Expected<std::vector<GpuPeak>> load_gpu_peaks(const std::filesystem::path& data_dir) {
  const auto path = data_dir / "recipes" / "gpu-peaks.toml";
  TF_TRY(text, read_table(path));
  return parse_gpu_peaks(text, path.string());
}

}  // namespace torchfix::cli
