// open_library and library_symbol (probe/gpu_libraries.hpp) on POSIX:
// dlopen and dlsym; the Linux driver's library names, folders and version
// files. library_win.cpp is the Windows side.
#include <dlfcn.h>

#include "probe/gpu_libraries.hpp"
#include "probe/gpu_parsers.hpp"
#include "probe/gpu_probe.hpp"

namespace torchfix {

const char* const k_nvml_library = "libnvidia-ml.so.1";
const char* const k_cuda_library = "libcuda.so.1";

std::vector<std::filesystem::path> driver_folders(const std::map<std::string, std::string>& /*env*/,
                                                  const std::filesystem::path& root) {
  std::error_code ec;
  const std::filesystem::path wsl = root / "usr/lib/wsl/lib";
  if (!std::filesystem::is_directory(wsl, ec)) return {};
  return {wsl};
}

std::vector<DriverVersionFile> driver_version_files(const std::filesystem::path& root) {
  return {{root / "sys/module/nvidia/version", "/sys/module/nvidia/version", parse_module_version},
          {root / "proc/driver/nvidia/version", "/proc/driver/nvidia/version", parse_proc_driver_version}};
}

std::string nvidia_smi_program(const std::map<std::string, std::string>& /*env*/) {
  return "nvidia-smi";
}

void* open_library(const std::string& library, std::string& error) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    error = "cannot load " + library + ": " + (why ? why : "unknown dlopen error");
  }
  return handle;
}

void* library_symbol(void* handle, const char* name) {
  return ::dlsym(handle, name);
}

}  // namespace torchfix
