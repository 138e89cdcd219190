#pragma once
// What a project's own build files say about the build torchfix plans: an
// arch list it hard-codes (so TORCH_CUDA_ARCH_LIST and CUDAARCHS do not
// reach nvcc and torchfix must stand in for nvcc), ninja turned off (files
// compile one at a time) and how many extensions and sources it has.
// analyse_project_files is pure; scan_project reads the tree.

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace torchfix {

/// Holds what the scan found in a project's setup.py, CMakeLists.txt and *.cmake files.
struct ProjectScan {
  std::vector<std::string> arch_files;  // files that hard-code arch flags ("setup.py", "csrc/CMakeLists.txt")
  std::vector<std::string> asked;       // images those files name ("sm_75", "compute_90"), sorted by number
  std::string ninja_off;                // "setup.py:139" where ninja is turned off; empty: not seen
  int extensions = 0;                   // Extension / CppExtension / CUDAExtension calls written in setup.py
  bool extension_loop = false;          // setup.py has a for loop (extensions made per file or per op)
  int sources = 0;                      // .cu, .cpp, .cc and .c files in the tree (tests, docs, build/ left out)
};

/// Analyses build files given as (path relative to the project, text):
/// arch flags (-gencode, --generate-code, arch=compute_, -arch=sm_,
/// --gpu-architecture) or a numeric CMAKE_CUDA_ARCHITECTURES / CUDA_ARCHITECTURES
/// set in the file, `use_ninja=False`, extension constructors. Comment lines
/// (# ...) are skipped. `sources` is copied into the result.
ProjectScan analyse_project_files(const std::vector<std::pair<std::string, std::string>>& files, int sources);

/// Reads setup.py and every CMakeLists.txt and *.cmake file of `dir` (at most
/// 3 folders deep; .git, build, third_party, 3rdparty, external, tests and
/// docs skipped), counts its sources and analyses them. A missing or
/// unreadable folder gives an empty scan.
ProjectScan scan_project(const std::filesystem::path& dir);

}  // namespace torchfix
