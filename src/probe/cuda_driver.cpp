// The CUDA driver API through dlopen, the fallback when NVML is missing
// (some containers mount libcuda but not NVML). Prototypes from cuda.h
// (stable C ABI): CUresult is an int enum, CUdevice an int.

#include <cstddef>

#include "probe/gpu_libraries.hpp"

namespace torchfix {
namespace {

using CuResult = int;  // CUresult; 0 is CUDA_SUCCESS
using CuDevice = int;
constexpr int k_attribute_cc_major = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int k_attribute_cc_minor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int k_name_length = 256;

struct CudaApi {
  CuResult (*init)(unsigned) = nullptr;
  CuResult (*driver_version)(int*) = nullptr;
  CuResult (*device_count)(int*) = nullptr;
  CuResult (*device_get)(CuDevice*, int) = nullptr;
  CuResult (*device_name)(char*, int, CuDevice) = nullptr;
  CuResult (*device_attribute)(int*, int, CuDevice) = nullptr;
  CuResult (*device_memory)(std::size_t*, CuDevice) = nullptr;
  CuResult (*error_name)(CuResult, const char**) = nullptr;
};

// cuGetErrorName works before cuInit; fall back to the number alone.
std::string describe(const CudaApi& api, const char* call, CuResult code) {
  std::string text = std::string(call) + " failed: ";
  const char* name = nullptr;
  if (api.error_name && api.error_name(code, &name) == 0 && name) text += std::string(name) + " ";
  return text + "(" + std::to_string(code) + ")";
}

// Runs on the watchdog thread: owns nothing of the caller's.
LibraryProbeResult query_cuda(const std::string& library) {
  LibraryProbeResult result;
  auto note = [&result](std::string message) { result.notes.push_back({"cuda", std::move(message)}); };

  void* handle = open_library_or_note(library, "cuda", result);
  if (!handle) return result;
  CudaApi api;
  api.init = load_symbol<decltype(api.init)>(handle, "cuInit");
  api.driver_version = load_symbol<decltype(api.driver_version)>(handle, "cuDriverGetVersion");
  api.device_count = load_symbol<decltype(api.device_count)>(handle, "cuDeviceGetCount");
  api.device_get = load_symbol<decltype(api.device_get)>(handle, "cuDeviceGet");
  api.device_name = load_symbol<decltype(api.device_name)>(handle, "cuDeviceGetName");
  api.device_attribute = load_symbol<decltype(api.device_attribute)>(handle, "cuDeviceGetAttribute");
  api.device_memory = load_symbol<decltype(api.device_memory)>(handle, "cuDeviceTotalMem_v2");
  api.error_name = load_symbol<decltype(api.error_name)>(handle, "cuGetErrorName");
  if (!api.init || !api.driver_version || !api.device_count || !api.device_get) {
    note(library + " lacks cuInit/cuDriverGetVersion/cuDeviceGetCount/cuDeviceGet");
    return result;
  }

  // cuDriverGetVersion needs no cuInit, so the CUDA version is known even
  // when initialisation fails (no device, driver/library mismatch).
  int version = 0;
  if (CuResult rc = api.driver_version(&version); rc == 0 && version > 0)
    result.cuda_version = Version::from_cuda_int(version);
  else if (rc != 0)
    note(describe(api, "cuDriverGetVersion", rc));

  if (CuResult rc = api.init(0); rc != 0) {
    note(describe(api, "cuInit", rc));
    return result;
  }
  int count = 0;
  if (CuResult rc = api.device_count(&count); rc != 0) {
    note(describe(api, "cuDeviceGetCount", rc));
    return result;
  }
  result.answered = true;
  for (int i = 0; i < count; ++i) {
    const std::string which = "GPU " + std::to_string(i) + ": ";
    CuDevice device = 0;
    if (CuResult rc = api.device_get(&device, i); rc != 0) {
      note(which + describe(api, "cuDeviceGet", rc));
      continue;
    }
    Gpu gpu;
    gpu.index = i;
    gpu.source = "cuda";
    if (api.device_name) {
      char name[k_name_length] = {};
      if (CuResult rc = api.device_name(name, k_name_length, device); rc == 0)
        gpu.name = name;
      else
        note(which + describe(api, "cuDeviceGetName", rc));
    }
    if (api.device_attribute) {
      int major = 0;
      int minor = 0;
      const CuResult rc_major = api.device_attribute(&major, k_attribute_cc_major, device);
      const CuResult rc_minor = api.device_attribute(&minor, k_attribute_cc_minor, device);
      if (rc_major == 0 && rc_minor == 0)
        gpu.cc = ComputeCapability{major, minor};
      else
        note(which + describe(api, "cuDeviceGetAttribute(COMPUTE_CAPABILITY)", rc_major != 0 ? rc_major : rc_minor));
    }
    if (api.device_memory) {
      std::size_t bytes = 0;
      if (CuResult rc = api.device_memory(&bytes, device); rc == 0)
        gpu.memory_bytes = bytes;
      else
        note(which + describe(api, "cuDeviceTotalMem_v2", rc));
    }
    result.gpus.push_back(std::move(gpu));
  }
  return result;
}

}  // namespace

LibraryProbeResult probe_cuda_driver(const std::string& library, std::chrono::milliseconds timeout) {
  return watch_library_probe("cuda", library, query_cuda, timeout);
}

}  // namespace torchfix
