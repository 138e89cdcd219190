#include "builder/classify.hpp"

#include <algorithm>
#include <array>
#include <regex>

namespace torchfix {
namespace {

struct Signature {
  FailureKind kind;
  std::regex pattern;
  const char* cause;
  const char* fix;
};

// Source of every row: shared/facts/pytorch-build.md (failure table, with the
// public reports it cites) and shared/cases/field-cases.md F9-F11.
const std::vector<Signature>& signatures() {
  static const std::vector<Signature> k_signatures = [] {
    const auto flags = std::regex::ECMAScript | std::regex::optimize;
    std::vector<Signature> s;
    s.push_back(
        {FailureKind::oom_killed,
         std::regex(
             R"(Killed signal terminated program|fatal error: Killed|^\s*Killed\s*$|signal 9 \(Killed\)|exit status 137|\(SIGKILL\))",
             flags),
         "the kernel's OOM killer stopped a compiler: parallel jobs needed more memory than the machine has",
         "fewer parallel jobs (MAX_JOBS), fewer nvcc threads, or more memory/swap; torchfix build retries with "
         "half the jobs"});
    s.push_back({FailureKind::unsupported_arch,
                 std::regex(R"(nvcc fatal\s*:\s*Unsupported gpu architecture '([a-z_0-9]+)')", flags),
                 "the nvcc in use cannot compile for an arch in the list (too old for new GPUs, or too new for "
                 "dropped ones)",
                 "build only the archs your GPUs need (torchfix build --arch auto), or use a toolkit that supports "
                 "them (see torchfix doctor)"});
    s.push_back(
        {FailureKind::host_compiler_too_new,
         std::regex(R"(#error -- unsupported (GNU|clang) version|unsupported GNU version! gcc versions later than)",
                    flags),
         "the host C++ compiler is newer than this nvcc accepts (include/crt/host_config.h)",
         "point CUDAHOSTCXX, CC and CXX at an older gcc inside nvcc's bounds (torchfix build does), or use a "
         "newer CUDA"});
    s.push_back(
        {FailureKind::missing_submodules,
         std::regex(R"(does not contain a CMakeLists\.txt file|git submodule update --init --recursive)", flags),
         "git submodules are missing from the source tree",
         "git submodule sync --recursive && git submodule update --init --recursive (torchfix build's fetch "
         "does both)"});
    s.push_back(
        {FailureKind::cuda_version_mismatch,
         std::regex(R"(The detected CUDA version \(([0-9.]+)\) mismatches the version that was used to compile)",
                    flags),
         "the nvcc major differs from the CUDA torch was built with; cpp_extension refuses",
         "use a toolkit whose major matches torch.version.cuda (torchfix build picks one), or a torch built "
         "for your toolkit"});
    s.push_back({FailureKind::disk_full, std::regex(R"(No space left on device)", flags),
                 "the disk filled up during the build",
                 "free space or pick another --work-dir; a CUDA PyTorch build needs ~40 GiB"});
    s.push_back({FailureKind::stale_arch_names,
                 std::regex(R"(Unknown CUDA Architecture Name .* in CUDA_SELECT_NVCC_ARCH_FLAGS)", flags),
                 "the project vendors an old select_compute_arch.cmake that does not know this arch",
                 "give a numeric arch list the project knows, or update its select_compute_arch.cmake"});
    s.push_back(
        {FailureKind::extension_arch_list,
         std::regex(
             R"(Unknown CUDA arch \(.*\) or GPU not supported|invalid literal for int\(\) with base 10: '[0-9]+a')",
             flags),
         "torch.utils.cpp_extension rejected an entry of TORCH_CUDA_ARCH_LIST",
         "set TORCH_CUDA_ARCH_LIST to numeric values your torch knows, like 8.6;9.0 (torchfix build does)"});
    s.push_back({FailureKind::jobserver, std::regex(R"(invalid --jobserver-auth string 'fifo:)", flags),
                 "a make older than 4.4 runs under a fifo jobserver (make 4.4 or ninja 1.13 above it)",
                 "unset MAKEFLAGS for the build, or pass an explicit -j (MAX_JOBS)"});
    // CMake's cmake.cxx: a build folder configured from another tree (two
    // projects sharing one folder, or a moved tree) refuses to configure.
    s.push_back(
        {FailureKind::stale_build_folder,
         std::regex(R"(does not match the source .* used to generate cache|where CMakeCache\.txt was created)", flags),
         "the CMake build folder was configured for another source tree (CMakeCache.txt names that tree)",
         "remove the build folder named in the log (it holds only build outputs), or pass another --work-dir"});
    return s;
  }();
  return k_signatures;
}

}  // namespace

std::string_view to_string(FailureKind kind) {
  switch (kind) {
    case FailureKind::oom_killed:
      return "out of memory";
    case FailureKind::unsupported_arch:
      return "unsupported arch";
    case FailureKind::host_compiler_too_new:
      return "host compiler too new";
    case FailureKind::missing_submodules:
      return "missing submodules";
    case FailureKind::cuda_version_mismatch:
      return "CUDA version mismatch";
    case FailureKind::disk_full:
      return "disk full";
    case FailureKind::stale_arch_names:
      return "unknown arch name";
    case FailureKind::extension_arch_list:
      return "arch list rejected";
    case FailureKind::jobserver:
      return "jobserver";
    case FailureKind::stale_build_folder:
      return "build folder of another tree";
  }
  return "unknown";
}

std::optional<BuildFailure> classify_line(std::string_view line) {
  // Cheap pre-filter: builds print millions of lines and nearly none match.
  static constexpr std::array k_hints = {"Kill",      "137",        "nvcc fatal", "#error",        "CMakeLists",
                                         "submodule", "mismatches", "No space",   "Unknown CUDA",  "invalid literal",
                                         "jobserver", "SIGKILL",    "CMakeCache", "generate cache"};
  if (std::ranges::none_of(k_hints, [&](const char* h) { return line.find(h) != std::string_view::npos; })) {
    return std::nullopt;
  }
  const std::string text(line.substr(0, 4096));
  for (const Signature& s : signatures()) {
    if (std::regex_search(text, s.pattern)) {
      return BuildFailure{s.kind, text.substr(0, 300), s.cause, s.fix};
    }
  }
  return std::nullopt;
}

std::vector<BuildFailure> classify_log(std::string_view log) {
  std::vector<BuildFailure> out;
  std::size_t begin = 0;
  while (begin < log.size()) {
    std::size_t end = log.find('\n', begin);
    if (end == std::string_view::npos) end = log.size();
    if (auto f = classify_line(log.substr(begin, end - begin))) {
      if (std::ranges::none_of(out, [&](const BuildFailure& o) { return o.kind == f->kind; })) out.push_back(*f);
    }
    begin = end + 1;
  }
  return out;
}

}  // namespace torchfix
