// torchfix recipes: lists the build recipes (recipes/build/*.toml) with what
// each builds and how it spells its arch list.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "core/base/json_text.hpp"
#include "core/facts/recipe.hpp"
#include "probe/data_dir.hpp"
#include "probe/knowledge_files.hpp"

namespace torchfix::cli {
namespace {

int run_recipes(bool json, Context& ctx) {
  auto data = find_data(ctx.env);
  if (!data) {
    ctx.err->line("torchfix recipes: " + data.error().message);
    return k_exit_tool_failure;
  }
  auto recipes = load_recipes(*data);
  if (!recipes) {
    ctx.err->line("torchfix recipes: " + recipes.error().message);
    return k_exit_tool_failure;
  }
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const Recipe& r : *recipes) {
      nlohmann::json fronts = nlohmann::json::array();
      for (const FrontEnd& fe : r.front_ends) {
        fronts.push_back(
            {{"name", fe.name}, {"min", fe.min ? fe.min->str() : ""}, {"max", fe.max ? fe.max->str() : ""}});
      }
      list.push_back({{"name", r.name},
                      {"description", r.description},
                      {"kind", r.kind == RecipeKind::project ? "project" : "extension"},
                      {"repository", r.repository},
                      {"default_ref", r.default_ref},
                      {"arch_variable", r.arch_variable},
                      {"arch_format", to_string(r.arch_format)},
                      {"job_memory_mib", r.job_memory_mib},
                      {"front_ends", fronts},
                      {"file", r.file},
                      {"source", r.source}});
    }
    ctx.out->block(json_text({{"schema_version", 1}, {"recipes", list}}));
    return k_exit_ok;
  }
  ctx.out->line(
      fmt::format("{:<15} {:<10} {:<22} {:<9} {}", "RECIPE", "KIND", "ARCH VARIABLE", "MiB/JOB", "REPOSITORY"));
  for (const Recipe& r : *recipes) {
    ctx.out->line(fmt::format("{:<15} {:<10} {:<22} {:<9} {}", r.name,
                              r.kind == RecipeKind::project ? "project" : "extension", r.arch_variable,
                              r.job_memory_mib, r.repository.empty() ? "(--src DIR)" : r.repository));
    ctx.out->line(fmt::format("{:<15} {}", "", r.description));
  }
  ctx.out->line("Recipes are read from " + (data->embedded() ? "the binary (embedded)" : data->label("recipes/build")) +
                "; torchfix build RECIPE --dry-run shows the plan.");
  return k_exit_ok;
}

}  // namespace

void add_recipes(CLI::App& app, Context& ctx) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("recipes", "List the build recipes torchfix build knows");
  cmd->add_flag("--json", *json, "Print the recipes as JSON");
  cmd->callback([json, &ctx] { ctx.exit_code = run_recipes(*json, ctx); });
}

}  // namespace torchfix::cli
