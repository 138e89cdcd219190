#pragma once
// The knowledge tables of this repository (TORCHFIX_SOURCE_DIR/recipes), as
// the tests of the decisions read them: real tables, loaded once per binary.

#include <stdexcept>

#include "probe/knowledge_files.hpp"

namespace torchfix::testing {

/// Returns the tables under TORCHFIX_SOURCE_DIR/recipes (load_knowledge),
/// loaded on first use. Throws std::runtime_error with the loader's message
/// (file and line) when they do not load.
inline const Knowledge& repo_knowledge() {
  static const Knowledge k = [] {
    auto loaded = load_knowledge(TORCHFIX_SOURCE_DIR);
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return *loaded;
  }();
  return k;
}

}  // namespace torchfix::testing
