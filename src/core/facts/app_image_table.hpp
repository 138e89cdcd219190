#pragma once
// The application container image table (recipes/app-images.toml: vLLM's
// vllm/vllm-openai tags), parsed from TOML text with the source of every row.
// Pure: reading the file is probe/knowledge_files.hpp's job; what the doctor
// says inside such an image is core/app_images.hpp.

#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Describes one published image: one tag on one platform.
struct AppImage {
  std::string repository;              // "vllm/vllm-openai"
  std::string tag;                     // "v0.11.0", "v0.11.0-aarch64", "v0.17.1-cu130"
  std::string project;                 // the pip distribution its kernels are for: "vllm"
  std::string project_version;         // "0.11.0", "0.6.3.post1"
  Version order;                       // project_version for ordering: 0.6.3.post1 -> 0.6.3.1
  std::string torch;                   // the torch it pins: "2.8.0"
  Version cuda;                        // the base image's CUDA, major.minor
  std::string cuda_detail;             // "12.8.1" when known
  std::vector<std::string> platforms;  // "x86_64", "arm64"
  std::string arch_list;               // "7.0;7.5;8.0;8.9;9.0;10.0;12.0"
  std::vector<Arch> images;            // what the arch list compiles to
  bool doubtful = false;
  std::string doubt;
  std::string source;

  /// Returns "repository:tag".
  std::string image() const { return repository + ":" + tag; }
};

/// Holds the whole table, sorted by repository, then release, oldest first.
struct AppImageTable {
  std::vector<AppImage> images;
};

/// Parses recipes/app-images.toml ([[image]] rows). Errors name `file`, the
/// line and what is wrong; a row without `source` is an error.
Expected<AppImageTable> parse_app_image_table(std::string_view text, const std::string& file);

}  // namespace torchfix
