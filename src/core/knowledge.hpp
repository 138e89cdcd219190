#pragma once
// The knowledge tables (recipes/gpus.toml, toolkits.toml, torch-wheels.toml),
// parsed from TOML text into values with the source of every row. Parsing is
// pure; reading the files is probe/knowledge_files.hpp's job.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/arch.hpp"
#include "core/error.hpp"
#include "core/version.hpp"

namespace torchfix {

/// Names GPU products of one compute capability (recipes/gpus.toml).
struct GpuProduct {
  ComputeCapability cc;
  std::vector<std::string> names;
  bool tegra = false;
  std::string source;
};

/// Holds the minimum Linux driver of a toolkit release (its GA).
struct DriverFloor {
  Version cuda;   // "12.8"
  Version linux;  // "570.26"
  std::string source;
};

/// Holds the driver floor for minor-version compatibility within a CUDA major.
struct MinorCompat {
  int cuda_major = 0;
  Version linux;
  std::string source;
};

/// Says which nvcc versions accept a group of SASS targets (inclusive bounds).
struct NvccArchRange {
  std::vector<Arch> archs;
  std::optional<Version> first;  // nullopt: since before any tracked version
  std::optional<Version> last;   // nullopt: still accepted
  std::string source;
};

/// Holds the host compiler bounds of nvcc versions cuda_min..cuda_max
/// (major.minor, inclusive): the compiler's major must be below the bound.
struct HostCompilerBounds {
  Version cuda_min;
  Version cuda_max;
  std::optional<int> gcc_below;
  std::optional<int> clang_below;
  std::string source;
};

/// Describes the official wheels of one CUDA variant for a release range.
struct WheelVariant {
  Version min;               // first release, "2.7"
  Version max;               // last release, "2.7"
  std::string variant;       // "cu128"
  Version cuda;              // 12.8, from the variant name
  std::string platform;      // "x86_64" or "aarch64"
  std::string arch_list;     // as built: "7.5;8.0;8.6;9.0;10.0;12.0+PTX"
  std::vector<Arch> images;  // what that list compiles to: sm_75 ... sm_120, compute_120
  std::string confidence;    // "build script", "maintainer", "measured", "UNVERIFIED"
  std::string source;

  /// Returns true when `release` (major.minor compared) is in [min, max].
  bool covers_release(const Version& release) const;
  /// Returns the pip index URL, https://download.pytorch.org/whl/<variant>.
  std::string index_url() const;
};

/// Holds the lowest compute capability an extension project supports upstream.
struct ExtensionSupport {
  std::string distribution;
  ComputeCapability min_cc;
  std::string source;
};

/// Holds all knowledge tables.
struct Knowledge {
  std::vector<GpuProduct> gpus;
  std::vector<DriverFloor> driver_floors;
  std::vector<MinorCompat> minor_compat;
  std::vector<NvccArchRange> nvcc_archs;
  std::vector<HostCompilerBounds> host_compilers;
  std::vector<WheelVariant> wheels;
  std::vector<ExtensionSupport> extensions;

  /// Resolves a --gpu value: a product name ("RTX 5070 Ti", "NVIDIA H200";
  /// case and the words NVIDIA/GeForce ignored), "sm_120" or "12.0".
  /// Errors: unknown name (with close matches), ambiguous name.
  Expected<ComputeCapability> resolve_gpu(std::string_view spec) const;
  /// Returns the first product name listed for `cc`, or "" when none.
  std::string product_name(ComputeCapability cc) const;

  /// Returns the newest CUDA version whose GA driver floor is <= `driver`
  /// (Linux); nullopt when the driver is older than every tracked floor.
  std::optional<Version> cuda_for_driver(const Version& driver) const;
  /// Returns the GA driver floor of CUDA `cuda` (major.minor), if tracked.
  const DriverFloor* driver_floor(const Version& cuda) const;
  /// Returns the minor-version compatibility floor of a CUDA major, if tracked.
  const MinorCompat* minor_compat_for(int cuda_major) const;
  /// Returns the SASS targets an nvcc of `nvcc` version accepts, by table.
  std::vector<Arch> nvcc_archs_for(const Version& nvcc) const;
  /// Returns the lowest nvcc version that accepts SASS for `cc` (generic
  /// variant, or the Tegra part's own), nullopt when none is tracked.
  std::optional<Version> first_nvcc_for(ComputeCapability cc) const;
  /// Returns the host compiler bounds of an nvcc version, if tracked.
  const HostCompilerBounds* host_bounds_for(const Version& nvcc) const;
  /// Returns the extension support row of a distribution, if any.
  const ExtensionSupport* extension(std::string_view distribution) const;
};

/// Names one knowledge file's text for parse_knowledge.
struct KnowledgeText {
  std::string file;  // path shown in errors ("recipes/gpus.toml")
  std::string text;  // TOML
};

/// Parses the three tables (any order, recognised by their array names:
/// gpu; driver_floor, minor_compat, nvcc_arch, host_compiler; wheel, extension).
/// Errors name the file, the line and what is wrong (a row without `source`
/// is an error: every fact carries its source).
Expected<Knowledge> parse_knowledge(const std::vector<KnowledgeText>& files);

/// Converts a wheel arch list in TORCH_CUDA_ARCH_LIST form ("8.6;9.0+PTX")
/// to images (sm_86, sm_90, compute_90) through parse_arch_list (core/arch_list.hpp).
/// Errors name the entry.
Expected<std::vector<Arch>> images_from_arch_list(std::string_view list);

}  // namespace torchfix
