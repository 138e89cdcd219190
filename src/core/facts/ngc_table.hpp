#pragma once
// The NGC PyTorch container table (recipes/ngc-pytorch.toml), parsed from
// TOML text into values with the source of every row. Pure: reading the file
// is probe/knowledge_files.hpp's job.

#include <string>
#include <string_view>
#include <vector>

#include "core/arch/arch.hpp"
#include "core/base/error.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Describes one NGC PyTorch release (nvcr.io/nvidia/pytorch:YY.MM-py3).
struct NgcRelease {
  std::string tag;                     // "25.01"
  Version tag_version;                 // 25.1, for ordering
  std::string torch;                   // torch.__version__ without ".nvYY.MM": "2.6.0a0+ecf3bae40a"
  Version cuda;                        // major.minor: 12.8
  std::string cuda_detail;             // "12.8.0.038" when known, else ""
  std::vector<std::string> platforms;  // "x86_64", "arm64-sbsa", "igpu" (the -py3-igpu tag)
  bool doubtful = false;               // a value was recalled or inferred
  std::string doubt;                   // which one, when doubtful
  std::string source;
  std::string kernels = "torch";  // what the arch lists are of, as verdicts name it: "sgl-kernel" in SGLang's image
};

/// Holds what torch in the images of tags first..last (inclusive) is built for.
struct NgcArchList {
  Version first;
  Version last;
  std::vector<std::string> platforms;
  std::string arch_list;     // TORCH_CUDA_ARCH_LIST form: "7.5;8.0;9.0+PTX"
  std::vector<Arch> images;  // sm_75, sm_80, sm_90, compute_90
  bool doubtful = false;
  std::string doubt;
  std::string source;
};

/// Names a GPU whose first working tag is later than its arch list says.
struct NgcFirstTag {
  ComputeCapability cc;
  Version tag;
  std::string source;
};

/// Holds the older host drivers that run images of one CUDA major through
/// forward compatibility (data-centre GPUs and Jetson only): the oldest
/// driver of each listed branch.
struct NgcForwardCompat {
  int cuda_major = 0;
  std::vector<Version> drivers;
  bool doubtful = false;
  std::string doubt;
  std::string source;
};

/// Holds the whole table.
struct NgcTable {
  std::vector<NgcRelease> releases;  // sorted oldest first
  std::vector<NgcArchList> arch_lists;
  std::vector<NgcFirstTag> first_tags;
  std::vector<NgcForwardCompat> forward_compat;

  /// Returns the release with `tag` ("23.05"), nullptr when not in the table.
  const NgcRelease* release(std::string_view tag) const;
  /// Returns the arch list of `release` on `platform`, nullptr when none.
  const NgcArchList* arch_list(const NgcRelease& release, std::string_view platform) const;
  /// Returns the forward-compatibility row of a CUDA major, nullptr when none.
  const NgcForwardCompat* forward_compat_for(int cuda_major) const;
};

/// Parses recipes/ngc-pytorch.toml ([[release]], [[arch_list]], [[first_tag]],
/// [[forward_compat]]). Errors name `file`, the line and what is wrong; a row
/// without `source` is an error (every fact carries its source).
Expected<NgcTable> parse_ngc_table(std::string_view text, const std::string& file);

}  // namespace torchfix
