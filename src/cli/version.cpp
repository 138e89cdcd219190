// torchfix version [--json] and the text of --version: the release, the
// commit, the build kind, the target and the tables' date
// (cmake/build-info.cmake decides them at configure time).

#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/build_info.hpp"
#include "core/json_text.hpp"
#include "core/version_info.hpp"
#include "probe/data_dir.hpp"

namespace torchfix::cli {

std::string version_text() {
  return "torchfix " + std::string(k_torchfix_version) + " (" + std::string(k_torchfix_identity) + ")\n" + "commit " +
         k_build_commit + ", " + k_build_kind + ", " + k_build_target + ", tables of " + k_build_tables_date;
}

void add_version(CLI::App& app, Context& ctx) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("version", "Print the release, commit, build kind, target and the tables' date");
  cmd->add_flag("--json", *json, "Print them as JSON (with the data folder the tables are read from)");
  cmd->callback([json, &ctx] {
    if (!*json) {
      ctx.out->block(version_text());  // two lines torchfix laid out
      return;
    }
    auto data_dir = find_data_dir(ctx.env);
    ctx.out->block(json_text({{"schema_version", 1},
                              {"version", std::string(k_torchfix_version)},
                              {"commit", k_build_commit},
                              {"build", k_build_kind},
                              {"target", k_build_target},
                              {"tables_date", k_build_tables_date},
                              {"data_dir", data_dir ? nlohmann::json(data_dir->string()) : nlohmann::json(nullptr)}}));
  });
}

}  // namespace torchfix::cli
