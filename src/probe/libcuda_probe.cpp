#include "probe/libcuda_probe.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace torchfix {
namespace {

// Splits a colon-separated path list, dropping empty entries.
std::vector<std::string> path_list(const Environment& env, const char* name) {
  std::vector<std::string> out;
  const auto it = env.find(name);
  if (it == env.end()) return out;
  std::string_view rest = it->second;
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view item = rest.substr(0, colon);
    if (!item.empty()) out.emplace_back(item);
    rest = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  }
  return out;
}

// Says whether `dir`/`name` exists under `root` as the linker sees it:
// std::filesystem::exists follows symlinks, so a dangling link is absent.
bool has_file(const std::filesystem::path& root, const std::string& dir, const char* name) {
  std::error_code ec;
  return std::filesystem::exists(root / std::filesystem::path(dir).relative_path() / name, ec);
}

void add_unique(std::vector<std::string>& dirs, std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (std::ranges::find(dirs, dir) == dirs.end()) dirs.push_back(std::move(dir));
}

// Returns the folders of the `ldconfig -p` lines that name libcuda.so.1
// ("\tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1").
std::vector<std::string> ldconfig_dirs(std::string_view listing) {
  std::vector<std::string> dirs;
  while (!listing.empty()) {
    const auto end = listing.find('\n');
    const std::string_view line = listing.substr(0, end);
    listing = end == std::string_view::npos ? std::string_view{} : listing.substr(end + 1);
    if (line.find("libcuda.so.1") == std::string_view::npos) continue;
    const auto arrow = line.rfind(" ");
    const std::string_view path = line.substr(arrow + 1);
    const auto slash = path.rfind('/');
    if (slash != std::string_view::npos) add_unique(dirs, std::string(path.substr(0, slash == 0 ? 1 : slash)));
  }
  return dirs;
}

}  // namespace

LibcudaLink probe_libcuda_link(const Environment& env, std::string_view ldconfig_listing, std::string_view machine,
                               const std::filesystem::path& root) {
  LibcudaLink link;
  if (const auto set = env.find("TRITON_LIBCUDA_PATH"); set != env.end() && !set->second.empty()) {
    link.triton_dirs.push_back(set->second);
  } else {
    link.triton_dirs = ldconfig_dirs(ldconfig_listing);
    if (link.triton_dirs.empty()) {
      for (std::string& dir : path_list(env, "LD_LIBRARY_PATH")) {
        if (has_file(root, dir, "libcuda.so.1")) add_unique(link.triton_dirs, std::move(dir));
      }
    }
  }
  for (std::string& dir : path_list(env, "LIBRARY_PATH")) add_unique(link.linker_dirs, std::move(dir));
  const std::string triplet = std::string(machine) + "-linux-gnu";
  for (const std::string& dir : {"/usr/local/lib/" + triplet, "/lib/" + triplet, "/usr/lib/" + triplet,
                                 std::string("/usr/local/lib64"), std::string("/lib64"), std::string("/usr/lib64"),
                                 std::string("/usr/local/lib"), std::string("/lib"), std::string("/usr/lib")}) {
    add_unique(link.linker_dirs, dir);
  }
  for (const std::string& dir : link.triton_dirs) {
    if (!link.libcuda_so_1 && has_file(root, dir, "libcuda.so.1")) link.libcuda_so_1 = dir + "/libcuda.so.1";
    if (!link.libcuda_so && has_file(root, dir, "libcuda.so")) link.libcuda_so = dir + "/libcuda.so";
  }
  for (const std::string& dir : link.linker_dirs) {
    if (!link.libcuda_so && has_file(root, dir, "libcuda.so")) link.libcuda_so = dir + "/libcuda.so";
  }
  return link;
}

}  // namespace torchfix
