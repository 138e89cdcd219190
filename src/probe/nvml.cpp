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

// The NVML functions the probe calls, each looked up when built.
struct NvmlApi {
  explicit NvmlApi(void* library) : handle(library) {}
  // The calls without which no GPU can be listed (nvmlShutdown too).
  static constexpr const char* k_needed =
      "nvmlInit_v2/nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2 (driver older than 325?)";
  bool usable() const { return init && shutdown && device_count && device_handle; }

  void* handle;  // first: the members below are looked up in it
  Symbol<NvmlReturn()> init{handle, "nvmlInit_v2"};
  Symbol<NvmlReturn()> shutdown{handle, "nvmlShutdown"};
  Symbol<NvmlReturn(unsigned*)> device_count{handle, "nvmlDeviceGetCount_v2"};
  Symbol<NvmlReturn(unsigned, NvmlDevice*)> device_handle{handle, "nvmlDeviceGetHandleByIndex_v2"};
  Symbol<NvmlReturn(NvmlDevice, char*, unsigned)> device_name{handle, "nvmlDeviceGetName"};
  Symbol<NvmlReturn(NvmlDevice, int*, int*)> device_cc{handle, "nvmlDeviceGetCudaComputeCapability"};
  Symbol<NvmlReturn(NvmlDevice, NvmlMemory*)> device_memory{handle, "nvmlDeviceGetMemoryInfo"};
  Symbol<NvmlReturn(char*, unsigned)> driver_version{handle, "nvmlSystemGetDriverVersion"};
  Symbol<NvmlReturn(int*)> cuda_version{handle, "nvmlSystemGetCudaDriverVersion_v2"};
  Symbol<const char*(NvmlReturn)> error_string{handle, "nvmlErrorString"};
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

// Reads the driver and its GPUs through the opened API; runs on the watchdog
// thread (query_library) and owns nothing of the caller's.
void query_nvml(const NvmlApi& api, LibraryProbeResult& result) {
  auto note = [&result](std::string message) { result.notes.push_back({"nvml", std::move(message)}); };

  if (NvmlReturn rc = api.init(); rc != 0) {
    note(describe(api, "nvmlInit_v2", rc));
    return;
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
    return;
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
}

}  // namespace

LibraryProbeResult probe_nvml(const std::string& library, std::chrono::milliseconds timeout) {
  constexpr auto query = [](const std::string& l) { return query_library<NvmlApi>(l, "nvml", query_nvml); };
  return watch_library_probe("nvml", library, query, timeout);
}

}  // namespace torchfix
