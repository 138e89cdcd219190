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

// The driver API functions the probe calls, each looked up when built.
struct CudaApi {
  explicit CudaApi(void* library) : handle(library) {}
  // The four calls without which no GPU can be listed.
  static constexpr const char* k_needed = "cuInit/cuDriverGetVersion/cuDeviceGetCount/cuDeviceGet";
  bool usable() const { return init && driver_version && device_count && device_get; }

  void* handle;  // first: the members below are looked up in it
  Symbol<CuResult(unsigned)> init{handle, "cuInit"};
  Symbol<CuResult(int*)> driver_version{handle, "cuDriverGetVersion"};
  Symbol<CuResult(int*)> device_count{handle, "cuDeviceGetCount"};
  Symbol<CuResult(CuDevice*, int)> device_get{handle, "cuDeviceGet"};
  Symbol<CuResult(char*, int, CuDevice)> device_name{handle, "cuDeviceGetName"};
  Symbol<CuResult(int*, int, CuDevice)> device_attribute{handle, "cuDeviceGetAttribute"};
  Symbol<CuResult(std::size_t*, CuDevice)> device_memory{handle, "cuDeviceTotalMem_v2"};
  Symbol<CuResult(CuResult, const char**)> error_name{handle, "cuGetErrorName"};
};

// cuGetErrorName works before cuInit; fall back to the number alone.
std::string describe(const CudaApi& api, const char* call, CuResult code) {
  std::string text = std::string(call) + " failed: ";
  const char* name = nullptr;
  if (api.error_name && api.error_name(code, &name) == 0 && name) text += std::string(name) + " ";
  return text + "(" + std::to_string(code) + ")";
}

// Reads the driver and its GPUs through the opened API; runs on the watchdog
// thread (query_library) and owns nothing of the caller's.
void query_cuda(const CudaApi& api, LibraryProbeResult& result) {
  auto note = [&result](std::string message) { result.notes.push_back({"cuda", std::move(message)}); };

  // cuDriverGetVersion needs no cuInit, so the CUDA version is known even
  // when initialisation fails (no device, driver/library mismatch).
  int version = 0;
  if (CuResult rc = api.driver_version(&version); rc == 0 && version > 0)
    result.cuda_version = Version::from_cuda_int(version);
  else if (rc != 0)
    note(describe(api, "cuDriverGetVersion", rc));

  if (CuResult rc = api.init(0); rc != 0) {
    note(describe(api, "cuInit", rc));
    return;
  }
  int count = 0;
  if (CuResult rc = api.device_count(&count); rc != 0) {
    note(describe(api, "cuDeviceGetCount", rc));
    return;
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
}

}  // namespace

LibraryProbeResult probe_cuda_driver(const std::string& library, std::chrono::milliseconds timeout) {
  constexpr auto query = [](const std::string& l) { return query_library<CudaApi>(l, "cuda", query_cuda); };
  return watch_library_probe("cuda", library, query, timeout);
}

}  // namespace torchfix
