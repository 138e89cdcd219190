// nvcc_candidates on Windows: nvcc.exe on PATH; CUDA_PATH (the toolkit
// installer sets it to the newest toolkit) and CUDA_HOME; every
// CUDA_PATH_V<major>_<minor> the installer sets per toolkit, newest first;
// the installer's default folders %ProgramFiles%\NVIDIA GPU Computing
// Toolkit\CUDA\v<major>.<minor>, newest first; conda's Library\bin; pip's
// nvidia wheels. No Linux folder is looked at (under Wine they would be the
// host's). toolkit_paths.cpp is the Linux side.
#include <algorithm>
#include <filesystem>

#include "probe/toolkit_paths.hpp"

namespace torchfix {
namespace fs = std::filesystem;
namespace {

// Orders "12.10" after "12.9": by version, names that are no version last.
bool newer_first(const std::pair<std::optional<Version>, std::string>& a,
                 const std::pair<std::optional<Version>, std::string>& b) {
  if (a.first && b.first && *a.first != *b.first) return *b.first < *a.first;
  if (a.first.has_value() != b.first.has_value()) return a.first.has_value();
  return a.second < b.second;
}

// CUDA_PATH_V12_8=C:\...\v12.8: one variable per installed toolkit.
void add_versioned_variables(const Environment& env, std::vector<std::pair<std::string, std::string>>& out) {
  std::vector<std::pair<std::optional<Version>, std::string>> names;
  for (const auto& [name, value] : env) {
    if (!name.starts_with("CUDA_PATH_V") || value.empty()) continue;
    std::string dotted = name.substr(11);
    std::ranges::replace(dotted, '_', '.');
    names.emplace_back(Version::parse(dotted), name);
  }
  std::ranges::sort(names, newer_first);
  for (const auto& [version, name] : names) out.emplace_back(env_value(env, name) + "\\bin\\nvcc.exe", name);
}

// %ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA\v12.8\bin\nvcc.exe.
void add_default_folders(const Environment& env, std::vector<std::pair<std::string, std::string>>& out) {
  for (const char* var : {"ProgramW6432", "ProgramFiles"}) {
    const std::string program_files = env_value(env, var);
    if (program_files.empty()) continue;
    const fs::path cuda = fs::path(program_files) / "NVIDIA GPU Computing Toolkit" / "CUDA";
    std::vector<std::pair<std::optional<Version>, std::string>> folders;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(cuda, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() > 1 && (name[0] == 'v' || name[0] == 'V'))
        folders.emplace_back(Version::parse(name.substr(1)), name);
    }
    std::ranges::sort(folders, newer_first);
    for (const auto& [version, name] : folders) {
      out.emplace_back((cuda / name / "bin" / "nvcc.exe").string(),
                       "%" + std::string(var) + "%\\NVIDIA GPU Computing Toolkit");
    }
    return;  // %ProgramW6432% and %ProgramFiles% are one folder for a 64-bit program
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> nvcc_candidates(const Environment& env,
                                                                 const std::vector<PythonEnv>& pythons,
                                                                 const std::string& /*root*/) {
  std::vector<std::pair<std::string, std::string>> out;
  if (auto on_path = find_program("nvcc.exe", env)) out.emplace_back(*on_path, "PATH");
  for (const char* var : {"CUDA_PATH", "CUDA_HOME"}) {
    if (auto dir = env_value(env, var); !dir.empty()) out.emplace_back(dir + "\\bin\\nvcc.exe", var);
  }
  add_versioned_variables(env, out);
  add_default_folders(env, out);
  // conda's cuda-nvcc package on Windows: %CONDA_PREFIX%\Library\bin.
  if (auto conda = env_value(env, "CONDA_PREFIX"); !conda.empty()) {
    out.emplace_back(conda + "\\Library\\bin\\nvcc.exe", "conda");
  }
  for (const PythonEnv& python : pythons) {
    if (!python.site_packages) continue;
    for (const char* sub : {"\\nvidia\\cu13\\bin\\nvcc.exe", "\\nvidia\\cuda_nvcc\\bin\\nvcc.exe"}) {
      out.emplace_back(*python.site_packages + sub, "pip (" + python.interpreter + ")");
    }
  }
  return out;
}

}  // namespace torchfix
