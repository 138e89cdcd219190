// torchfix version [--json] and the text of --version: the release, the
// commit, the build kind, the target and the tables' date
// (cmake/build-info.cmake decides them at configure time).

#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/build_info.hpp"
#include "core/base/json_text.hpp"
#include "core/base/version_info.hpp"
#include "probe/data_dir.hpp"

namespace torchfix::cli {

namespace {

// The date of the tables `data` holds: the build's for the embedded copy.
std::string tables_date_of(const DataSource& data) {
  const std::string date = folder_tables_date(data);
  return data.embedded() ? std::string(k_build_tables_date) : date.empty() ? std::string("unknown") : date;
}

}  // namespace

std::string tables_text(const Environment& env) {
  auto data = find_data(env);
  if (!data) return "tables: none (" + data.error().message + ")";
  if (data->embedded()) return "tables embedded in the binary, of " + std::string(k_build_tables_date);
  return "tables from " + data->dir.string() + ", files of " + tables_date_of(*data) + " (the binary embeds those of " +
         k_build_tables_date + ")";
}

std::string version_text(const Environment& env) {
  return "torchfix " + std::string(k_torchfix_version) + " (" + std::string(k_torchfix_identity) + ")\n" + "commit " +
         k_build_commit + ", " + k_build_kind + ", " + k_build_target + ", tables of " + k_build_tables_date + "\n" +
         tables_text(env);
}

void add_version(CLI::App& app, Context& ctx) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("version", "Print the release, commit, build kind, target and the tables' date");
  cmd->add_flag("--json", *json, "Print them as JSON (with where the tables are read from: embedded or a folder)");
  cmd->callback([json, &ctx] {
    if (!*json) {
      ctx.out->block(version_text(ctx.env));  // three lines torchfix laid out
      return;
    }
    auto data = find_data(ctx.env);
    nlohmann::json tables = nullptr;  // a wrong TORCHFIX_DATA_DIR: no tables to name
    if (data) tables = {{"source", data->embedded() ? "embedded" : "folder"}, {"date", tables_date_of(*data)}};
    ctx.out->block(json_text(
        {{"schema_version", 1},
         {"version", std::string(k_torchfix_version)},
         {"commit", k_build_commit},
         {"build", k_build_kind},
         {"target", k_build_target},
         {"tables_date", k_build_tables_date},
         {"tables", tables},
         {"data_dir", data && !data->embedded() ? nlohmann::json(data->dir.string()) : nlohmann::json(nullptr)}}));
  });
}

}  // namespace torchfix::cli
