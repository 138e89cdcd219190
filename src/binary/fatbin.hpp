#pragma once
// The fatbin container: a sequence of fatbins, each a header followed by
// entries (a SASS cubin or PTX text per arch). Parsed from headers only;
// payloads are never decompressed. Layout in shared/facts/arch-rules.md.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "binary/source.hpp"
#include "core/arch/arch.hpp"
#include "core/base/error.hpp"

namespace torchfix::binary {

/// Says what a fatbin entry holds; `other` covers kinds this reader does not
/// know (e.g. LTO IR), which never run on a GPU by themselves.
enum class EntryKind { sass, ptx, other };

/// Describes one fatbin entry, read from its header.
struct FatbinEntry {
  EntryKind kind = EntryKind::other;
  Arch arch;                             // sm_90a or compute_120 (kind sass/ptx)
  int raw_kind = 0;                      // the kind field as stored (1 PTX, 2 ELF)
  bool compressed = false;               // payload compressed (LZ4 or zstd)
  bool zstd = false;                     // compressed as nvcc's --compress-mode=size/balance write it (flag
                                         // 0x8000; CUDA 12 drivers before 550.54.14 cannot load it)
  std::uint64_t payload_bytes = 0;       // bytes stored in the file (padded)
  std::uint64_t uncompressed_bytes = 0;  // bytes after decompression (= payload when not compressed)
  bool kernel_less = false;              // an uncompressed cubin without executable sections
                                         // (the stub of an nvcc device-link step); compressed
                                         // entries are never looked into, so never marked
};

/// Describes one fatbin (one kernel module, usually one translation unit).
struct Fatbin {
  std::uint64_t offset = 0;  // file offset of its header, bytes
  std::uint64_t size = 0;    // header plus entries, bytes
  std::vector<FatbinEntry> entries;
};

/// Returns true when no entry of `fatbin` can hold kernels (every SASS/PTX
/// entry is kernel_less, or there are none): such a module never launches.
bool is_kernel_less(const Fatbin& fatbin);

/// Marks the start of each fatbin (its magic number, little-endian u32).
inline constexpr std::uint32_t k_fatbin_magic = 0xBA55ED50;

/// Parses a fatbin region (the contents of `.nv_fatbin`, `__nv_relfatbin` or a
/// standalone `.fatbin` file): fatbins back to back, zero padding between them.
/// `base_offset` is added to the reported offsets (the region's file offset).
/// Errors name the offset and what was wrong (bad magic, a size that runs past
/// the region, an entry header too short); nothing is read out of bounds.
Expected<std::vector<Fatbin>> parse_fatbins(std::span<const std::byte> region, std::uint64_t base_offset = 0);

/// Parses the fatbin region of `size` bytes at file offset `offset` of
/// `source`, reading only headers (offsets reported are file offsets).
/// Errors as for the span overload; a failed read is reported as truncation.
Expected<std::vector<Fatbin>> parse_fatbins(const ByteSource& source, std::uint64_t offset, std::uint64_t size);

/// Finds the fatbins inside `size` bytes at file offset `offset` of `source`
/// that hold other data too (an ELF `.ldata` section): each 8-byte-aligned
/// fatbin magic followed by version 1 and a 16-byte header whose entries
/// parse is one fatbin; a candidate that does not parse is data, not an
/// error. Holes of sparse files are skipped. Errors: the region runs past
/// the end of the file.
Expected<std::vector<Fatbin>> find_fatbins(const ByteSource& source, std::uint64_t offset, std::uint64_t size);

/// Returns true when `bytes` starts with a fatbin header.
bool starts_with_fatbin(std::span<const std::byte> bytes);

}  // namespace torchfix::binary
