/* A stand-in for libnvidia-ml.so.1 and libcuda.so.1, for the library probes'
 * tests on machines without a GPU. It exports the NVML and CUDA driver API
 * entry points torchfix loads, with the C signatures of nvml.h and cuda.h.
 * The test process picks the behaviour with FAKE_GPU_MODE:
 *   "ok" (default): two GPUs, NVIDIA H200 (9.0, 143771 MiB) and
 *                   NVIDIA GeForce RTX 5090 (12.0, 32607 MiB); driver 580.159.04, CUDA 13.0
 *   "init_fails":   nvmlInit_v2 -> NVML_ERROR_DRIVER_NOT_LOADED (9),
 *                   cuInit -> CUDA_ERROR_NO_DEVICE (100); versions still answer
 *   "hang":         nvmlInit_v2 and cuInit sleep 30 s (a GPU in a bad state) */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* mode(void) {
  const char* m = getenv("FAKE_GPU_MODE");
  return m ? m : "ok";
}

static int is_mode(const char* wanted) { return strcmp(mode(), wanted) == 0; }

struct fake_device {
  const char* name;
  int major;
  int minor;
  unsigned long long memory_mib;
};

static const struct fake_device k_devices[] = {
    {"NVIDIA H200", 9, 0, 143771ULL},
    {"NVIDIA GeForce RTX 5090", 12, 0, 32607ULL},
};

static void copy_name(char* out, size_t length, const char* name) {
  if (length == 0) return;
  strncpy(out, name, length - 1);
  out[length - 1] = '\0';
}

/* ---- NVML ---- */
typedef struct { unsigned long long total, free, used; } nvml_memory;

/* A hung call returns without reading the environment again: the test
 * process may be changing it by then. */
int nvmlInit_v2(void) {
  if (is_mode("hang")) {
    sleep(30);
    return 999;
  }
  return is_mode("init_fails") ? 9 : 0;
}
int nvmlShutdown(void) { return 0; }
const char* nvmlErrorString(int code) { return code == 9 ? "Driver Not Loaded" : "Unknown Error"; }
int nvmlSystemGetDriverVersion(char* out, unsigned length) {
  copy_name(out, length, "580.159.04");
  return 0;
}
int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  *version = 13000;
  return 0;
}
int nvmlDeviceGetCount_v2(unsigned* count) {
  *count = 2;
  return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned index, const struct fake_device** device) {
  if (index >= 2) return 2;
  *device = &k_devices[index];
  return 0;
}
int nvmlDeviceGetName(const struct fake_device* device, char* out, unsigned length) {
  copy_name(out, length, device->name);
  return 0;
}
int nvmlDeviceGetCudaComputeCapability(const struct fake_device* device, int* major, int* minor) {
  *major = device->major;
  *minor = device->minor;
  return 0;
}
int nvmlDeviceGetMemoryInfo(const struct fake_device* device, nvml_memory* memory) {
  memory->total = device->memory_mib * 1024ULL * 1024ULL;
  memory->free = memory->total;
  memory->used = 0;
  return 0;
}

/* ---- CUDA driver API ---- */
int cuInit(unsigned flags) {
  (void)flags;
  if (is_mode("hang")) {
    sleep(30);
    return 999;
  }
  return is_mode("init_fails") ? 100 : 0;
}
int cuGetErrorName(int code, const char** name) {
  *name = code == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}
int cuDriverGetVersion(int* version) {
  *version = 13000;
  return 0;
}
int cuDeviceGetCount(int* count) {
  *count = 2;
  return 0;
}
int cuDeviceGet(int* device, int ordinal) {
  if (ordinal < 0 || ordinal >= 2) return 101;
  *device = ordinal;
  return 0;
}
int cuDeviceGetName(char* out, int length, int device) {
  copy_name(out, (size_t)length, k_devices[device].name);
  return 0;
}
int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (attribute == 75) *value = k_devices[device].major;
  else if (attribute == 76) *value = k_devices[device].minor;
  else return 1;
  return 0;
}
int cuDeviceTotalMem_v2(size_t* bytes, int device) {
  *bytes = (size_t)(k_devices[device].memory_mib * 1024ULL * 1024ULL);
  return 0;
}
