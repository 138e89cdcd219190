#include "binary/fatbin.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

namespace torchfix::binary {
namespace {

// Header fields (observed with nvcc 12.x/13.x; see shared/facts/arch-rules.md).
constexpr std::size_t k_fatbin_header_min = 16;
constexpr std::uint16_t k_kind_ptx = 1;
constexpr std::uint16_t k_kind_elf = 2;
// Entry header: u16 kind, u16 version, u32 header size, u64 payload size,
// u32 compressed size, u32 ?, u16 minor, u16 major, u32 arch (offset 28),
// u32 name offset, u32 name size, u64 flags (offset 40), u64 ?, u64
// uncompressed size (offset 56). Longer headers carry more we do not need.
constexpr std::size_t k_entry_arch_offset = 28;
constexpr std::size_t k_entry_flags_offset = 40;
constexpr std::size_t k_entry_uncompressed_offset = 56;
constexpr std::size_t k_entry_header_min = k_entry_arch_offset + 4;
constexpr std::size_t k_entry_header_read = 64;
// Bytes read at a time when searching a data section for fatbins.
constexpr std::size_t k_search_chunk = std::size_t{1} << 20;
// Flag bits: LZ4 (CUDA 11.x-12.x) and zstd (CUDA 12.8+) compression (nvcc
// 13.0.88 here writes 0x8000 for --compress-mode=size, balance and default,
// 0x2000 for speed, with -Xfatbin=-compress-all), and the
// arch variants (`a` arch-specific, `f` family-specific) as nvcc 13.0 writes
// them for sm_90a / compute_100a / sm_100f / sm_103f / compute_120f.
constexpr std::uint64_t k_flag_compressed_lz4 = 0x2000;
constexpr std::uint64_t k_flag_compressed_zstd = 0x8000;
constexpr std::uint64_t k_flag_arch_specific = 0x100000;
constexpr std::uint64_t k_flag_arch_family = 0x200000;
// Arch numbers outside this range are not CUDA archs (Arch::parse's range).
constexpr std::uint32_t k_arch_min = 20;
constexpr std::uint32_t k_arch_max = 999;
// Zero padding is skipped in chunks of this many bytes.
constexpr std::size_t k_padding_chunk = 4096;

// Says whether an uncompressed cubin (an ELF64 for the GPU) of `size` bytes at
// `offset` has a section with SHF_EXECINSTR; a cubin we cannot walk counts as
// having code, so that nothing is hidden by a parse failure.
bool cubin_has_code(const ByteSource& source, std::uint64_t offset, std::uint64_t size) {
  constexpr std::size_t k_ehdr = 64;
  constexpr std::size_t k_shdr = 64;
  constexpr std::uint64_t k_shf_execinstr = 0x4;
  std::array<std::byte, k_ehdr> ehdr{};
  if (size < k_ehdr || !source.read(offset, ehdr)) return true;
  if (load_le<std::uint32_t>(ehdr, 0) != 0x464C457F || static_cast<std::uint8_t>(ehdr[4]) != 2) return true;
  const auto shoff = load_le<std::uint64_t>(ehdr, 0x28);
  const auto shentsize = load_le<std::uint16_t>(ehdr, 0x3A);
  const auto shnum = load_le<std::uint16_t>(ehdr, 0x3C);
  if (shentsize < k_shdr || shoff > size || std::uint64_t{shnum} * shentsize > size - shoff) return true;
  // In chunks of a fixed buffer: the declared table (up to 65535 entries of
  // 65535 bytes, 4.29 GB) is never allocated, and a real one (about 30
  // entries of 64 bytes) takes one read.
  std::array<std::byte, 4096> chunk{};
  const std::size_t per_chunk = std::max<std::size_t>(1, chunk.size() / shentsize);
  for (std::uint32_t first = 0; first < shnum; first += static_cast<std::uint32_t>(per_chunk)) {
    const auto count =
        static_cast<std::size_t>(std::min<std::uint32_t>(static_cast<std::uint32_t>(per_chunk), shnum - first));
    const std::uint64_t at = offset + shoff + std::uint64_t{first} * shentsize;
    if (shentsize <= chunk.size()) {
      if (!source.read(at, std::span(chunk).first(count * shentsize))) return true;
      for (std::size_t i = 0; i < count; ++i) {
        if (load_le<std::uint64_t>(chunk, i * shentsize + 8) & k_shf_execinstr) return true;
      }
    } else {
      if (!source.read(at + 8, std::span(chunk).first(8))) return true;
      if (load_le<std::uint64_t>(chunk, 0) & k_shf_execinstr) return true;
    }
  }
  return false;
}

Expected<FatbinEntry> parse_entry(std::span<const std::byte> header, const ByteSource& source, std::uint64_t body,
                                  std::uint64_t payload, std::uint64_t at) {
  FatbinEntry entry;
  entry.raw_kind = load_le<std::uint16_t>(header, 0);
  entry.payload_bytes = payload;
  entry.uncompressed_bytes = payload;
  std::uint64_t flags = 0;
  if (header.size() >= k_entry_flags_offset + 8) flags = load_le<std::uint64_t>(header, k_entry_flags_offset);
  entry.compressed = (flags & (k_flag_compressed_lz4 | k_flag_compressed_zstd)) != 0;
  entry.zstd = (flags & k_flag_compressed_zstd) != 0;
  if (entry.compressed && header.size() >= k_entry_uncompressed_offset + 8) {
    entry.uncompressed_bytes = load_le<std::uint64_t>(header, k_entry_uncompressed_offset);
  }
  if (entry.raw_kind != k_kind_ptx && entry.raw_kind != k_kind_elf) return entry;

  const auto number = load_le<std::uint32_t>(header, k_entry_arch_offset);
  if (number < k_arch_min || number > k_arch_max) {
    return fail(fmt::format("fatbin entry at offset {} names arch {}, which is not a CUDA arch", at, number));
  }
  entry.kind = entry.raw_kind == k_kind_ptx ? EntryKind::ptx : EntryKind::sass;
  entry.arch.kind = entry.kind == EntryKind::ptx ? ImageKind::ptx : ImageKind::sass;
  entry.arch.cc = ComputeCapability::from_number(static_cast<int>(number));
  if (flags & k_flag_arch_specific) {
    entry.arch.variant = ArchVariant::specific;
  } else if (flags & k_flag_arch_family) {
    entry.arch.variant = ArchVariant::family;
  }
  entry.kernel_less = entry.kind == EntryKind::sass && !entry.compressed && !cubin_has_code(source, body, payload);
  return entry;
}

// Parses the entries of the fatbin at `start`, which has `room` bytes up to
// the end of its region.
Expected<Fatbin> parse_one(const ByteSource& source, std::uint64_t start, std::uint64_t room) {
  std::array<std::byte, k_fatbin_header_min> header{};
  if (!source.read(start, header)) return fail(fmt::format("cannot read the fatbin header at offset {}", start));
  const auto header_size = load_le<std::uint16_t>(header, 6);
  const auto entries_size = load_le<std::uint64_t>(header, 8);
  if (header_size < k_fatbin_header_min || header_size > room) {
    return fail(fmt::format("fatbin at offset {} has header size {}, outside 16..{}", start, header_size, room));
  }
  if (entries_size > room - header_size) {
    return fail(
        fmt::format("fatbin at offset {} claims {} bytes of entries but only {} remain "
                    "(truncated file?)",
                    start, entries_size, room - header_size));
  }
  Fatbin fatbin;
  fatbin.offset = start;
  fatbin.size = header_size + entries_size;
  std::uint64_t at = start + header_size;
  const std::uint64_t end = at + entries_size;
  std::array<std::byte, k_entry_header_read> buffer{};
  while (at < end) {
    const std::uint64_t rest = end - at;
    if (rest < k_entry_header_min) {
      return fail(fmt::format("fatbin entry at offset {} is cut off: {} bytes left, header needs {}", at, rest,
                              k_entry_header_min));
    }
    const auto readable = static_cast<std::size_t>(std::min<std::uint64_t>(rest, buffer.size()));
    if (!source.read(at, std::span(buffer).first(readable))) {
      return fail(fmt::format("cannot read the fatbin entry header at offset {}", at));
    }
    const auto entry_header = load_le<std::uint32_t>(buffer, 4);
    const auto payload = load_le<std::uint64_t>(buffer, 8);
    if (entry_header < k_entry_header_min || entry_header > rest) {
      return fail(fmt::format("fatbin entry at offset {} has header size {}, outside {}..{}", at, entry_header,
                              k_entry_header_min, rest));
    }
    if (payload > rest - entry_header) {
      return fail(
          fmt::format("fatbin entry at offset {} claims a {}-byte payload but only {} bytes "
                      "remain in its fatbin",
                      at, payload, rest - entry_header));
    }
    const auto header_bytes = std::min<std::size_t>(entry_header, readable);
    TF_TRY(entry, parse_entry(std::span(buffer).first(header_bytes), source, at + entry_header, payload, at));
    fatbin.entries.push_back(entry);
    at += entry_header + payload;
  }
  return fatbin;
}

// Returns the offset of the first non-zero byte in [pos, end), or end.
std::uint64_t skip_zeros(const ByteSource& source, std::uint64_t pos, std::uint64_t end) {
  std::array<std::byte, k_padding_chunk> chunk{};
  while (pos < end) {
    // A hole of a sparse file reads as zeros: jump over it, not through it
    // (a 4 KB file may declare terabytes of padding).
    pos = std::min(end, source.next_data(pos));
    if (pos >= end) break;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(end - pos, chunk.size()));
    if (!source.read(pos, std::span(chunk).first(n))) return pos;  // the header read reports it
    const auto* hit = std::find_if(chunk.begin(), chunk.begin() + n, [](std::byte b) { return b != std::byte{0}; });
    pos += static_cast<std::uint64_t>(hit - chunk.begin());
    if (hit != chunk.begin() + n) return pos;
  }
  return end;
}

}  // namespace

bool is_kernel_less(const Fatbin& fatbin) {
  for (const FatbinEntry& entry : fatbin.entries) {
    if (entry.kind != EntryKind::other && !entry.kernel_less) return false;
  }
  return true;
}

bool starts_with_fatbin(std::span<const std::byte> bytes) {
  return bytes.size() >= k_fatbin_header_min && load_le<std::uint32_t>(bytes, 0) == k_fatbin_magic;
}

Expected<std::vector<Fatbin>> parse_fatbins(const ByteSource& source, std::uint64_t offset, std::uint64_t size) {
  if (offset > source.size() || size > source.size() - offset) {
    return fail(fmt::format("fatbin region of {} bytes at offset {} runs past the end of the {}-byte file", size,
                            offset, source.size()));
  }
  std::vector<Fatbin> out;
  const std::uint64_t end = offset + size;
  std::uint64_t pos = offset;
  while (true) {
    // Linkers pad each object's section to its alignment with zeros.
    pos = skip_zeros(source, pos, end);
    if (pos >= end) break;
    std::array<std::byte, k_fatbin_header_min> head{};
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(end - pos, head.size()));
    if (!source.read(pos, std::span(head).first(n)) || !starts_with_fatbin(std::span(head).first(n))) {
      return fail(fmt::format("no fatbin header at offset {} (expected magic 0x{:08X}): corrupt or not a fatbin", pos,
                              k_fatbin_magic));
    }
    TF_TRY(fatbin, parse_one(source, pos, end - pos));
    pos += fatbin.size;
    out.push_back(std::move(fatbin));
  }
  return out;
}

Expected<std::vector<Fatbin>> find_fatbins(const ByteSource& source, std::uint64_t offset, std::uint64_t size) {
  if (offset > source.size() || size > source.size() - offset) {
    return fail(fmt::format("data region of {} bytes at offset {} runs past the end of the {}-byte file", size, offset,
                            source.size()));
  }
  constexpr std::uint64_t align = 8;  // nvcc aligns each fatbin to 8 bytes
  const auto align_up = [](std::uint64_t at) { return (at + align - 1) / align * align; };
  std::vector<Fatbin> out;
  std::vector<std::byte> chunk(k_search_chunk);
  const std::uint64_t end = offset + size;
  std::uint64_t pos = align_up(offset);
  while (pos + k_fatbin_header_min <= end) {
    pos = std::max(pos, source.next_data(pos) / align * align);  // a hole of a sparse file holds no fatbin
    if (pos + k_fatbin_header_min > end) break;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(end - pos, chunk.size()));
    if (!source.read(pos, std::span(chunk).first(n))) break;
    std::optional<std::uint64_t> found_end;
    std::size_t i = 0;
    for (; i + k_fatbin_header_min <= n && !found_end; i += align) {
      const auto head = std::span<const std::byte>(chunk).subspan(i, k_fatbin_header_min);
      if (!starts_with_fatbin(head) || load_le<std::uint16_t>(head, 4) != 1) continue;
      auto fatbin = parse_one(source, pos + i, end - pos - i);
      if (!fatbin) continue;  // the magic number inside other data
      found_end = fatbin->offset + fatbin->size;
      out.push_back(std::move(*fatbin));
    }
    // Without a hit, i is the first position whose header did not fit in
    // this chunk: the next chunk starts there.
    pos = found_end ? align_up(*found_end) : pos + i;
  }
  return out;
}

Expected<std::vector<Fatbin>> parse_fatbins(std::span<const std::byte> region, std::uint64_t base_offset) {
  return parse_fatbins(ByteSource(region, base_offset), base_offset, region.size());
}

}  // namespace torchfix::binary
