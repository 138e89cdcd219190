// The libelf-free parts of binary/elf.hpp: the magic check and the header
// reader (read_elf_headers); read_elf is in elf_libelf.cpp or, without
// libelf (TORCHFIX_ELF=OFF), elf_headers_only.cpp.
#include "binary/elf.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "binary/elf_format.hpp"

namespace torchfix::binary {

using namespace elf_format;

namespace elf_format {

bool compat_says_arch_specific(std::span<const std::byte> compat) {
  std::size_t pos = 0;
  while (pos + 2 <= compat.size()) {
    const auto format = static_cast<std::uint8_t>(compat[pos]);
    const auto attribute = static_cast<std::uint8_t>(compat[pos + 1]);
    if (format == 1) {
      pos += 2;
    } else if (format == 2 || format == 3) {
      if (pos + 4 > compat.size()) return false;
      if (attribute == k_compat_arch_specific) return compat[pos + 2] != std::byte{0};
      pos += 4;
    } else if (format == 4) {
      if (pos + 4 > compat.size()) return false;
      std::uint16_t size = 0;
      std::memcpy(&size, compat.data() + pos + 2, sizeof size);
      pos += 4 + size;
    } else {
      return false;
    }
  }
  return false;
}

}  // namespace elf_format

bool is_elf(std::span<const std::byte> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), "\177ELF", 4) == 0;
}

namespace {

// One section header, in the fields the reader needs.
struct RawSection {
  std::uint32_t name = 0;
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t link = 0;
};

// Dynamic entries read at most (libtorch_cuda.so has about 60).
constexpr std::uint64_t k_dynamic_max = 4096;

// What the DT_NEEDED entries of a shared library say.
struct NeededLibraries {
  std::optional<int> cudart_major;  // N of a libcudart.so.N; nullopt: a static cudart, or CUDA through torch
  bool links_torch = false;         // libc10.so or a libtorch*.so: built against one torch release's C++ ABI
};

// Returns N of "libcudart.so.N"; nullopt for any other name.
std::optional<int> cudart_major_of(std::string_view name) {
  constexpr std::string_view prefix = "libcudart.so.";
  if (!name.starts_with(prefix) || name.size() == prefix.size()) return std::nullopt;
  int major = 0;
  for (std::size_t c = prefix.size(); c < name.size() && name[c] >= '0' && name[c] <= '9' && major < 1000; ++c) {
    major = major * 10 + (name[c] - '0');
  }
  return major > 0 ? std::optional(major) : std::nullopt;
}

// Returns true for the libraries of torch a C++ extension links
// (torch.utils.cpp_extension adds -lc10 -ltorch -ltorch_cpu -ltorch_python,
// and -lc10_cuda -ltorch_cuda for CUDA: its library_paths/_prepare_ldflags).
bool is_torch_library(std::string_view name) {
  for (std::string_view lib :
       {"libc10.so", "libc10_cuda.so", "libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libtorch_python.so"}) {
    if (name == lib) return true;
  }
  return false;
}

// Reads the DT_NEEDED names in the dynamic section `dynamic` whose string
// table is `strings`; an entry past the end of the file ends the list.
NeededLibraries read_needed(const ByteSource& source, const RawSection& dynamic, const RawSection& strings, bool wide) {
  NeededLibraries out;
  const std::uint64_t file_size = source.size();
  const std::uint64_t entry = wide ? 16 : 8;
  if (dynamic.offset > file_size || dynamic.size > file_size - dynamic.offset) return out;
  if (strings.offset > file_size || strings.size > file_size - strings.offset) return out;
  const std::uint64_t count = std::min(dynamic.size / entry, k_dynamic_max);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::array<std::byte, 16> raw{};
    if (!source.read(dynamic.offset + i * entry, std::span(raw).first(entry))) return out;
    const std::uint64_t tag = wide ? load_le<std::uint64_t>(raw, 0) : load_le<std::uint32_t>(raw, 0);
    const std::uint64_t value = wide ? load_le<std::uint64_t>(raw, 8) : load_le<std::uint32_t>(raw, 4);
    if (tag == k_dt_null) break;
    if (tag != k_dt_needed || value >= strings.size) continue;
    std::array<std::byte, 24> name{};
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(name.size(), strings.size - value));
    if (!source.read(strings.offset + value, std::span(name).first(n))) continue;
    std::string text(reinterpret_cast<const char*>(name.data()), n);
    text = text.substr(0, text.find('\0'));
    if (!out.cudart_major) out.cudart_major = cudart_major_of(text);
    out.links_torch = out.links_torch || is_torch_library(text);
  }
  return out;
}

// The fields of an ELF header this reader needs; shnum and shstrndx are the
// real ones once extended numbering is resolved.
struct ElfHeader {
  bool wide = false;  // ELFCLASS64
  std::uint16_t machine = 0;
  std::uint64_t shoff = 0;
  std::uint32_t e_flags = 0;
  std::uint16_t shentsize = 0;
  std::uint64_t shnum = 0;
  std::uint64_t shstrndx = 0;
  int abi = 0;  // EI_ABIVERSION
  std::size_t entry_size() const { return wide ? 64 : 40; }
};

// Reads the ELF header at the start of `source`; nullopt for a file that
// holds no CUDA this reader can see (big-endian, no section table).
Expected<std::optional<ElfHeader>> read_header(const ByteSource& source) {
  const std::uint64_t file_size = source.size();
  std::array<std::byte, 64> ehdr{};
  if (file_size < 52 || !source.read(0, std::span(ehdr).first(std::min<std::uint64_t>(64, file_size)))) {
    return fail("not a readable ELF file: the header is cut off");
  }
  if (!is_elf(ehdr)) return fail("not an ELF file (bad magic)");
  const auto elf_class = static_cast<std::uint8_t>(ehdr[k_ei_class]);
  if (elf_class != k_elfclass32 && elf_class != k_elfclass64) return fail("not a readable ELF file: unknown ELF class");
  if (static_cast<std::uint8_t>(ehdr[k_ei_data]) != k_elfdata2lsb) return std::nullopt;  // big-endian: no CUDA
  ElfHeader h;
  h.wide = elf_class == k_elfclass64;
  if (h.wide && file_size < 64) return fail("not a readable ELF file: the header is cut off");
  h.machine = load_le<std::uint16_t>(ehdr, 0x12);
  h.shoff = h.wide ? load_le<std::uint64_t>(ehdr, 0x28) : load_le<std::uint32_t>(ehdr, 0x20);
  h.e_flags = load_le<std::uint32_t>(ehdr, h.wide ? 0x30 : 0x24);
  h.shentsize = load_le<std::uint16_t>(ehdr, h.wide ? 0x3A : 0x2E);
  h.shnum = load_le<std::uint16_t>(ehdr, h.wide ? 0x3C : 0x30);
  h.shstrndx = load_le<std::uint16_t>(ehdr, h.wide ? 0x3E : 0x32);
  h.abi = static_cast<std::uint8_t>(ehdr[k_ei_abiversion]);
  if (h.shoff == 0) return std::nullopt;
  if (h.shentsize < h.entry_size()) {
    return fail(fmt::format("not a readable ELF file: section header size {}", h.shentsize));
  }
  return h;
}

// Reads section headers and names of one file; never loads a table whole.
class SectionReader {
 public:
  SectionReader(const ByteSource& source, const ElfHeader& header) : m_source(source), m_h(header) {}

  // Returns section `index`, nullopt when its header is outside the file.
  std::optional<RawSection> section(std::uint64_t index) const {
    const std::uint64_t file_size = m_source.size();
    std::array<std::byte, 64> raw{};
    if (index > (file_size - std::min(file_size, m_h.shoff)) / m_h.shentsize) return std::nullopt;
    if (!m_source.read(m_h.shoff + index * m_h.shentsize, std::span(raw).first(m_h.entry_size()))) return std::nullopt;
    const bool wide = m_h.wide;
    RawSection section;
    section.name = load_le<std::uint32_t>(raw, 0);
    section.type = load_le<std::uint32_t>(raw, 4);
    section.flags = wide ? load_le<std::uint64_t>(raw, 8) : load_le<std::uint32_t>(raw, 8);
    section.offset = wide ? load_le<std::uint64_t>(raw, 0x18) : load_le<std::uint32_t>(raw, 0x10);
    section.size = wide ? load_le<std::uint64_t>(raw, 0x20) : load_le<std::uint32_t>(raw, 0x14);
    section.link = load_le<std::uint32_t>(raw, wide ? 0x28 : 0x18);
    return section;
  }

  // Returns the name at `at` of the name table `names` (up to 16 bytes:
  // names are compared with the three this reader wants); "" when unreadable.
  std::string name(const std::optional<RawSection>& names, std::uint32_t at) const {
    if (!names || at >= names->size) return {};
    std::array<std::byte, 16> raw{};
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(raw.size(), names->size - at));
    if (!m_source.read(names->offset + at, std::span(raw).first(n))) return {};
    std::string text(reinterpret_cast<const char*>(raw.data()), n);
    return text.substr(0, text.find('\0'));
  }

  // Fails with the truncation of a table of `entries` section headers.
  std::unexpected<Error> truncated(std::uint64_t entries) const {
    return fail(
        fmt::format("section header table ({} entries at offset {}) runs past the end of the {}-byte file (truncated?)",
                    entries, m_h.shoff, m_source.size()));
  }

 private:
  const ByteSource& m_source;
  const ElfHeader& m_h;
};

// Resolves extended numbering (the real count and name index in section 0)
// and checks that the section table lies inside the file.
Expected<void> resolve_section_count(const SectionReader& reader, ElfHeader& h, std::uint64_t file_size) {
  if (h.shoff > file_size) return reader.truncated(h.shnum);
  if (h.shnum == 0 || h.shstrndx == k_shn_xindex) {
    auto first = reader.section(0);
    if (!first) return reader.truncated(1);
    if (h.shnum == 0) h.shnum = first->size;
    if (h.shstrndx == k_shn_xindex) h.shstrndx = first->link;
  }
  if (h.shnum > (file_size - h.shoff) / h.shentsize) return reader.truncated(h.shnum);
  if (h.shnum > k_sections_max) return fail(fmt::format("{} sections: not a plausible ELF file", h.shnum));
  return {};
}

// The sections this reader wants (fatbins and .nv.compat, in file order:
// a streamed member is then read front to back) and the dynamic section.
struct WantedSections {
  std::vector<ElfSection> sections;
  std::optional<RawSection> dynamic;
};

Expected<WantedSections> wanted_sections(const SectionReader& reader, const ElfHeader& h, std::uint64_t file_size) {
  std::optional<RawSection> names;
  if (h.shstrndx != k_shn_undef && h.shstrndx < h.shnum) names = reader.section(h.shstrndx);
  if (names && (names->offset > file_size || names->size > file_size - names->offset)) names.reset();
  WantedSections out;
  for (std::uint64_t i = 1; i < h.shnum; ++i) {
    auto section = reader.section(i);
    if (!section) return reader.truncated(h.shnum);
    if (section->type == k_sht_nobits || section->type == k_sht_null) continue;
    if (section->type == k_sht_dynamic && !out.dynamic) out.dynamic = section;
    std::string name = reader.name(names, section->name);
    if (is_large_data_section(name)) {
      // Other data that may hold fatbins: searched only when whole and plain.
      const bool whole = section->offset <= file_size && section->size <= file_size - section->offset;
      if (whole && !(section->flags & k_shf_compressed))
        out.sections.push_back({std::move(name), section->offset, section->size});
      continue;
    }
    if (name != k_fatbin_section && name != k_relfatbin_section && name != ".nv.compat") continue;
    if (section->offset > file_size || section->size > file_size - section->offset) {
      return fail(fmt::format("section {} ({} bytes at offset {}) runs past the end of the {}-byte file (truncated?)",
                              name, section->size, section->offset, file_size));
    }
    if (section->flags & k_shf_compressed) {
      return fail(fmt::format("section {} is ELF-compressed (SHF_COMPRESSED); not supported", name));
    }
    out.sections.push_back({std::move(name), section->offset, section->size});
  }
  std::ranges::stable_sort(out.sections, {}, &ElfSection::offset);
  return out;
}

// Returns a cubin's arch from its e_flags (bits 8..15 from ABI 8, else
// 0..7), `a`-variant when .nv.compat or EF_CUDA_ACCELERATORS says so.
Expected<Arch> cubin_arch(const ElfHeader& h, bool arch_specific) {
  const auto number = h.abi >= k_cubin_abi_new ? (h.e_flags >> 8) & 0xff : h.e_flags & 0xff;
  auto arch = Arch::parse("sm_" + std::to_string(number));
  if (!arch) return fail(fmt::format("cubin e_flags 0x{:x} name no CUDA arch", h.e_flags));
  if (h.abi < k_cubin_abi_new && (h.e_flags & k_ef_cuda_accelerators)) arch_specific = true;
  if (arch_specific) arch->variant = ArchVariant::specific;
  return *arch;
}

}  // namespace

Expected<void> check_section_count(const ByteSource& source) {
  TF_TRY(header, read_header(source));
  if (!header) return {};
  const SectionReader reader(source, *header);
  return resolve_section_count(reader, *header, source.size());
}

Expected<ElfInfo> read_elf_headers(const ByteSource& source) {
  const std::uint64_t file_size = source.size();
  TF_TRY(header, read_header(source));
  if (!header) return ElfInfo{};
  const SectionReader reader(source, *header);
  if (auto counted = resolve_section_count(reader, *header, file_size); !counted)
    return std::unexpected(counted.error());
  TF_TRY(wanted, wanted_sections(reader, *header, file_size));
  ElfInfo info;
  bool arch_specific = false;
  for (ElfSection& section : wanted.sections) {
    if (section.name == ".nv.compat") {
      std::vector<std::byte> compat(static_cast<std::size_t>(std::min<std::uint64_t>(section.size, k_compat_max)));
      arch_specific = source.read(section.offset, compat) && compat_says_arch_specific(compat);
      continue;
    }
    info.fatbin_sections.push_back(std::move(section));
  }
  if (wanted.dynamic && wanted.dynamic->link < header->shnum) {
    if (auto strings = reader.section(wanted.dynamic->link)) {
      const NeededLibraries needed = read_needed(source, *wanted.dynamic, *strings, header->wide);
      info.cudart_major = needed.cudart_major;
      info.links_torch = needed.links_torch;
    }
  }
  if (header->machine == k_em_cuda) {
    TF_TRY(arch, cubin_arch(*header, arch_specific));
    info.cubin_arch = arch;
  }
  return info;
}

namespace {

// The .dynsym table and its names, read whole (they are looked up in no order).
constexpr std::uint64_t k_symbols_max = 256u << 20;

// Reads `section` of `source` whole; nullopt when it lies outside the file or is too large.
std::optional<std::vector<std::byte>> read_whole(const ByteSource& source, const RawSection& section) {
  if (section.offset > source.size() || section.size > source.size() - section.offset) return std::nullopt;
  if (section.size > k_symbols_max) return std::nullopt;
  std::vector<std::byte> bytes(static_cast<std::size_t>(section.size));
  if (!source.read(section.offset, bytes)) return std::nullopt;
  return bytes;
}

}  // namespace

Expected<DynamicSymbols> read_dynamic_symbols(const ByteSource& source) {
  TF_TRY(header, read_header(source));
  if (!header) return DynamicSymbols{};
  const SectionReader reader(source, *header);
  if (auto counted = resolve_section_count(reader, *header, source.size()); !counted)
    return std::unexpected(counted.error());
  std::optional<RawSection> table;
  for (std::uint64_t i = 1; i < header->shnum && !table; ++i) {
    auto section = reader.section(i);
    if (!section) return reader.truncated(header->shnum);
    if (section->type == k_sht_dynsym) table = section;
  }
  if (!table || table->link >= header->shnum) return DynamicSymbols{};
  const auto strings = reader.section(table->link);
  const auto symbols = read_whole(source, *table);
  const auto names = strings ? read_whole(source, *strings) : std::nullopt;
  if (!symbols || !names) {
    return fail(fmt::format(".dynsym ({} bytes at offset {}) or its names run past the end of the {}-byte file",
                            table->size, table->offset, source.size()));
  }
  const std::size_t entry = header->wide ? 24 : 16;
  const std::string_view text(reinterpret_cast<const char*>(names->data()), names->size());
  DynamicSymbols out;
  // Entry 0 is the null symbol. ELF64: name, info, other, shndx at 0, 4, 5, 6;
  // ELF32: name at 0, info, other, shndx at 12, 13, 14.
  for (std::size_t at = entry; at + entry <= symbols->size(); at += entry) {
    const std::span<const std::byte> sym(symbols->data() + at, entry);
    const auto name_at = load_le<std::uint32_t>(sym, 0);
    const auto info = static_cast<std::uint8_t>(sym[header->wide ? 4 : 12]);
    const auto other = static_cast<std::uint8_t>(sym[header->wide ? 5 : 13]);
    const auto shndx = load_le<std::uint16_t>(sym, header->wide ? 6 : 14);
    if (name_at == 0 || name_at >= text.size()) continue;
    const std::string_view name = text.substr(name_at, text.find('\0', name_at) - name_at);
    const int bind = info >> 4;        // STB_GLOBAL 1, STB_WEAK 2, STB_GNU_UNIQUE 10
    const int visibility = other & 3;  // STV_DEFAULT 0, STV_PROTECTED 3
    if (shndx == k_shn_undef) {
      if (bind == 1) out.undefined.emplace_back(name);
    } else if ((bind == 1 || bind == 2 || bind == 10) && (visibility == 0 || visibility == 3)) {
      out.exported.emplace_back(name);
    }
  }
  return out;
}

}  // namespace torchfix::binary
