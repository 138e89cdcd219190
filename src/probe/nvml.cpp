// NVML through dlopen: the tool must start on machines without a driver, and
// nvml.h is not in every toolkit, so the few prototypes used are declared
// here (a stable C ABI; names and values from nvml.h of CUDA 12/13).

#include "probe/gpu_libraries.hpp"

namespace torchfix {
namespace {

using NvmlReturn = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlMemory {  // nvmlMemory_t (v1)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

constexpr unsigned k_name_buffer = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned k_version_buffer = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

struct NvmlApi {
  NvmlReturn (*init)() = nullptr;
  NvmlReturn (*shutdown)() = nullptr;
  NvmlReturn (*device_count)(unsigned*) = nullptr;
  NvmlReturn (*device_handle)(unsigned, NvmlDevice*) = nullptr;
  NvmlReturn (*device_name)(NvmlDevice, char*, unsigned) = nullptr;
  NvmlReturn (*device_cc)(NvmlDevice, int*, int*) = nullptr;
  NvmlReturn (*device_memory)(NvmlDevice, NvmlMemory*) = nullptr;
  NvmlReturn (*driver_version)(char*, unsigned) = nullptr;
  NvmlReturn (*cuda_version)(int*) = nullptr;
  const char* (*error_string)(NvmlReturn) = nullptr;
};

// Names of the codes a user is likely to meet, so a note reads
// "NVML_ERROR_DRIVER_NOT_LOADED (9)" even when nvmlErrorString is missing.
const char* nvml_code_name(NvmlReturn code) {
  switch (code) {
    case 1:
      return "NVML_ERROR_UNINITIALIZED";
    case 2:
      return "NVML_ERROR_INVALID_ARGUMENT";
    case 3:
      return "NVML_ERROR_NOT_SUPPORTED";
    case 4:
      return "NVML_ERROR_NO_PERMISSION";
    case 6:
      return "NVML_ERROR_NOT_FOUND";
    case 9:
      return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 12:
      return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13:
      return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 15:
      return "NVML_ERROR_GPU_IS_LOST";
    case 18:
      return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 999:
      return "NVML_ERROR_UNKNOWN";
    default:
      return "NVML error";
  }
}

std::string describe(const NvmlApi& api, const char* call, NvmlReturn code) {
  std::string text = std::string(call) + " failed: " + nvml_code_name(code) + " (" + std::to_string(code) + ")";
  if (api.error_string) {
    if (const char* message = api.error_string(code)) text += ": " + std::string(message);
  }
  return text;
}

// Runs on the watchdog thread: owns nothing of the caller's.
LibraryProbeResult query_nvml(const std::string& library) {
  LibraryProbeResult result;
  auto note = [&result](std::string message) { result.notes.push_back({"nvml", std::move(message)}); };

  void* handle = open_library_or_note(library, "nvml", result);
  if (!handle) return result;
  NvmlApi api;
  api.init = load_symbol<decltype(api.init)>(handle, "nvmlInit_v2");
  api.shutdown = load_symbol<decltype(api.shutdown)>(handle, "nvmlShutdown");
  api.device_count = load_symbol<decltype(api.device_count)>(handle, "nvmlDeviceGetCount_v2");
  api.device_handle = load_symbol<decltype(api.device_handle)>(handle, "nvmlDeviceGetHandleByIndex_v2");
  api.device_name = load_symbol<decltype(api.device_name)>(handle, "nvmlDeviceGetName");
  api.device_cc = load_symbol<decltype(api.device_cc)>(handle, "nvmlDeviceGetCudaComputeCapability");
  api.device_memory = load_symbol<decltype(api.device_memory)>(handle, "nvmlDeviceGetMemoryInfo");
  api.driver_version = load_symbol<decltype(api.driver_version)>(handle, "nvmlSystemGetDriverVersion");
  api.cuda_version = load_symbol<decltype(api.cuda_version)>(handle, "nvmlSystemGetCudaDriverVersion_v2");
  api.error_string = load_symbol<decltype(api.error_string)>(handle, "nvmlErrorString");
  if (!api.init || !api.shutdown || !api.device_count || !api.device_handle) {
    note(library + " lacks nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2 (driver older than 325?)");
    return result;
  }

  if (NvmlReturn rc = api.init(); rc != 0) {
    note(describe(api, "nvmlInit_v2", rc));
    return result;
  }
  if (api.driver_version) {
    char text[k_version_buffer] = {};
    if (NvmlReturn rc = api.driver_version(text, sizeof(text)); rc == 0)
      result.driver = Version::parse(text);
    else
      note(describe(api, "nvmlSystemGetDriverVersion", rc));
  }
  if (api.cuda_version) {
    int version = 0;
    if (NvmlReturn rc = api.cuda_version(&version); rc == 0 && version > 0)
      result.cuda_version = Version::from_cuda_int(version);
    else if (rc != 0)
      note(describe(api, "nvmlSystemGetCudaDriverVersion_v2", rc));
  }

  unsigned count = 0;
  if (NvmlReturn rc = api.device_count(&count); rc != 0) {
    note(describe(api, "nvmlDeviceGetCount_v2", rc));
    api.shutdown();
    return result;
  }
  result.answered = true;
  for (unsigned i = 0; i < count; ++i) {
    NvmlDevice device = nullptr;
    if (NvmlReturn rc = api.device_handle(i, &device); rc != 0) {
      note("GPU " + std::to_string(i) + ": " + describe(api, "nvmlDeviceGetHandleByIndex_v2", rc));
      continue;
    }
    Gpu gpu;
    gpu.index = static_cast<int>(i);
    gpu.source = "nvml";
    if (api.device_name) {
      char name[k_name_buffer] = {};
      if (NvmlReturn rc = api.device_name(device, name, sizeof(name)); rc == 0)
        gpu.name = name;
      else
        note("GPU " + std::to_string(i) + ": " + describe(api, "nvmlDeviceGetName", rc));
    }
    if (api.device_cc) {
      int major = 0;
      int minor = 0;
      if (NvmlReturn rc = api.device_cc(device, &major, &minor); rc == 0)
        gpu.cc = ComputeCapability{major, minor};
      else
        note("GPU " + std::to_string(i) + ": " + describe(api, "nvmlDeviceGetCudaComputeCapability", rc));
    }
    if (api.device_memory) {
      NvmlMemory memory{};
      if (NvmlReturn rc = api.device_memory(device, &memory); rc == 0)
        gpu.memory_bytes = memory.total;
      else
        note("GPU " + std::to_string(i) + ": " + describe(api, "nvmlDeviceGetMemoryInfo", rc));
    }
    result.gpus.push_back(std::move(gpu));
  }
  api.shutdown();
  return result;
}

}  // namespace

LibraryProbeResult probe_nvml(const std::string& library, std::chrono::milliseconds timeout) {
  return watch_library_probe("nvml", library, query_nvml, timeout);
}

}  // namespace torchfix
