#pragma once
// The files of recipes/ and templates/ as they were at build time, compiled
// into the binary (cmake/embed-data.cmake writes embedded_data.cpp).

#include <span>
#include <string_view>

namespace torchfix {

/// Holds one embedded file: its name relative to the data folder
/// ("recipes/gpus.toml") and its bytes.
struct EmbeddedFile {
  std::string_view name;
  std::string_view text;
};

/// Returns every embedded file, sorted by name; empty in no build.
std::span<const EmbeddedFile> embedded_files();

}  // namespace torchfix
