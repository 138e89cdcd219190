#pragma once
// Reads the knowledge tables from the data folder or the binary's embedded copy.

#include <filesystem>

#include "core/facts/knowledge.hpp"
#include "probe/data_dir.hpp"
#include "probe/process.hpp"
#include "util/file.hpp"

namespace torchfix {

/// Reads and parses recipes/gpus.toml, recipes/toolkits.toml,
/// recipes/torch-wheels.toml (and the other tables parse_knowledge knows),
/// recipes/ngc-pytorch.toml (Knowledge::ngc) and the build recipes
/// recipes/build/*.toml (Knowledge::build_recipes) of `source` (a data
/// folder or the embedded copy). Errors name the file (its path, or
/// "embedded:recipes/...") and what is wrong (missing, unreadable, bad TOML,
/// a row without its source).
Expected<Knowledge> load_knowledge(const DataSource& source);

/// Loads the tables of the data folder `data_dir` (load_knowledge above).
Expected<Knowledge> load_knowledge(const std::filesystem::path& data_dir);

/// Reads every recipes/build/*.toml of `source`, sorted by name; errors as
/// load_recipes below.
Expected<std::vector<Recipe>> load_recipes(const DataSource& source);

/// Reads every *.toml under `dir` (recipes/build), sorted by name. Errors:
/// the folder is missing, a file cannot be read or does not parse (the first
/// malformed recipe is reported with file and line), two recipes share a name.
Expected<std::vector<Recipe>> load_recipes(const std::filesystem::path& dir);

/// Returns the bounds of reading a knowledge table, recipe or data-dir file
/// (2 MiB, regular files only: the largest shipped table is 13 KB).
util::ReadLimits table_limits();

}  // namespace torchfix
