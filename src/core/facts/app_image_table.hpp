#pragma once
// The application container image table (recipes/app-images.toml: vLLM's
// vllm/vllm-openai and SGLang's lmsysorg/sglang tags, and how the doctor
// knows it runs inside one), parsed from TOML text with the source of every
// row. Pure: reading the file is probe/knowledge_files.hpp's job; what the
// doctor says inside such an image is core/diagnosis/app_images.hpp.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Describes one application whose official images the table lists, and the
/// mark its image leaves on a machine (exactly one of the two markers).
struct AppProject {
  std::string name;             // its pip distribution: "vllm", "sglang"
  std::string title;            // how output names it: "vLLM", "SGLang"
  std::string repository;       // its image repository: "vllm/vllm-openai", "lmsysorg/sglang"
  std::string kernels;          // the distribution its CUDA kernels are in: "vllm", "sgl-kernel"
  std::string marker_variable;  // a variable the image sets ("VLLM_USAGE_SOURCE"), or ""
  std::string marker_value;     // its value there ("production-docker-image")
  std::string marker_editable;  // the folder the image installs `name` editable from, or ""
  std::string source;
};

/// Describes one published image: one tag on one platform.
struct AppImage {
  std::string repository;              // "vllm/vllm-openai", "lmsysorg/sglang"
  std::string tag;                     // "v0.11.0", "v0.11.0-aarch64", "v0.5.5-cu129-amd64"
  std::string project;                 // the [[project]] it belongs to: "vllm", "sglang"
  std::string project_version;         // "0.11.0", "0.6.3.post1"
  Version order;                       // project_version for ordering: 0.6.3.post1 -> 0.6.3.1
  std::string kernels_version;         // the kernel distribution's version when it is not the project's
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

/// Holds the whole table: the projects in file order, the images sorted by
/// repository, then release, oldest first.
struct AppImageTable {
  std::vector<AppProject> projects;
  std::vector<AppImage> images;
};

/// Returns a release's order key: "0.6.3.post1" -> 0.6.3.1, "0.11.0" ->
/// 0.11.0.0, "0.11.0+cu128" -> 0.11.0.0 (a post release after its base);
/// nullopt for any other form.
std::optional<Version> app_release_order(std::string_view version);

/// Parses recipes/app-images.toml ([[project]] and [[image]] rows). Errors
/// name `file`, the line and what is wrong: a row without `source`, a
/// project with no marker or two, an image of a project not listed.
Expected<AppImageTable> parse_app_image_table(std::string_view text, const std::string& file);

}  // namespace torchfix
