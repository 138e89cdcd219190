#pragma once
// The knowledge rows that say whether an extension's binaries load at all,
// whatever their archs (recipes/toolkits.toml [[fatbin_compression]],
// recipes/extensions.toml [[uncompressed_release]], [[broken_release]],
// [[cuda_library]]); held by Knowledge (core/facts/knowledge.hpp), judged by
// core/diagnosis/extension_loading.cpp.

#include <optional>
#include <string>

#include "core/arch/arch.hpp"
#include "core/base/version.hpp"

namespace torchfix {

/// Holds the driver a compressed fatbin format needs (recipes/toolkits.toml
/// [[fatbin_compression]]): kernels of a CUDA `cuda_major` build compressed
/// as nvcc's --compress-mode=size or balance writes them (fatbin flag
/// 0x8000) load only on a driver that supports CUDA `driver_cuda` or newer;
/// an older one fails with "device kernel image is invalid".
struct FatbinCompression {
  int cuda_major = 0;
  Version driver_cuda;       // "12.4": the driver floor is that CUDA's ([[driver_floor]])
  std::string torch_wheels;  // whether official torch wheels of this major are built so, and where read; may be empty
  std::string source;
};

/// Holds the release to move to from a range of an extension's releases whose
/// official builds compress kernels as nvcc's --compress-mode=size/balance
/// writes them (recipes/extensions.toml [[uncompressed_release]]): `release`'s
/// build does not, so it loads on drivers below [[fatbin_compression]]'s floor.
struct UncompressedRelease {
  std::string distribution;  // "flash-attn"
  Version min;               // first compressed release, inclusive ("2.8.1")
  Version max;               // last compressed release, inclusive
  Version release;           // "2.8.2"
  std::string source;
};

/// Holds a range of an extension's releases that fail on a range of GPUs
/// whatever their kernels hold (recipes/extensions.toml [[broken_release]]):
/// xformers 0.0.29 to 0.0.32.post2 dispatch their FlashAttention-3 kernels,
/// built for Hopper, on every GPU above 9.0. `fixed` is the first release
/// that runs there.
struct BrokenRelease {
  std::string distribution;                 // "xformers"
  Version min;                              // first broken release, inclusive ("0.0.29")
  Version max;                              // last broken release, inclusive ("0.0.32": its .postN too)
  ComputeCapability min_cc;                 // lowest compute capability it fails on, inclusive ("10.0")
  std::optional<ComputeCapability> max_cc;  // highest, inclusive; nullopt: every newer GPU
  Version fixed;                            // first release that runs there ("0.0.33")
  std::string what;                         // what fails, one line
  std::string source;

  /// Says whether release `release` of the distribution fails on a GPU of capability `cc`.
  bool breaks(const Version& release, ComputeCapability cc) const;
};

/// Holds the first release of an extension that ships the library it loads
/// for one CUDA version (recipes/extensions.toml [[cuda_library]]):
/// bitsandbytes loads libbitsandbytes_cuda{XY} for torch.version.cuda X.Y
/// and falls back to its CPU library when that file is missing.
struct CudaLibrary {
  std::string distribution;       // "bitsandbytes"
  std::string prefix;             // "libbitsandbytes_cuda": the file is prefix + "128" + .so/.dll
  Version cuda;                   // "12.8"
  Version first;                  // first release whose wheels hold that library ("0.45.3")
  std::string override_variable;  // names another library to load ("BNB_CUDA_VERSION"); "" when none
  std::string source;
};

/// Holds a project's own index of one release built for another CUDA than
/// its PyPI wheels (recipes/extensions.toml [[variant_index]]): vLLM 0.22.0
/// from PyPI links libcudart.so.13, its CUDA 12.9 build is on
/// https://wheels.vllm.ai/0.22.0/cu129. Only indexes a source names are rows.
struct VariantIndex {
  std::string distribution;  // "vllm"
  std::string version;       // "0.22.0", the public release (no local tag)
  std::string variant;       // "cu129": the CUDA of torch it is built for
  std::string index;         // "https://wheels.vllm.ai/0.22.0/cu129"
  std::string source;
};

/// Holds which installer provides DLLs that Windows itself does not ship
/// (recipes/drivers.toml [[runtime_dll]]): the fix for a torch DLL whose
/// import of one of them failed.
struct RuntimeDll {
  std::vector<std::string> dlls;  // lowercase names: "vcruntime140_1.dll"
  std::string installer;          // "the Microsoft Visual C++ Redistributable (x64)"
  std::string url;                // the installer's download
  std::string arguments;          // installer options for an unattended install: "/install /passive /norestart"
  std::string source;
};

/// Names the library that holds a companion's compiled operators
/// (recipes/extensions.toml [[companion_ops]]): torchvision's `_C`, whose CUDA
/// builds hold kernels; without it, or without kernels beside a CUDA torch,
/// its ops fail on CUDA tensors.
struct CompanionOps {
  std::string distribution;  // "torchvision"
  std::string library;       // file stem, up to its first dot: "_C", "libtorchaudio"
  std::string source;
};

/// Names a package that compiles CUDA ops at run time with CUDA_HOME's nvcc
/// (recipes/extensions.toml [[runtime_build]]) and what refuses a toolkit of
/// another CUDA major than torch's.
struct RuntimeBuild {
  std::string distribution;     // "deepspeed"
  std::string refusal;          // what the user sees, one line ({nvcc}, {torch}: the two CUDA versions)
  bool unless_prebuilt = true;  // only when its install holds no compiled library
  std::string source;
};

}  // namespace torchfix
