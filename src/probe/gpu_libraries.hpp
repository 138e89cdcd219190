#pragma once
// The library probes behind probe_gpus: NVML and the CUDA driver API, both
// loaded with dlopen and called on a watchdog thread. Internal to the probe
// layer; exposed so tests can point them at a fake library.

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "core/base/error.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Holds what one library probe learned; `answered` is false when the library
/// could not be loaded, failed to initialise or timed out (see `notes`).
struct LibraryProbeResult {
  bool answered = false;
  bool timed_out = false;  // a call hung past the timeout
  std::vector<Gpu> gpus;
  std::optional<Version> driver;        // driver version (NVML only)
  std::optional<Version> cuda_version;  // CUDA version the driver supports
  std::vector<ProbeNote> notes;
};

/// Probes GPUs through NVML loaded from `library` (a name searched by the
/// dynamic loader, or a path). Never throws; failures (library missing, an
/// NVML error code, a call that hangs past `timeout`) become notes.
LibraryProbeResult probe_nvml(const std::string& library, std::chrono::milliseconds timeout);

/// Probes GPUs through the CUDA driver API loaded from `library`. Never
/// throws; failures (library missing, a CUresult error, a hang past
/// `timeout`) become notes. Honours the real process's CUDA_VISIBLE_DEVICES.
LibraryProbeResult probe_cuda_driver(const std::string& library, std::chrono::milliseconds timeout);

/// Runs `query(library)` on a watchdog thread (call_with_watchdog); a
/// timeout or an exception becomes a note of `probe` ("nvml", "cuda").
LibraryProbeResult watch_library_probe(const std::string& probe, const std::string& library,
                                       LibraryProbeResult (*query)(const std::string&),
                                       std::chrono::milliseconds timeout);

/// Formats a duration as the notes say it: "timed out after 10 s" ("0.5 s" below a second).
std::string timed_out_message(std::chrono::milliseconds timeout);

/// Says how a watched call ended: with a value, past its timeout, or by an
/// exception (or no thread to run it on).
enum class WatchEnd { value, timed_out, failed };

/// Holds what call_with_watchdog got: the value when `end` is value, else
/// the message ("timed out after 10 s", "failed: ...").
template <typename T>
struct Watched {
  WatchEnd end = WatchEnd::failed;
  std::optional<T> value;
  std::string message;
};

/// Runs `work` on its own thread and returns its value. When it has not
/// finished within `timeout`, `end` is timed_out (the late thread is
/// detached and keeps only what `work` owns, so `work` must capture by
/// value); an exception it threw, or no thread, is `failed` with its message.
template <typename T>
Watched<T> call_with_watchdog(std::function<T()> work, std::chrono::milliseconds timeout) {
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  std::thread worker;
  try {
    worker = std::thread([promise, work] {
      try {
        promise->set_value(work());
      } catch (...) {
        promise->set_exception(std::current_exception());
      }
    });
  } catch (const std::system_error& e) {
    return {WatchEnd::failed, std::nullopt, std::string("cannot start a watchdog thread: ") + e.what()};
  }
  if (future.wait_for(timeout) != std::future_status::ready) {
    worker.detach();
    return {WatchEnd::timed_out, std::nullopt, timed_out_message(timeout)};
  }
  worker.join();
  try {
    return {WatchEnd::value, future.get(), ""};
  } catch (const std::exception& e) {
    return {WatchEnd::failed, std::nullopt, std::string("failed: ") + e.what()};
  }
}

/// Loads a driver library with dlopen (never closed: a detached, hung call
/// may still be inside it). Returns nullptr and sets `error` to
/// "cannot load <library>: <dlerror>" when it cannot be loaded.
void* open_library(const std::string& library, std::string& error);

/// Loads `library` with open_library for the probe `probe` ("nvml", "cuda").
/// Returns nullptr, with the loader's error added to `result` as a note of
/// `probe`, when it cannot be loaded.
void* open_library_or_note(const std::string& library, const char* probe, LibraryProbeResult& result);

/// Returns the address of `name` in a handle of open_library, or nullptr
/// when the library lacks it (dlsym, or GetProcAddress on Windows).
void* library_symbol(void* handle, const char* name);

/// Looks up `name` in a dlopen handle as a function pointer of type `Fn`;
/// nullptr when the library lacks it. (memcpy: object-to-function pointer
/// casts are only conditionally supported in ISO C++.)
template <typename Fn>
Fn load_symbol(void* handle, const char* name) {
  void* address = handle ? library_symbol(handle, name) : nullptr;
  Fn function = nullptr;
  static_assert(sizeof(function) == sizeof(address));
  std::memcpy(&function, &address, sizeof(function));
  return function;
}

/// Holds one function of a driver library, looked up by its exported `name`
/// when built; false (and not to be called) when the library lacks it.
template <typename Signature>
class Symbol;

template <typename Result, typename... Params>
class Symbol<Result(Params...)> {
 public:
  Symbol(void* handle, const char* name) : m_call(load_symbol<Result (*)(Params...)>(handle, name)) {}
  explicit operator bool() const { return m_call != nullptr; }
  Result operator()(Params... args) const { return m_call(args...); }

 private:
  Result (*m_call)(Params...);
};

/// Loads `library` for the probe `probe` ("nvml", "cuda") and builds `Api`
/// from its handle (each Symbol member looks itself up). Returns nullopt,
/// with a note of `probe`, when it cannot be loaded or lacks a function
/// `Api::usable()` needs: "LIBRARY lacks " + Api::k_needed.
template <typename Api>
std::optional<Api> open_api(const std::string& library, const char* probe, LibraryProbeResult& result) {
  void* handle = open_library_or_note(library, probe, result);
  if (!handle) return std::nullopt;
  Api api(handle);
  if (!api.usable()) {
    result.notes.push_back({probe, library + " lacks " + std::string(Api::k_needed)});
    return std::nullopt;
  }
  return api;
}

/// Runs a library probe (on the watchdog thread): opens `library` as `Api`
/// (open_api, its notes those of `probe`) and, when it opened, lets `query`
/// read the driver and the GPUs into the result.
template <typename Api>
LibraryProbeResult query_library(const std::string& library, const char* probe,
                                 void (*query)(const Api&, LibraryProbeResult&)) {
  LibraryProbeResult result;
  if (const auto api = open_api<Api>(library, probe, result)) query(*api, result);
  return result;
}

/// Returns the folders a driver library that did not load by name is looked
/// for in: <root>/usr/lib/wsl/lib on Linux (WSL2 maps the driver there, not
/// always on the loader's path); on Windows the NVSMI folder under
/// %ProgramW6432% (or %ProgramFiles%), where drivers before the DCH ones keep
/// nvml.dll and nvidia-smi.exe. Existing folders only.
std::vector<std::filesystem::path> driver_folders(const std::map<std::string, std::string>& env,
                                                  const std::filesystem::path& root);

/// Names a file the kernel driver writes its version into, and its parser.
struct DriverVersionFile {
  std::filesystem::path path;                              // under root
  std::string source;                                      // "/proc/driver/nvidia/version" (root left out)
  std::optional<Version> (*parse)(std::string_view text);  // nullopt when it names no version
};

/// Returns the files that name the driver version on this platform, most
/// direct first: /sys/module/nvidia/version and /proc/driver/nvidia/version
/// under `root` on Linux; none on Windows (NVML and nvidia-smi say it).
std::vector<DriverVersionFile> driver_version_files(const std::filesystem::path& root);

/// Returns the nvidia-smi to run: "nvidia-smi" (found on PATH) on Linux; on
/// Windows nvidia-smi.exe on PATH (System32 with DCH drivers), else the one
/// in a driver_folders() folder, else "nvidia-smi" (the runner then says it
/// is not on PATH).
std::string nvidia_smi_program(const std::map<std::string, std::string>& env);

/// Reads a small text file (/proc, /sys, /etc) whole; nullopt when it is
/// missing or unreadable. /proc files report size 0, so it reads to the end.
std::optional<std::string> read_text_file(const std::filesystem::path& path);

/// Returns when `path` was last written, Unix seconds; nullopt when it is missing.
std::optional<std::int64_t> mtime_seconds(const std::filesystem::path& path);

}  // namespace torchfix
