// open_library and library_symbol (probe/gpu_libraries.hpp) on Windows:
// LoadLibraryExW from the system folders only (not the current folder, so a
// planted DLL beside the user's files is not loaded) and GetProcAddress. The
// probes still ask for the Linux names (libnvidia-ml.so.1, libcuda.so.1),
// which do not load here: NVML and the driver API report "cannot load" and
// the GPU probe falls back to nvidia-smi (nvml.dll is the next step,
// docs/windows.md).
#include <windows.h>

#include "probe/gpu_libraries.hpp"

namespace torchfix {

void* open_library(const std::string& library, std::string& error) {
  const int n = MultiByteToWideChar(CP_UTF8, 0, library.c_str(), -1, nullptr, 0);
  std::wstring wide(static_cast<std::size_t>(n > 0 ? n : 1), L'\0');
  MultiByteToWideChar(CP_UTF8, 0, library.c_str(), -1, wide.data(), n);
  HMODULE module = LoadLibraryExW(wide.c_str(), nullptr, LOAD_LIBRARY_SEARCH_DEFAULT_DIRS);
  if (!module) error = "cannot load " + library + ": Windows error " + std::to_string(GetLastError());
  return reinterpret_cast<void*>(module);
}

void* library_symbol(void* handle, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle), name));
}

}  // namespace torchfix
