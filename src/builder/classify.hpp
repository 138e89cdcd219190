#pragma once
// Classifies a failed build from its log: each known failure signature gives
// a finding with its cause and fix. Signatures and fixes:
// shared/facts/pytorch-build.md, "Failure signatures seen in public reports",
// and shared/cases/field-cases.md F9-F11. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace torchfix {

/// Names the failure kinds torchfix recognises.
enum class FailureKind {
  oom_killed,             // the OOM killer stopped a compiler
  unsupported_arch,       // nvcc too old (or too new) for a requested arch
  host_compiler_too_new,  // gcc/clang outside nvcc's bounds
  missing_submodules,     // submodules not checked out
  cuda_version_mismatch,  // nvcc major != torch's CUDA major (cpp_extension)
  disk_full,              // no space left on device
  stale_arch_names,       // a vendored select_compute_arch.cmake without the new arch
  extension_arch_list,    // cpp_extension rejects or misparses TORCH_CUDA_ARCH_LIST
  jobserver,              // make < 4.4 under a fifo jobserver
  stale_build_folder,     // a CMake build folder configured from another source tree
};

/// Holds one classified failure: the log line that shows it, why, and the fix.
struct BuildFailure {
  FailureKind kind;
  std::string evidence;  // the matching log line (trimmed to 300 bytes)
  std::string cause;
  std::string fix;
};

/// Returns the failure a single log line shows, if any.
std::optional<BuildFailure> classify_line(std::string_view line);

/// Returns the distinct failures in `log` (first evidence of each kind, in
/// the order they first appear).
std::vector<BuildFailure> classify_log(std::string_view log);

/// Returns the short name of a kind: "out of memory", "unsupported arch", ...
std::string_view to_string(FailureKind kind);

}  // namespace torchfix
