// open_library and library_symbol (probe/gpu_libraries.hpp) on Windows:
// LoadLibraryExW and GetProcAddress; the Windows driver's library names
// (nvml.dll, nvcuda.dll), its NVSMI folder and nvidia-smi.exe. A bare name
// loads from System32 only (not the current folder or PATH, so a planted DLL
// beside the user's files is not loaded); the NVSMI folder is tried by path
// (probe_library in gpu_probe.cpp). library_posix.cpp is the Linux side.
#include <windows.h>

#include "probe/gpu_libraries.hpp"
#include "probe/gpu_probe.hpp"
#include "probe/process_win.hpp"

namespace torchfix {

// Where the NVIDIA display driver puts them: nvcuda.dll in System32; nvml.dll
// and nvidia-smi.exe in System32 with DCH drivers, and in
// %ProgramW6432%\NVIDIA Corporation\NVSMI with older ones (Chromium loads
// NVML from there: https://crrev.com/1241aea53e75dab24b82f20e705fd290c5d445ea).
const char* const k_nvml_library = "nvml.dll";
const char* const k_cuda_library = "nvcuda.dll";

void* open_library(const std::string& library, std::string& error) {
  const int n = MultiByteToWideChar(CP_UTF8, 0, library.c_str(), -1, nullptr, 0);
  std::wstring wide(static_cast<std::size_t>(n > 0 ? n : 1), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, library.c_str(), -1, wide.data(), n);
  const bool has_folder = library.find_first_of("/\\:") != std::string::npos;
  // A path: its own folder too, for the DLLs it needs beside it.
  const DWORD flags =
      has_folder ? LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32 : LOAD_LIBRARY_SEARCH_SYSTEM32;
  HMODULE module = LoadLibraryExW(wide.c_str(), nullptr, flags);
  if (!module) error = win::error_text("cannot load " + library, GetLastError());
  return reinterpret_cast<void*>(module);
}

void* library_symbol(void* handle, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle), name));
}

std::vector<std::filesystem::path> driver_folders(const std::map<std::string, std::string>& env,
                                                  const std::filesystem::path& /*root*/) {
  // %ProgramW6432% is the 64-bit Program Files even for a 32-bit caller.
  for (const char* name : {"ProgramW6432", "ProgramFiles"}) {
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) continue;
    const std::filesystem::path nvsmi = std::filesystem::path(it->second) / "NVIDIA Corporation" / "NVSMI";
    std::error_code ec;
    if (std::filesystem::is_directory(nvsmi, ec)) return {nvsmi};
  }
  return {};
}

std::vector<DriverVersionFile> driver_version_files(const std::filesystem::path& /*root*/) {
  return {};
}

std::string nvidia_smi_program(const std::map<std::string, std::string>& env) {
  if (find_program("nvidia-smi.exe", env)) return "nvidia-smi.exe";
  for (const std::filesystem::path& folder : driver_folders(env, {})) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(folder / "nvidia-smi.exe", ec)) return (folder / "nvidia-smi.exe").string();
  }
  return "nvidia-smi.exe";
}

}  // namespace torchfix
