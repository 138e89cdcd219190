#include "probe/knowledge_files.hpp"

#include "probe/data_dir.hpp"

#include <algorithm>

#include "util/file.hpp"

namespace torchfix {

util::ReadLimits table_limits() {
  return util::ReadLimits{2u << 20, util::Pipes::refuse, "knowledge table"};
}

// util's reader on disk: a FIFO, /dev/zero or a folder named x.toml is
// refused at once, a table is at most 2 MiB (the largest is 60 KB).
Expected<Knowledge> load_knowledge(const DataSource& source) {
  std::vector<KnowledgeText> texts;
  for (const char* name :
       {"gpus.toml", "toolkits.toml", "drivers.toml", "torch-wheels.toml", "triton-ptxas.toml", "extensions.toml"}) {
    const std::string relative = std::string("recipes/") + name;
    TF_TRY(text, read_data_file(source, relative, table_limits()));
    texts.push_back({source.label(relative), std::move(text)});
  }
  TF_TRY(knowledge, parse_knowledge(texts));
  // The container table has its own parser; it is read here so that every
  // decision (the resolver's container candidate, doctor --container) uses one copy.
  TF_TRY(ngc_text, read_data_file(source, "recipes/ngc-pytorch.toml", table_limits()));
  TF_TRY(ngc, parse_ngc_table(ngc_text, source.label("recipes/ngc-pytorch.toml")));
  knowledge.ngc = std::move(ngc);
  TF_TRY(app_text, read_data_file(source, "recipes/app-images.toml", table_limits()));
  TF_TRY(app_images, parse_app_image_table(app_text, source.label("recipes/app-images.toml")));
  knowledge.app_images = std::move(app_images);
  TF_TRY(recipes, load_recipes(source));
  knowledge.build_recipes = std::move(recipes);
  return knowledge;
}

Expected<Knowledge> load_knowledge(const std::filesystem::path& data_dir) {
  return load_knowledge(DataSource{data_dir});
}

namespace {

// Reads the recipes of `folder` under `source` ("recipes/build").
Expected<std::vector<Recipe>> load_recipes_in(const DataSource& source, const std::string& folder) {
  std::error_code ec;
  if (!source.embedded() && !std::filesystem::is_directory(source.dir / folder, ec)) {
    return fail("no recipe folder at " + source.label(folder) +
                ": reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/build/");
  }
  TF_TRY(names, list_data_files(source, folder, ".toml", "recipe"));
  std::vector<Recipe> recipes;
  for (const std::string& name : names) {
    auto text = read_data_file(source, name, table_limits());
    if (!text) return fail("cannot read recipe " + text.error().message);
    TF_TRY(recipe, parse_recipe(*text, source.label(name)));
    for (const Recipe& other : recipes) {
      if (other.name == recipe.name) {
        return fail(source.label(name) + ": recipe name '" + recipe.name + "' is already used by " + other.file);
      }
    }
    recipes.push_back(std::move(recipe));
  }
  return recipes;
}

}  // namespace

Expected<std::vector<Recipe>> load_recipes(const DataSource& source) {
  return load_recipes_in(source, "recipes/build");
}

Expected<std::vector<Recipe>> load_recipes(const std::filesystem::path& dir) {
  // A folder of recipes alone (tests, a user's own): its parent is the
  // source, so that messages name each file by its own path.
  std::filesystem::path folder = dir.lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();
  return load_recipes_in(DataSource{folder.parent_path()}, folder.filename().string());
}

}  // namespace torchfix
