#include "builder/project_scan.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "core/arch/nvcc_args.hpp"
#include "util/file.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;

// Arch flags written into a build file; a numeric CMake architectures list.
const std::regex& arch_flag_pattern() {
  static const std::regex k(R"(-gencode|--generate-code|arch=compute_|-arch[= ]+sm_|--gpu-architecture)",
                            std::regex::optimize);
  return k;
}
const std::regex& cmake_arch_pattern() {
  static const std::regex k(R"((CMAKE_CUDA_ARCHITECTURES|CUDA_ARCHITECTURES)\s+"?([0-9][0-9 ;a-z\-]*))",
                            std::regex::optimize);
  return k;
}

bool is_comment(std::string_view line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string_view::npos && line[first] == '#';
}

// The images a CMake list like "75 80 86-real 90a" names: sm_75, sm_80, ...
void cmake_images(const std::string& list, std::vector<std::string>& out) {
  std::istringstream words(std::regex_replace(list, std::regex("[;\"]"), " "));
  for (std::string w; words >> w;) {
    const auto digits = w.find_first_not_of("0123456789");
    if (digits == 0) continue;
    const std::string number = w.substr(0, digits);
    const std::string variant = digits < w.size() && (w[digits] == 'a' || w[digits] == 'f') ? w.substr(digits, 1) : "";
    out.push_back("sm_" + number + variant);
  }
}

}  // namespace

ProjectScan analyse_project_files(const std::vector<std::pair<std::string, std::string>>& files, int sources) {
  static const std::regex k_ninja_off(R"(use_ninja\s*=\s*False)");
  static const std::regex k_extension(R"(\b(CUDAExtension|CppExtension|Extension)\s*\()");
  static const std::regex k_loop(R"(^\s*for\s.*\sin\s)");
  ProjectScan scan;
  scan.sources = sources;
  std::vector<std::string> asked;
  for (const auto& [path, text] : files) {
    std::istringstream lines(text);
    bool hard_codes = false;
    int number = 0;
    for (std::string line; std::getline(lines, line);) {
      ++number;
      if (is_comment(line)) continue;
      std::smatch m;
      if (std::regex_search(line, arch_flag_pattern())) {
        hard_codes = true;
        for (std::string& i : images_named(line)) asked.push_back(std::move(i));
      } else if (std::regex_search(line, m, cmake_arch_pattern())) {
        hard_codes = true;
        cmake_images(m[2].str(), asked);
      }
      if (!path.ends_with(".py")) continue;
      if (scan.ninja_off.empty() && std::regex_search(line, k_ninja_off)) {
        scan.ninja_off = path + ":" + std::to_string(number);
      }
      scan.extension_loop = scan.extension_loop || std::regex_search(line, k_loop);
      scan.extensions += static_cast<int>(
          std::distance(std::sregex_iterator(line.begin(), line.end(), k_extension), std::sregex_iterator()));
    }
    if (hard_codes) scan.arch_files.push_back(path);
  }
  std::string joined;
  for (const std::string& a : asked) joined += a + " ";
  scan.asked = images_named(joined);
  return scan;
}

ProjectScan scan_project(const fs::path& dir) {
  static const std::set<std::string> k_skipped = {".git", "build", "third_party", "3rdparty",   "external", "tests",
                                                  "test", "docs",  "doc",         "benchmarks", "examples", ".github"};
  std::vector<std::pair<std::string, std::string>> files;
  int sources = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  for (int seen = 0; !ec && it != fs::recursive_directory_iterator() && seen < 50000; it.increment(ec), ++seen) {
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    std::error_code kind;
    if (it->is_directory(kind)) {
      if (k_skipped.contains(name) || it.depth() >= 3) it.disable_recursion_pending();
      continue;
    }
    const std::string ext = p.extension().string();
    if (ext == ".cu" || ext == ".cpp" || ext == ".cc" || ext == ".c") ++sources;
    const bool build_file = (name == "setup.py" && it.depth() == 0) || name == "CMakeLists.txt" || ext == ".cmake";
    if (!build_file) continue;
    // util's reader: regular files of at most 1 MiB (a FIFO or a huge file
    // planted in a source tree is skipped, never read).
    auto text = util::read_file_bytes(p, {.max_bytes = 1u << 20, .pipes = util::Pipes::refuse, .what = "build file"});
    if (text) files.emplace_back(p.lexically_relative(dir).string(), std::move(*text));
  }
  std::ranges::sort(files);
  return analyse_project_files(files, sources);
}

}  // namespace torchfix
