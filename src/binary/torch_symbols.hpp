#pragma once
// The torch C++ ABI of an extension, read from ELF dynamic symbols: the
// symbols of c10, at, torch, caffe2 and THP* it needs (undefined in it)
// against those the installed torch's libraries export. An extension built
// against another torch release needs symbols this one lacks, and its import
// fails with "undefined symbol" (sgl-project/sglang#5100:
// _ZN5torch3jit17parseSchemaOrNameERKSsb beside torch 2.5.1).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "core/base/error.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix::binary {

/// Holds the dynamic symbol names one torch's libraries export, as 64-bit
/// FNV-1a hashes (read once per torch, looked up per extension).
class TorchExports {
 public:
  /// Reads the exported dynamic symbols of every libc10*.so and libtorch*.so
  /// in `lib_dir` (torch/lib); one that cannot be opened (a dangling link) is
  /// skipped. Errors: `lib_dir` holds none that opens, or one is no readable
  /// ELF file (the error names it).
  static Expected<TorchExports> read(const std::filesystem::path& lib_dir);
  /// Says whether one of the libraries exports `name` (a mangled name).
  bool exports(std::string_view name) const;
  /// Returns how many distinct names were read.
  std::size_t size() const { return m_hashes.size(); }

 private:
  std::unordered_set<std::uint64_t> m_hashes;
};

/// Says whether the mangled or C name `name` belongs to torch's C++ API (the
/// namespaces c10, at, torch, caffe2, or a THP* function of libtorch_python).
bool is_torch_symbol(std::string_view name);

/// Checks the torch symbols the ELF library `library` needs against
/// `exports` of torch `torch_version`; examples are demangled where the C++
/// runtime can. nullopt when the library cannot be read or needs none.
std::optional<TorchSymbols> check_torch_symbols(const std::filesystem::path& library, const TorchExports& exports,
                                                const std::string& torch_version);

}  // namespace torchfix::binary
