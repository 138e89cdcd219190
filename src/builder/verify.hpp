#pragma once
// Verifies what a build produced: every CUDA library (and every library
// inside a produced wheel) carries the images the plan asked for, read with
// the fatbin reader (src/binary).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "builder/plan.hpp"
#include "core/arch/arch.hpp"

namespace torchfix {

/// Holds what one produced library contains against what was asked.
struct LibraryCheck {
  std::string path;           // file, or "wheel.whl!member.so"
  std::vector<Arch> images;   // every SASS/PTX image found, sorted
  std::vector<Arch> missing;  // expected images absent from every module
  std::vector<Arch> extra;    // images the plan did not ask for (a problem when torchfix stood in for nvcc)
  int modules = 0;            // kernel modules (fatbins)
  std::string error;          // unreadable file
};

/// Holds the verification of a build's outputs.
struct VerifyResult {
  std::vector<LibraryCheck> libraries;
  std::vector<std::string> wheels;    // produced wheels
  std::vector<std::string> problems;  // one line each: missing images, no library found, unreadable

  bool ok() const { return problems.empty(); }
};

/// Expands `glob` (absolute, or relative to `base`): `*` and `?` match inside
/// one path component (fnmatch). Returns existing regular files, sorted.
std::vector<std::filesystem::path> expand_glob(const std::filesystem::path& base, const std::string& glob);

/// Verifies the artefacts of `plan` under its source folder: at least one
/// CUDA library, executable, static library (ar archive of objects) or wheel
/// with kernels must exist, and each with kernels must hold every image of
/// plan.expected_images; when torchfix stood in for nvcc (plan.nvcc_wrap)
/// it must hold no other image either (a compile that bypassed the stand-in
/// shows as the project's own archs). Files a glob meets that are not ELF, fatbin or ar
/// are skipped; with `since`, so are wheels last written before it (left by
/// an earlier build; pip writes a new wheel each time). Never fails: what is wrong is listed in problems.
VerifyResult verify_outputs(const BuildPlan& plan, std::optional<std::filesystem::file_time_type> since = std::nullopt);

}  // namespace torchfix
