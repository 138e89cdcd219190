// probe_gpus: NVML, else the CUDA driver API, else nvidia-smi; the driver
// version also from /sys and /proc, and the CUDA version derived from the
// driver version by the Situation (core/situation/situation.hpp) when nothing measured it.

#include "probe/gpu_probe.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "probe/gpu_libraries.hpp"
#include "probe/gpu_parsers.hpp"

namespace torchfix {
namespace {

const std::vector<std::string> k_fields_with_cc = {"index", "name", "compute_cap", "driver_version", "memory.total"};
const std::vector<std::string> k_fields_without_cc = {"index", "name", "driver_version", "memory.total"};

std::vector<std::string> query_args(const std::vector<std::string>& fields) {
  std::string query = "--query-gpu=";
  for (const std::string& field : fields) query += (&field == &fields.front() ? "" : ",") + field;
  return {query, "--format=csv,noheader,nounits"};
}

// What nvidia-smi told: GPUs, the driver, the CUDA version of its header.
struct SmiAnswer {
  bool answered = false;
  std::vector<Gpu> gpus;
  std::optional<Version> driver;
  std::optional<Version> cuda_version;
};

std::string first_line(const std::string& text) {
  const auto start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return {};
  const auto end = text.find('\n', start);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

class SmiProbe {
 public:
  SmiProbe(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge, std::chrono::milliseconds timeout,
           std::vector<ProbeNote>& notes)
      : m_env(env), m_runner(runner), m_knowledge(knowledge), m_timeout(timeout), m_notes(notes) {}

  // Queries the GPUs; when `want_cuda_version`, also reads the table header
  // (the only place nvidia-smi states the CUDA version).
  SmiAnswer probe(bool want_cuda_version) {
    SmiAnswer answer;
    const std::vector<std::string>* fields = &k_fields_with_cc;
    auto result = run(query_args(*fields));
    if (!result) return answer;
    if (!result->succeeded() && smi_rejected_field(result->out + result->err)) {
      // Drivers before 510 lack compute_cap; the product name gives it instead.
      fields = &k_fields_without_cc;
      result = run(query_args(*fields));
      if (!result) return answer;
    }
    if (!result->succeeded()) {
      note_failure("--query-gpu", *result);
      return answer;
    }
    auto rows = parse_smi_gpu_csv(result->out, *fields);
    if (!rows) {
      note(rows.error().message);
      return answer;
    }
    answer.answered = true;
    for (const SmiGpuRow& row : *rows) {
      Gpu gpu;
      gpu.index = row.index;
      gpu.name = row.name;
      gpu.cc = row.cc;
      gpu.memory_bytes = row.memory_bytes;
      gpu.source = "nvidia-smi";
      if (fields == &k_fields_without_cc) {
        gpu.source = "nvidia-smi+name";
        if (auto cc = m_knowledge.resolve_gpu(row.name))
          gpu.cc = *cc;
        else
          note("GPU " + std::to_string(row.index) + ": compute capability unknown: " + cc.error().message);
      }
      if (!answer.driver && row.driver) answer.driver = row.driver;
      answer.gpus.push_back(std::move(gpu));
    }
    if (want_cuda_version) {
      if (auto table = run({}); table && table->succeeded()) {
        answer.cuda_version = parse_smi_header_cuda(table->out);
        if (!answer.cuda_version) note("no \"CUDA Version:\" in the nvidia-smi table header");
      } else if (table) {
        note_failure("(table)", *table);
      }
    }
    return answer;
  }

 private:
  // Runs nvidia-smi; a program that cannot start or times out is a note and nullopt.
  std::optional<ProcessResult> run(std::vector<std::string> args) {
    Command command;
    command.program = nvidia_smi_program(m_env);
    command.args = std::move(args);
    command.env = m_env;
    command.timeout = m_timeout;
    auto result = m_runner.run(command);
    if (!result) {
      note(result.error().message);
      return std::nullopt;
    }
    if (result->timed_out) {
      note(timed_out_message(m_timeout) + " (killed; GPU or driver in a bad state?)");
      return std::nullopt;
    }
    if (result->overflowed) {
      note("printed more than " + std::to_string(command.output_limit >> 20) +
           " MiB (killed; not nvidia-smi's answer)");
      return std::nullopt;
    }
    return std::move(*result);
  }

  void note_failure(const std::string& what, const ProcessResult& result) {
    std::string message = "nvidia-smi " + what;
    message += result.signal ? " died of signal " + std::to_string(*result.signal)
                             : " exited with code " + std::to_string(result.exit_code);
    std::string said = first_line(result.out);
    if (said.empty()) said = first_line(result.err);
    if (!said.empty()) message += ": " + said;
    note(std::move(message));
  }

  void note(std::string message) { m_notes.push_back({"nvidia-smi", std::move(message)}); }

  const Environment& m_env;
  ProcessRunner& m_runner;
  const Knowledge& m_knowledge;
  std::chrono::milliseconds m_timeout;
  std::vector<ProbeNote>& m_notes;
};

// Moves a library probe's notes into the result; returns whether it answered.
bool take(LibraryProbeResult& probe, GpuProbeResult& result) {
  result.notes.insert(result.notes.end(), probe.notes.begin(), probe.notes.end());
  probe.notes.clear();
  return probe.answered;
}

// A library named without a folder that did not load is tried again in the
// platform's driver folders (driver_folders: WSL2's /usr/lib/wsl/lib,
// Windows' NVSMI folder), the notes of every try kept.
template <typename Probe>
LibraryProbeResult probe_library(Probe probe, const std::string& library, const Environment& env,
                                 const std::filesystem::path& root, std::chrono::milliseconds timeout) {
  LibraryProbeResult result = probe(library, timeout);
  if (result.answered || library.find_first_of("/\\") != std::string::npos) return result;
  for (const std::filesystem::path& folder : driver_folders(env, root)) {
    std::error_code ec;
    if (!std::filesystem::exists(folder / library, ec)) continue;
    LibraryProbeResult again = probe((folder / library).string(), timeout);
    again.notes.insert(again.notes.begin(), result.notes.begin(), result.notes.end());
    result = std::move(again);
    if (result.answered) break;
  }
  return result;
}

// Bounds of what a machine can report; beyond them a library or nvidia-smi
// is broken (or lying), and the value is refused with a note. The largest
// single-node systems hold 16 GPUs; CUDA compute capabilities run 1.0-12.x
// (shared/facts/arch-rules.md); driver versions have 2-3 parts (580.159.04).
constexpr std::size_t k_gpus_max = 64;
constexpr int k_cc_major_max = 15;
constexpr std::size_t k_driver_parts_max = 3;
constexpr int k_version_part_max = 100'000;

void refuse_absurd_values(GpuProbeResult& result) {
  if (result.gpus.size() > k_gpus_max) {
    result.notes.push_back({"gpus", std::to_string(result.gpus.size()) + " GPUs reported (more than " +
                                        std::to_string(k_gpus_max) + " in one machine is not plausible): ignored"});
    result.gpus.clear();
  }
  for (Gpu& gpu : result.gpus) {
    if (gpu.cc && (gpu.cc->major < 1 || gpu.cc->major > k_cc_major_max || gpu.cc->minor < 0 || gpu.cc->minor > 9)) {
      result.notes.push_back({"gpus", "GPU " + std::to_string(gpu.index) + " reported compute capability " +
                                          gpu.cc->str() + ", which no CUDA GPU has: ignored"});
      gpu.cc.reset();
    }
  }
  auto absurd = [](const std::optional<Version>& v, std::size_t parts_max) {
    return v && (v->parts().size() > parts_max ||
                 std::ranges::any_of(v->parts(), [](int part) { return part < 0 || part > k_version_part_max; }));
  };
  if (absurd(result.driver.version, k_driver_parts_max)) {
    result.notes.push_back({"driver", "driver version '" + result.driver.version->str().substr(0, 80) +
                                          "' is not an NVIDIA driver version: ignored"});
    result.driver.version.reset();
  }
  if (absurd(result.driver.cuda_version, 3) ||
      (result.driver.cuda_version && result.driver.cuda_version->major() > 99)) {
    result.notes.push_back({"driver", "CUDA version '" + result.driver.cuda_version->str().substr(0, 80) +
                                          "' is not a CUDA version: ignored"});
    result.driver.cuda_version.reset();
  }
}

// "no NVIDIA driver found: NVML, libcuda and nvidia-smi did not answer, and
// neither /sys/module/nvidia/version nor /proc/driver/nvidia/version is
// readable"; on Windows the library names are nvml.dll and nvcuda.dll and no
// file is named.
std::string no_driver_message(const GpuLibraries& libraries, const std::vector<DriverVersionFile>& files) {
  const std::string cuda = std::filesystem::path(libraries.cuda).filename().string();
  std::string message =
      "no NVIDIA driver found: NVML, " + cuda.substr(0, cuda.find('.')) + " and nvidia-smi did not answer";
  if (files.size() == 1) message += ", and " + files[0].path.string() + " is not readable";
  if (files.size() >= 2) {
    message += ", and neither " + files[0].path.string() + " nor " + files[1].path.string() + " is readable";
  }
  return message;
}

}  // namespace

std::string timed_out_message(std::chrono::milliseconds timeout) {
  char text[48];
  if (timeout.count() % 1000 == 0) {
    std::snprintf(text, sizeof(text), "timed out after %lld s", static_cast<long long>(timeout.count() / 1000));
  } else {
    std::snprintf(text, sizeof(text), "timed out after %.1f s", static_cast<double>(timeout.count()) / 1000.0);
  }
  return text;
}

void* open_library_or_note(const std::string& library, const char* probe, LibraryProbeResult& result) {
  std::string error;
  void* handle = open_library(library, error);
  if (!handle) result.notes.push_back({probe, std::move(error)});
  return handle;
}

LibraryProbeResult watch_library_probe(const std::string& probe, const std::string& library,
                                       LibraryProbeResult (*query)(const std::string&),
                                       std::chrono::milliseconds timeout) {
  auto result = call_with_watchdog<LibraryProbeResult>([library, query] { return query(library); }, timeout);
  if (result.value) return std::move(*result.value);
  LibraryProbeResult late;
  std::string message = std::move(result.message);
  if (result.end == WatchEnd::timed_out) {
    late.timed_out = true;
    message += " (a call into " + library + " hung; GPU in a bad state?)";
  }
  late.notes.push_back({probe, std::move(message)});
  return late;
}

std::optional<std::int64_t> mtime_seconds(const std::filesystem::path& path) {
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(path, ec);
  if (ec) return std::nullopt;
  const auto since_epoch = std::chrono::file_clock::to_sys(written).time_since_epoch();
  return std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
}

std::optional<std::string> read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return text.str();
}

GpuProbeResult probe_gpus(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge,
                          std::chrono::milliseconds timeout, const std::filesystem::path& root) {
  return probe_gpus(env, runner, knowledge, timeout, root, GpuLibraries{});
}

GpuProbeResult probe_gpus(const Environment& env, ProcessRunner& runner, const Knowledge& knowledge,
                          std::chrono::milliseconds timeout, const std::filesystem::path& root,
                          const GpuLibraries& libraries) {
  GpuProbeResult result;
  std::optional<Version> driver;
  std::optional<Version> cuda;
  std::string driver_source;
  std::string cuda_source;

  LibraryProbeResult nvml = probe_library(probe_nvml, libraries.nvml, env, root, timeout);
  bool have_gpus = take(nvml, result);
  if (have_gpus) {
    result.gpus = std::move(nvml.gpus);
  }
  if (nvml.driver) driver = nvml.driver, driver_source = "nvml";
  if (nvml.cuda_version) cuda = nvml.cuda_version, cuda_source = "nvml";

  if (!have_gpus) {
    LibraryProbeResult cuda_api = probe_library(probe_cuda_driver, libraries.cuda, env, root, timeout);
    have_gpus = take(cuda_api, result);
    if (have_gpus) result.gpus = std::move(cuda_api.gpus);
    if (!cuda && cuda_api.cuda_version) cuda = cuda_api.cuda_version, cuda_source = "cuda";
  }

  const std::vector<DriverVersionFile> files = driver_version_files(root);
  for (const DriverVersionFile& file : files) {
    if (driver) break;
    if (auto text = read_text_file(file.path)) {
      if ((driver = file.parse(*text))) driver_source = file.source;
    }
  }

  // nvidia-smi costs a process (and can hang): only when the libraries did
  // not list the GPUs, or nothing else named the driver (WSL2 without NVML).
  // It is built on NVML, so when NVML hung it would hang the same way.
  if (nvml.timed_out && (!have_gpus || !driver)) {
    result.notes.push_back({"nvidia-smi", "not run: NVML hung, and nvidia-smi would hang in the same call"});
  } else if (!have_gpus || !driver) {
    SmiProbe smi(env, runner, knowledge, timeout, result.notes);
    SmiAnswer answer = smi.probe(!cuda);
    if (!have_gpus && answer.answered) result.gpus = std::move(answer.gpus);
    if (!driver && answer.driver) driver = answer.driver, driver_source = "nvidia-smi";
    if (!cuda && answer.cuda_version) cuda = answer.cuda_version, cuda_source = "nvidia-smi";
  }

  // Without a measured CUDA version the Situation reads the driver version
  // against today's tables in the platform's numbering (core/situation/situation.hpp):
  // the snapshot keeps only what was measured.
  if (!driver && !cuda) result.notes.push_back({"driver", no_driver_message(libraries, files)});

  result.driver.version = driver;
  result.driver.cuda_version = cuda;
  if (driver_source == cuda_source || cuda_source.empty())
    result.driver.source = driver_source;
  else if (driver_source.empty())
    result.driver.source = "CUDA version: " + cuda_source;
  else
    result.driver.source = driver_source + "; CUDA version: " + cuda_source;
  refuse_absurd_values(result);
  return result;
}

}  // namespace torchfix
