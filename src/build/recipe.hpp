#pragma once
// Build recipes for the build layer: the Recipe type and its parser live in
// core (core/recipe.hpp) so that decisions can see which recipes exist;
// reading recipes/build/*.toml lives with the other knowledge files
// (probe/knowledge_files.hpp).

#include "core/recipe.hpp"
#include "probe/knowledge_files.hpp"
