#include "probe/knowledge_files.hpp"

#include "probe/data_dir.hpp"

#include <algorithm>

#include "util/file.hpp"

namespace torchfix {

namespace {}  // namespace

util::ReadLimits table_limits() {
  return util::ReadLimits{2u << 20, util::Pipes::refuse, "knowledge table"};
}

namespace {

// util's reader: a FIFO, /dev/zero or a folder named x.toml is refused at
// once, a table is at most 2 MiB (the largest is 60 KB).
Expected<std::string> read_table(const std::filesystem::path& path) {
  auto text = util::read_file_bytes(path, table_limits());
  if (!text) {
    return fail("cannot read knowledge table " + path.string() + ": " + text.error().message +
                "; reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/");
  }
  return text;
}

}  // namespace

Expected<Knowledge> load_knowledge(const std::filesystem::path& data_dir) {
  std::vector<KnowledgeText> texts;
  for (const char* name :
       {"gpus.toml", "toolkits.toml", "drivers.toml", "torch-wheels.toml", "triton-ptxas.toml", "extensions.toml"}) {
    const auto path = data_dir / "recipes" / name;
    TF_TRY(text, read_table(path));
    texts.push_back({path.string(), std::move(text)});
  }
  TF_TRY(knowledge, parse_knowledge(texts));
  // The container table has its own parser; it is read here so that every
  // decision (the resolver's container candidate, doctor --container) uses one copy.
  const auto ngc_path = data_dir / "recipes" / "ngc-pytorch.toml";
  TF_TRY(ngc_text, read_table(ngc_path));
  TF_TRY(ngc, parse_ngc_table(ngc_text, ngc_path.string()));
  knowledge.ngc = std::move(ngc);
  const auto app_path = data_dir / "recipes" / "app-images.toml";
  TF_TRY(app_text, read_table(app_path));
  TF_TRY(app_images, parse_app_image_table(app_text, app_path.string()));
  knowledge.app_images = std::move(app_images);
  TF_TRY(recipes, load_recipes(data_dir / "recipes" / "build"));
  knowledge.build_recipes = std::move(recipes);
  return knowledge;
}

Expected<std::vector<Recipe>> load_recipes(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return fail("no recipe folder at " + dir.string() +
                ": reinstall torchfix or set TORCHFIX_DATA_DIR to a folder with recipes/build/");
  }
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  }
  std::ranges::sort(files);
  std::vector<Recipe> recipes;
  for (const auto& path : files) {
    // A folder named x.toml is no recipe: say so rather than report a
    // recipe without fields.
    if (std::filesystem::is_directory(path, ec)) {
      return fail(path.string() + ": a folder, not a recipe file; rename it (recipes are *.toml files) or remove it");
    }
    auto text = util::read_file_bytes(path, table_limits());
    if (!text) return fail("cannot read recipe " + text.error().message);
    TF_TRY(recipe, parse_recipe(*text, path.string()));
    for (const Recipe& other : recipes) {
      if (other.name == recipe.name) {
        return fail(path.string() + ": recipe name '" + recipe.name + "' is already used by " + other.file);
      }
    }
    recipes.push_back(std::move(recipe));
  }
  return recipes;
}

Expected<Knowledge> load_installed_knowledge(const Environment& env) {
  TF_TRY(data_dir, find_data_dir(env));
  return load_knowledge(data_dir);
}

}  // namespace torchfix
