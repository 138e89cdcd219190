// probe_platform on native Windows (platform_probe.cpp is the Linux side):
// the CPU architecture (GetNativeSystemInfo), the Windows build number
// (RtlGetVersion: GetVersionExW reports 6.2 to programs without a manifest),
// usable CPUs, free memory (GlobalMemoryStatusEx) and whether the driver's
// nvcuda.dll loads. No WSL, container, cgroup or /dev facts exist here; they
// stay false or empty.
#include <windows.h>

#include "probe/gpu_libraries.hpp"
#include "probe/gpu_probe.hpp"

namespace torchfix {
namespace {

std::string machine_name() {
  SYSTEM_INFO info{};
  GetNativeSystemInfo(&info);
  switch (info.wProcessorArchitecture) {
    case PROCESSOR_ARCHITECTURE_AMD64:
      return "x86_64";
    case PROCESSOR_ARCHITECTURE_ARM64:
      return "aarch64";
    case PROCESSOR_ARCHITECTURE_INTEL:
      return "x86";
    default:
      return "";
  }
}

// "Windows 10.0.26100"; "Windows" when ntdll does not say.
std::string os_name() {
  using RtlGetVersionFn = LONG(WINAPI*)(OSVERSIONINFOW*);
  HMODULE ntdll = GetModuleHandleW(L"ntdll.dll");
  auto get_version =
      ntdll ? reinterpret_cast<RtlGetVersionFn>(reinterpret_cast<void*>(GetProcAddress(ntdll, "RtlGetVersion")))
            : nullptr;
  OSVERSIONINFOW version{};
  version.dwOSVersionInfoSize = sizeof version;
  if (!get_version || get_version(&version) != 0) return "Windows";
  return "Windows " + std::to_string(version.dwMajorVersion) + "." + std::to_string(version.dwMinorVersion) + "." +
         std::to_string(version.dwBuildNumber);
}

}  // namespace

Platform probe_platform(const Environment& env, const std::filesystem::path& /*root*/) {
  Platform platform;
  platform.windows = true;
  platform.machine = machine_name();
  platform.os = os_name();
  std::string error;
  platform.libcuda_loadable = open_library("nvcuda.dll", error) != nullptr;
  if (auto visible = env.find("CUDA_VISIBLE_DEVICES"); visible != env.end()) {
    platform.cuda_visible_devices = visible->second;
  }
  platform.cpus = static_cast<int>(GetActiveProcessorCount(ALL_PROCESSOR_GROUPS));
  MEMORYSTATUSEX memory{};
  memory.dwLength = sizeof memory;
  if (GlobalMemoryStatusEx(&memory)) platform.memory_available_bytes = memory.ullAvailPhys;
  return platform;
}

}  // namespace torchfix
