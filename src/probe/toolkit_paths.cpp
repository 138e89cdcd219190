// nvcc_candidates on Linux: PATH, CUDA_HOME/CUDA_PATH/CUDA_ROOT,
// /usr/local/cuda, /usr/local/cuda-*, /opt/cuda, conda, pip's nvidia wheels.
// toolkit_paths_win.cpp is the Windows side.
#include <algorithm>
#include <filesystem>

#include "probe/toolkit_paths.hpp"

namespace torchfix {
namespace fs = std::filesystem;

std::vector<std::pair<std::string, std::string>> nvcc_candidates(const Environment& env,
                                                                 const std::vector<PythonEnv>& pythons,
                                                                 const std::string& root) {
  std::vector<std::pair<std::string, std::string>> out;
  if (auto on_path = find_program("nvcc", env)) out.emplace_back(*on_path, "PATH");
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"}) {
    if (auto dir = env_value(env, var); !dir.empty()) out.emplace_back(dir + "/bin/nvcc", var);
  }
  out.emplace_back(root + "/usr/local/cuda/bin/nvcc", "/usr/local/cuda");
  std::error_code ec;
  std::vector<fs::path> versioned;
  for (const auto& entry : fs::directory_iterator(root + "/usr/local", ec)) {
    if (entry.path().filename().string().starts_with("cuda-")) versioned.push_back(entry.path());
  }
  std::ranges::sort(versioned);
  for (const auto& dir : versioned) out.emplace_back((dir / "bin" / "nvcc").string(), "/usr/local/cuda-*");
  out.emplace_back(root + "/opt/cuda/bin/nvcc", "/opt/cuda");
  if (auto conda = env_value(env, "CONDA_PREFIX"); !conda.empty()) out.emplace_back(conda + "/bin/nvcc", "conda");
  for (const PythonEnv& python : pythons) {
    if (!python.site_packages) continue;
    // pip's nvidia-cuda-nvcc wheels: nvidia/cu13/bin (CUDA 13) or nvidia/cuda_nvcc/bin (CUDA 12).
    for (const char* sub : {"/nvidia/cu13/bin/nvcc", "/nvidia/cuda_nvcc/bin/nvcc"}) {
      out.emplace_back(*python.site_packages + sub, "pip (" + python.interpreter + ")");
    }
  }
  return out;
}

}  // namespace torchfix
