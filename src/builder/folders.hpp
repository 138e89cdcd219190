#pragma once
// Where one build's files go under --work-dir: its clone, CMake build folder,
// log and wheels, keyed by what is built so that two projects never share a
// folder. Pure: paths only, nothing is created here.

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace torchfix {

/// Returns 8 hex digits of the FNV-1a 64-bit hash of `text`: a short, stable
/// key for a source path or a repository URL.
inline std::string short_hash(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  for (int shift = 60; out.size() < 8; shift -= 4) out += k_hex[(h >> shift) & 0xf];
  return out;
}

/// Returns the name of one build's folders under the work dir:
/// - `--src DIR`: "<recipe>-<DIR's name>-<hash of DIR's absolute path>", so
///   ~/a/proj and ~/b/proj get different folders;
/// - `--repo URL` (a repository other than the recipe's): "<recipe>-<last
///   URL component>-<hash of the URL>", so two repositories are two clones;
/// - the recipe's own repository: "<recipe>".
inline std::string build_key(std::string_view recipe, const std::optional<std::filesystem::path>& src,
                             const std::optional<std::string>& repository) {
  if (src) {
    const std::filesystem::path absolute = std::filesystem::absolute(*src).lexically_normal();
    std::string name = absolute.filename().string();
    if (name.empty()) name = absolute.parent_path().filename().string();
    return std::string(recipe) + "-" + name + "-" + short_hash(absolute.string());
  }
  if (repository) {
    std::string_view url = *repository;
    while (url.ends_with('/')) url.remove_suffix(1);
    if (url.ends_with(".git")) url.remove_suffix(4);
    const auto slash = url.find_last_of("/:");
    std::string name(slash == std::string_view::npos ? url : url.substr(slash + 1));
    for (char& c : name) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
    }
    return std::string(recipe) + "-" + name + "-" + short_hash(*repository);
  }
  return std::string(recipe);
}

/// Returns the folder a clone goes to (work_dir/<key>); a --src tree is used where it is.
inline std::filesystem::path source_dir(const std::filesystem::path& work_dir, std::string_view recipe,
                                        const std::optional<std::filesystem::path>& src,
                                        const std::optional<std::string>& repository) {
  return src ? *src : work_dir / build_key(recipe, std::nullopt, repository);
}

}  // namespace torchfix
