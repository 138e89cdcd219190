#pragma once
// A minimal x86-64 PE image / COFF object writer for tests: real nvcc fatbins
// wrapped the way link.exe lays out a .pyd/.dll, so the PE reader and the
// doctor can be tried on Windows extension binaries on a Linux machine.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace torchfix::testing::pe {

/// Holds one section: its name and raw bytes.
struct Section {
  std::string name;  // up to 8 bytes in an image; longer ones become "/N" in an object
  std::vector<std::byte> bytes;
};

inline void put16(std::vector<std::byte>& out, std::size_t at, std::uint16_t v) {
  std::memcpy(out.data() + at, &v, 2);
}
inline void put32(std::vector<std::byte>& out, std::size_t at, std::uint32_t v) {
  std::memcpy(out.data() + at, &v, 4);
}

// Says whether make_pe writes an image (DOS stub, "PE\0\0", PE32+ optional
// header, 512-byte file alignment) or a COFF object (long names in a string table).
enum class PeKind { image, object };

// Returns an `.idata` section at RVA `rva` whose import directory names
// `dlls`: one 20-byte descriptor per DLL (Name and FirstThunk set), the
// zero descriptor that ends the list, then the NUL-terminated names.
inline Section import_section(const std::vector<std::string>& dlls, std::size_t rva) {
  std::vector<std::byte> bytes(20 * (dlls.size() + 1));
  for (std::size_t i = 0; i < dlls.size(); ++i) {
    put32(bytes, 20 * i + 12, static_cast<std::uint32_t>(rva + bytes.size()));
    put32(bytes, 20 * i + 16, static_cast<std::uint32_t>(rva));  // any non-zero thunk RVA
    for (char c : dlls[i]) bytes.push_back(static_cast<std::byte>(c));
    bytes.push_back(std::byte{0});
  }
  return {".idata", bytes};
}

// Writes a minimal x86-64 PE image or COFF object holding `sections`, laid
// out as link.exe does: raw data padded to the file alignment, VirtualSize
// the real size (images only). An image's sections are mapped at RVA = file
// offset; `imports` (images only) adds an `.idata` section and points data
// directory 1 (the import table) at it.
inline std::vector<std::byte> make_pe(std::vector<Section> sections, PeKind kind,
                                      const std::vector<std::string>& imports = {}) {
  const bool image = kind == PeKind::image;
  if (image && !imports.empty()) {
    std::size_t at = (0x44 + 20 + 240 + 40 * (sections.size() + 1) + 511) / 512 * 512;
    for (const Section& s : sections) at += (s.bytes.size() + 511) / 512 * 512;
    sections.push_back(import_section(imports, at));
  }
  const std::size_t coff = image ? 0x44 : 0;
  const std::size_t optional = image ? 240 : 0;
  const std::size_t table = coff + 20 + optional;
  const std::size_t align = image ? 512 : 4;
  auto round = [&](std::size_t n) { return (n + align - 1) / align * align; };
  std::size_t data = round(table + 40 * sections.size());
  std::vector<std::byte> out(data);
  if (image) {
    out[0] = std::byte{'M'};
    out[1] = std::byte{'Z'};
    put32(out, 0x3C, 0x40);
    std::memcpy(out.data() + 0x40, "PE\0\0", 4);
    put16(out, table - optional, 0x20b);     // PE32+
    put32(out, table - optional + 108, 16);  // NumberOfRvaAndSizes
  }
  put16(out, coff, 0x8664);
  put16(out, coff + 2, static_cast<std::uint16_t>(sections.size()));
  put16(out, coff + 16, static_cast<std::uint16_t>(optional));
  std::string strings(4, '\0');
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& s = sections[i];
    const std::size_t header = table + 40 * i;
    std::string name = s.name;
    if (name.size() > 8) {
      name = "/" + std::to_string(strings.size());
      strings += s.name + '\0';
    }
    std::memcpy(out.data() + header, name.data(), name.size());
    if (image) put32(out, header + 8, static_cast<std::uint32_t>(s.bytes.size()));
    put32(out, header + 16, static_cast<std::uint32_t>(round(s.bytes.size())));
    put32(out, header + 20, static_cast<std::uint32_t>(out.size()));
    if (image) put32(out, header + 12, static_cast<std::uint32_t>(out.size()));  // VirtualAddress
    if (image && s.name == ".idata" && !imports.empty()) {
      put32(out, table - optional + 120, static_cast<std::uint32_t>(out.size()));
      put32(out, table - optional + 124, static_cast<std::uint32_t>(20 * (imports.size() + 1)));
    }
    out.insert(out.end(), s.bytes.begin(), s.bytes.end());
    out.resize(round(out.size()));
  }
  if (!image) {
    put32(out, coff + 8, static_cast<std::uint32_t>(out.size()));  // no symbols: the string table follows
    const std::uint32_t length = static_cast<std::uint32_t>(strings.size());
    std::memcpy(strings.data(), &length, 4);
    for (char c : strings) out.push_back(static_cast<std::byte>(c));
  }
  return out;
}

/// Returns the bytes of a PE image (a .pyd/.dll) whose `.nv_fatb` section
/// holds `fatbin`, the section MSVC-linked CUDA binaries keep their kernels in.
inline std::string pyd_with_fatbin(const std::string& fatbin) {
  std::vector<std::byte> bytes(fatbin.size());
  std::memcpy(bytes.data(), fatbin.data(), fatbin.size());
  const auto image = make_pe({{".nv_fatb", bytes}}, PeKind::image);
  return std::string(reinterpret_cast<const char*>(image.data()), image.size());
}

}  // namespace torchfix::testing::pe
