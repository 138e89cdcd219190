#include "cli/tables.hpp"

#include "probe/knowledge_files.hpp"
#include "util/file.hpp"

namespace torchfix::cli {

Expected<Inputs> load_inputs(const Context& ctx) {
  TF_TRY(data, find_data(ctx.env));
  TF_TRY(knowledge, load_knowledge(data));
  return Inputs{std::move(data), std::move(knowledge)};
}

Expected<std::vector<GpuPeak>> load_gpu_peaks(const DataSource& data) {
  TF_TRY(text, read_data_file(data, "recipes/gpu-peaks.toml", table_limits()));
  return parse_gpu_peaks(text, data.label("recipes/gpu-peaks.toml"));
}

}  // namespace torchfix::cli
