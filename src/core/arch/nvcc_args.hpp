#pragma once
// The arch flags of one nvcc command line and their rewrite to a plan's
// targets: what `torchfix build` does while it stands in for nvcc in a
// project that hard-codes its own -gencode list. Pure: argv in, argv out.
//
// Source of the flag spellings: nvcc docs, "NVCC Command Options" 4.2.7
// (--gpu-architecture/-arch, --gpu-code/-code, --generate-code/-gencode; each
// takes its value after '=' or as the next argument; -gencode values are
// arch=compute_XY,code=sm_XY or code=[sm_XY,compute_XY]), and "NVCC
// Environment Variables" (NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS).

#include <string>
#include <string_view>
#include <vector>

namespace torchfix {

/// Holds one nvcc command line after its arch flags were replaced.
struct NvccRewrite {
  std::vector<std::string> args;     // the command line to run (argv[1..])
  std::vector<std::string> removed;  // each arch flag taken out, as written ("-gencode arch=compute_75,code=sm_75")
  std::vector<std::string> asked;    // the images those flags named, sorted by number ("sm_75", "compute_90")

  /// Returns true when at least one arch flag was replaced.
  bool changed() const { return !removed.empty(); }
};

/// Replaces every arch flag of `args` (-gencode, --generate-code, -arch,
/// --gpu-architecture, -code, --gpu-code; "=value" or separate value) by
/// `targets` (as gencode_args renders them), inserted where the first one
/// stood. A command line without arch flags is returned unchanged, and so is
/// one that asks for a single image by design (-ptx, -cubin: one arch only).
/// A flag whose value is missing (the last argument) is kept as written.
NvccRewrite rewrite_arch_flags(const std::vector<std::string>& args, const std::vector<std::string>& targets);

/// Removes the arch flags from a whitespace-separated nvcc flag value
/// (NVCC_APPEND_FLAGS, NVCC_PREPEND_FLAGS): `removed`/`asked` say what went,
/// `args` holds the flags that stay.
NvccRewrite strip_arch_flags(std::string_view flags);

/// Returns the images named in `text` ("sm_75", "compute_90a", "lto_80" and
/// the words native, all, all-major), sorted by number, without duplicates.
std::vector<std::string> images_named(std::string_view text);

/// Returns "sm_75, sm_80, ..., sm_121" for a long list (first two, last), or
/// the whole list joined by ", " when it has at most four entries.
std::string summarise_images(const std::vector<std::string>& images);

}  // namespace torchfix
