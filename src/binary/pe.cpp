#include "binary/pe.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// Layout: Microsoft PE Format specification
// (https://learn.microsoft.com/en-us/windows/win32/debug/pe-format): the DOS
// header's e_lfanew (offset 0x3C) points at "PE\0\0", followed by the 20-byte
// COFF file header, the optional header and 40-byte section headers.

namespace torchfix::binary {
namespace {

constexpr std::size_t k_coff_header_bytes = 20;
constexpr std::size_t k_section_header_bytes = 40;
constexpr std::size_t k_symbol_bytes = 18;
// The specification limits images to 96 sections; objects may hold 65535.
constexpr std::uint32_t k_sections_max = 65535;
// COFF machine types of the objects this reader accepts without a DOS stub.
constexpr std::uint16_t k_machine_amd64 = 0x8664;
constexpr std::uint16_t k_machine_arm64 = 0xAA64;

// Returns the ELF name of a fatbin section, or nullopt for any other name.
std::optional<std::string_view> fatbin_name(std::string_view name) {
  if (name == ".nv_fatb" || name == k_fatbin_section) return k_fatbin_section;
  if (name == "__nv_rel" || name == k_relfatbin_section) return k_relfatbin_section;
  return std::nullopt;
}

// Reads the long name "/N" of an object's section from the string table
// at `strings` (file offset); empty when it lies outside the file.
std::string long_name(const ByteSource& source, std::uint64_t strings, std::string_view digits) {
  std::uint64_t at = 0;
  for (char c : digits) {
    if (c < '0' || c > '9' || at > 10'000'000) return {};
    at = at * 10 + static_cast<std::uint64_t>(c - '0');
  }
  std::array<std::byte, 16> raw{};
  if (strings > source.size() || at > source.size() - strings) return {};
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(raw.size(), source.size() - strings - at));
  if (!source.read(strings + at, std::span(raw).first(n))) return {};
  std::string text(reinterpret_cast<const char*>(raw.data()), n);
  return text.substr(0, text.find('\0'));
}

// Finds the COFF header: after "PE\0\0" in an image, at 0 in an object.
// Returns its offset, 0 with `object` set for an object, or nullopt for a DOS
// program without a PE header.
Expected<std::optional<std::uint64_t>> coff_header(const ByteSource& source) {
  std::array<std::byte, 64> dos{};
  const std::uint64_t size = source.size();
  if (size < 2 || !source.read(0, std::span(dos).first(std::min<std::uint64_t>(dos.size(), size)))) {
    return fail("not a readable PE file: the header is cut off");
  }
  if (dos[0] != std::byte{'M'} || dos[1] != std::byte{'Z'}) return std::optional<std::uint64_t>{0};
  if (size < dos.size()) return std::optional<std::uint64_t>{};
  const std::uint64_t lfanew = load_le<std::uint32_t>(dos, 0x3C);
  std::array<std::byte, 4> signature{};
  if (lfanew > size || size - lfanew < 4 + k_coff_header_bytes || !source.read(lfanew, signature)) {
    return std::optional<std::uint64_t>{};
  }
  if (std::memcmp(signature.data(), "PE\0\0", 4) != 0) return std::optional<std::uint64_t>{};
  return std::optional<std::uint64_t>{lfanew + 4};
}

}  // namespace

bool is_pe(std::span<const std::byte> bytes) {
  if (bytes.size() >= 2 && bytes[0] == std::byte{'M'} && bytes[1] == std::byte{'Z'}) return true;
  if (bytes.size() < 4) return false;
  // A COFF object: machine, then a section count that is not zero.
  const auto machine = load_le<std::uint16_t>(bytes, 0);
  const auto sections = load_le<std::uint16_t>(bytes, 2);
  return (machine == k_machine_amd64 || machine == k_machine_arm64) && sections != 0;
}

Expected<ElfInfo> read_pe_headers(const ByteSource& source) {
  const std::uint64_t size = source.size();
  TF_TRY(found, coff_header(source));
  if (!found) return ElfInfo{};
  const std::uint64_t coff = *found;
  std::array<std::byte, k_coff_header_bytes> header{};
  if (coff > size || size - coff < header.size() || !source.read(coff, header)) {
    return fail("not a readable PE file: the COFF header is cut off");
  }
  const std::uint32_t sections = load_le<std::uint16_t>(header, 2);
  const std::uint64_t symbols_at = load_le<std::uint32_t>(header, 8);
  const std::uint64_t symbols = load_le<std::uint32_t>(header, 12);
  const std::uint64_t optional_bytes = load_le<std::uint16_t>(header, 16);
  const std::uint64_t table = coff + k_coff_header_bytes + optional_bytes;
  if (sections > k_sections_max || table > size || sections > (size - table) / k_section_header_bytes) {
    return fail(
        fmt::format("section table ({} entries at offset {}) runs past the end of the {}-byte file (truncated?)",
                    sections, table, size));
  }
  const std::uint64_t strings = symbols_at + symbols * k_symbol_bytes;
  ElfInfo info;
  for (std::uint32_t i = 0; i < sections; ++i) {
    std::array<std::byte, k_section_header_bytes> raw{};
    if (!source.read(table + std::uint64_t{i} * raw.size(), raw)) return fail("cannot read the PE section table");
    std::string name(reinterpret_cast<const char*>(raw.data()), 8);
    name = name.substr(0, name.find('\0'));
    if (name.starts_with('/')) name = long_name(source, strings, std::string_view(name).substr(1));
    const auto elf_name = fatbin_name(name);
    if (!elf_name) continue;
    const std::uint64_t virtual_size = load_le<std::uint32_t>(raw, 8);
    const std::uint64_t raw_size = load_le<std::uint32_t>(raw, 16);
    const std::uint64_t offset = load_le<std::uint32_t>(raw, 20);
    // Objects leave VirtualSize 0; images pad SizeOfRawData to the file alignment.
    const std::uint64_t bytes = virtual_size == 0 ? raw_size : std::min(virtual_size, raw_size);
    if (offset > size || bytes > size - offset) {
      return fail(fmt::format("section {} ({} bytes at offset {}) runs past the end of the {}-byte file (truncated?)",
                              name, bytes, offset, size));
    }
    info.fatbin_sections.push_back({std::string(*elf_name), offset, bytes});
  }
  std::ranges::stable_sort(info.fatbin_sections, {}, &ElfSection::offset);
  return info;
}

namespace {

constexpr std::uint16_t k_pe32_magic = 0x10b;
constexpr std::uint16_t k_pe32_plus_magic = 0x20b;
constexpr std::size_t k_import_descriptor_bytes = 20;
constexpr std::uint32_t k_imports_max = 4096;
constexpr std::size_t k_dll_name_max = 256;

// Holds where one section's bytes are in memory (RVA) and in the file.
struct SectionMap {
  std::uint64_t rva = 0;
  std::uint64_t span = 0;  // max(VirtualSize, SizeOfRawData)
  std::uint64_t offset = 0;
  std::uint64_t raw_size = 0;
};

// Returns the file offset of `rva` and how many bytes from there lie in the
// file within its section; nullopt when no section holds it.
std::optional<std::pair<std::uint64_t, std::uint64_t>> file_offset(const std::vector<SectionMap>& sections,
                                                                   std::uint64_t rva) {
  for (const SectionMap& s : sections) {
    if (rva < s.rva || rva - s.rva >= s.span || rva - s.rva >= s.raw_size) continue;
    return std::pair{s.offset + (rva - s.rva), s.raw_size - (rva - s.rva)};
  }
  return std::nullopt;
}

// Reads the NUL-terminated DLL name at `rva`, at most k_dll_name_max bytes.
Expected<std::string> dll_name(const ByteSource& source, const std::vector<SectionMap>& sections, std::uint64_t rva) {
  const auto at = file_offset(sections, rva);
  if (!at) return fail(fmt::format("an imported DLL's name (RVA {:#x}) lies outside every section", rva));
  std::array<std::byte, k_dll_name_max> raw{};
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(raw.size(), at->second));
  if (!source.read(at->first, std::span(raw).first(n))) return fail("cannot read an imported DLL's name");
  std::string name(reinterpret_cast<const char*>(raw.data()), n);
  return name.substr(0, name.find('\0'));
}

}  // namespace

Expected<std::vector<std::string>> read_pe_imports(const ByteSource& source) {
  const std::uint64_t size = source.size();
  TF_TRY(found, coff_header(source));
  if (!found || *found == 0) return fail("not a PE image: no \"PE\\0\\0\" header after the DOS stub");
  const std::uint64_t coff = *found;
  std::array<std::byte, k_coff_header_bytes + 128> header{};
  if (size - coff < header.size() || !source.read(coff, header))
    return fail("not a readable PE image: headers cut off");
  const std::uint32_t count = load_le<std::uint16_t>(header, 2);
  const std::uint64_t optional_bytes = load_le<std::uint16_t>(header, 16);
  const auto magic = load_le<std::uint16_t>(header, k_coff_header_bytes);
  const std::size_t dirs = k_coff_header_bytes + (magic == k_pe32_plus_magic ? 112 : 96);
  if ((magic != k_pe32_magic && magic != k_pe32_plus_magic) || optional_bytes < dirs - k_coff_header_bytes + 16) {
    return std::vector<std::string>{};  // no import directory entry
  }
  if (load_le<std::uint32_t>(header, dirs - 4) < 2) return std::vector<std::string>{};
  const std::uint64_t imports_rva = load_le<std::uint32_t>(header, dirs + 8);
  if (imports_rva == 0) return std::vector<std::string>{};
  const std::uint64_t table = coff + k_coff_header_bytes + optional_bytes;
  if (table > size || count > (size - table) / k_section_header_bytes) {
    return fail("section table runs past the end of the file (truncated?)");
  }
  std::vector<SectionMap> sections;
  for (std::uint32_t i = 0; i < count; ++i) {
    std::array<std::byte, k_section_header_bytes> raw{};
    if (!source.read(table + std::uint64_t{i} * raw.size(), raw)) return fail("cannot read the PE section table");
    SectionMap s{load_le<std::uint32_t>(raw, 12), load_le<std::uint32_t>(raw, 8), load_le<std::uint32_t>(raw, 20),
                 load_le<std::uint32_t>(raw, 16)};
    s.span = std::max(s.span, s.raw_size);
    if (s.offset > size) continue;
    s.raw_size = std::min(s.raw_size, size - s.offset);
    sections.push_back(s);
  }
  std::vector<std::string> names;
  for (std::uint32_t i = 0; i < k_imports_max; ++i) {
    const auto at = file_offset(sections, imports_rva + std::uint64_t{i} * k_import_descriptor_bytes);
    std::array<std::byte, k_import_descriptor_bytes> d{};
    if (!at || at->second < d.size() || !source.read(at->first, d)) {
      return fail(fmt::format("import descriptor {} lies outside every section (truncated?)", i));
    }
    const std::uint64_t name_rva = load_le<std::uint32_t>(d, 12);
    if (name_rva == 0 && load_le<std::uint32_t>(d, 16) == 0) break;
    TF_TRY(name, dll_name(source, sections, name_rva));
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace torchfix::binary
