#include "binary/fatbin.hpp"

#include <cstring>
#include <fmt/format.h>

namespace torchfix::binary {
namespace {

// Header fields (observed with nvcc 12.x/13.0; see shared/facts/arch-rules.md).
constexpr std::size_t k_fatbin_header_min = 16;
constexpr std::uint16_t k_kind_ptx = 1;
constexpr std::uint16_t k_kind_elf = 2;
// Entry header: u16 kind, u16 version, u32 header size, u64 payload size,
// u32 compressed size, u32 ?, u16 minor, u16 major, u32 arch (offset 28),
// u32 name offset, u32 name size, u64 flags (offset 40), u64 ?, u64
// uncompressed size (offset 56).
constexpr std::size_t k_entry_arch_offset = 28;
constexpr std::size_t k_entry_flags_offset = 40;
constexpr std::size_t k_entry_uncompressed_offset = 56;
constexpr std::size_t k_entry_header_min = k_entry_arch_offset + 4;
// Flag bits: LZ4 (CUDA 11.x-12.x) and zstd (CUDA 12.8+) compression, and the
// arch variants (`a` arch-specific, `f` family-specific) as nvcc 13.0 writes
// them for sm_90a / compute_100a / sm_100f.
constexpr std::uint64_t k_flag_compressed_lz4 = 0x2000;
constexpr std::uint64_t k_flag_compressed_zstd = 0x8000;
constexpr std::uint64_t k_flag_arch_specific = 0x100000;
constexpr std::uint64_t k_flag_arch_family = 0x200000;
// Arch numbers outside this range are not CUDA archs (Arch::parse's range).
constexpr std::uint32_t k_arch_min = 20;
constexpr std::uint32_t k_arch_max = 999;

template <typename T>
T load(std::span<const std::byte> bytes, std::size_t at) {
  // Callers check bounds first; memcpy avoids unaligned loads.
  T value{};
  std::memcpy(&value, bytes.data() + at, sizeof(T));
  return value;
}

// Says whether an uncompressed cubin (an ELF64 for the GPU) has a section
// with SHF_EXECINSTR; a cubin we cannot walk counts as having code.
bool cubin_has_code(std::span<const std::byte> cubin) {
  constexpr std::size_t k_ehdr = 64;
  constexpr std::size_t k_shdr = 64;
  constexpr std::uint64_t k_shf_execinstr = 0x4;
  if (cubin.size() < k_ehdr || load<std::uint32_t>(cubin, 0) != 0x464C457F ||
      static_cast<std::uint8_t>(cubin[4]) != 2 /* ELFCLASS64 */) {
    return true;
  }
  const auto shoff = load<std::uint64_t>(cubin, 0x28);
  const auto shentsize = load<std::uint16_t>(cubin, 0x3A);
  const auto shnum = load<std::uint16_t>(cubin, 0x3C);
  if (shentsize < k_shdr || shoff > cubin.size() ||
      std::uint64_t{shnum} * shentsize > cubin.size() - shoff) {
    return true;
  }
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const auto flags = load<std::uint64_t>(cubin, shoff + std::uint64_t{i} * shentsize + 8);
    if (flags & k_shf_execinstr) return true;
  }
  return false;
}

Expected<FatbinEntry> parse_entry(std::span<const std::byte> header, std::span<const std::byte> body,
                                  std::uint64_t at) {
  const std::uint64_t payload = body.size();
  FatbinEntry entry;
  entry.raw_kind = load<std::uint16_t>(header, 0);
  entry.payload_bytes = payload;
  entry.uncompressed_bytes = payload;
  std::uint64_t flags = 0;
  if (header.size() >= k_entry_flags_offset + 8) flags = load<std::uint64_t>(header, k_entry_flags_offset);
  entry.compressed = (flags & (k_flag_compressed_lz4 | k_flag_compressed_zstd)) != 0;
  if (entry.compressed && header.size() >= k_entry_uncompressed_offset + 8) {
    entry.uncompressed_bytes = load<std::uint64_t>(header, k_entry_uncompressed_offset);
  }
  if (entry.raw_kind != k_kind_ptx && entry.raw_kind != k_kind_elf) return entry;

  const auto number = load<std::uint32_t>(header, k_entry_arch_offset);
  if (number < k_arch_min || number > k_arch_max) {
    return fail(fmt::format("fatbin entry at offset {} names arch {}, which is not a CUDA arch", at, number));
  }
  entry.kind = entry.raw_kind == k_kind_ptx ? EntryKind::ptx : EntryKind::sass;
  entry.kernel_less = entry.kind == EntryKind::sass && !entry.compressed && !cubin_has_code(body);
  entry.arch.kind = entry.kind == EntryKind::ptx ? ImageKind::ptx : ImageKind::sass;
  entry.arch.cc = ComputeCapability::from_number(static_cast<int>(number));
  if (flags & k_flag_arch_specific) {
    entry.arch.variant = ArchVariant::specific;
  } else if (flags & k_flag_arch_family) {
    entry.arch.variant = ArchVariant::family;
  }
  return entry;
}

// Parses the entries of one fatbin whose header starts at `bytes[0]`.
Expected<Fatbin> parse_one(std::span<const std::byte> bytes, std::uint64_t base) {
  const auto header_size = load<std::uint16_t>(bytes, 6);
  const auto entries_size = load<std::uint64_t>(bytes, 8);
  if (header_size < k_fatbin_header_min || header_size > bytes.size()) {
    return fail(fmt::format("fatbin at offset {} has header size {}, outside 16..{}", base,
                            header_size, bytes.size()));
  }
  if (entries_size > bytes.size() - header_size) {
    return fail(fmt::format("fatbin at offset {} claims {} bytes of entries but only {} remain "
                            "(truncated file?)",
                            base, entries_size, bytes.size() - header_size));
  }
  Fatbin fatbin;
  fatbin.offset = base;
  fatbin.size = header_size + entries_size;
  auto rest = bytes.subspan(header_size, entries_size);
  std::uint64_t at = base + header_size;
  while (!rest.empty()) {
    if (rest.size() < k_entry_header_min) {
      return fail(fmt::format("fatbin entry at offset {} is cut off: {} bytes left, header needs {}",
                              at, rest.size(), k_entry_header_min));
    }
    const auto entry_header = load<std::uint32_t>(rest, 4);
    const auto payload = load<std::uint64_t>(rest, 8);
    if (entry_header < k_entry_header_min || entry_header > rest.size()) {
      return fail(fmt::format("fatbin entry at offset {} has header size {}, outside {}..{}", at,
                              entry_header, k_entry_header_min, rest.size()));
    }
    if (payload > rest.size() - entry_header) {
      return fail(fmt::format("fatbin entry at offset {} claims a {}-byte payload but only {} "
                              "bytes remain in its fatbin",
                              at, payload, rest.size() - entry_header));
    }
    TF_TRY(entry, parse_entry(rest.first(entry_header), rest.subspan(entry_header, payload), at));
    fatbin.entries.push_back(entry);
    rest = rest.subspan(entry_header + payload);
    at += entry_header + payload;
  }
  return fatbin;
}

}  // namespace

bool is_kernel_less(const Fatbin& fatbin) {
  for (const FatbinEntry& entry : fatbin.entries) {
    if (entry.kind != EntryKind::other && !entry.kernel_less) return false;
  }
  return true;
}

bool starts_with_fatbin(std::span<const std::byte> bytes) {
  return bytes.size() >= k_fatbin_header_min && load<std::uint32_t>(bytes, 0) == k_fatbin_magic;
}

Expected<std::vector<Fatbin>> parse_fatbins(std::span<const std::byte> region,
                                            std::uint64_t base_offset) {
  std::vector<Fatbin> out;
  std::size_t pos = 0;
  while (true) {
    // Linkers pad each object's section to its alignment with zeros.
    while (pos < region.size() && region[pos] == std::byte{0}) ++pos;
    if (pos >= region.size()) break;
    auto rest = region.subspan(pos);
    if (!starts_with_fatbin(rest)) {
      return fail(fmt::format("no fatbin header at offset {} (expected magic 0x{:08X}): "
                              "corrupt or not a fatbin",
                              base_offset + pos, k_fatbin_magic));
    }
    TF_TRY(fatbin, parse_one(rest, base_offset + pos));
    pos += fatbin.size;
    out.push_back(std::move(fatbin));
  }
  return out;
}

}  // namespace torchfix::binary
