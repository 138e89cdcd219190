#include "binary/elf.hpp"

#include <gelf.h>
#include <libelf.h>

#include <fmt/format.h>
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

namespace torchfix::binary {
namespace {

constexpr int k_em_cuda = 190;
// Cubins with ELF ABI version >= 8 (CUDA 12.8+) keep the arch in e_flags bits
// 8..15; older ones in bits 0..7.
constexpr int k_cubin_abi_new = 8;
// .nv.compat holds attribute records: u8 format, u8 attribute, then a value.
// Formats (as in .nv.info): 1 no value, 2 byte, 3 half-word (both in a
// 4-byte record), 4 sized (u16 size, then the bytes). Attribute 9 = 1 marks an
// arch-specific (`a`) cubin (observed with nvcc 13.0 for sm_90a/sm_100a/sm_120a).
constexpr std::uint8_t k_compat_arch_specific = 9;
// Older cubins (ABI < 8) mark arch-specific code with EF_CUDA_ACCELERATORS.
constexpr std::uint32_t k_ef_cuda_accelerators = 0x800;
// .nv.compat is a few dozen bytes; read at most this much of it.
constexpr std::uint64_t k_compat_max = 4096;

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

std::string libelf_error(std::string_view what) {
  const char* message = elf_errmsg(-1);
  return fmt::format("not a readable ELF file: {} failed ({})", what, message ? message : "unknown");
}

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

}  // namespace

bool is_elf(std::span<const std::byte> bytes) {
  return bytes.size() >= SELFMAG && std::memcmp(bytes.data(), ELFMAG, SELFMAG) == 0;
}

namespace {

bool libelf_ready() {
  static const bool initialised = elf_version(EV_CURRENT) != EV_NONE;
  return initialised;
}

// Walks the section table of `elf`, whose bytes `source` reads.
Expected<ElfInfo> read_sections(Elf* elf, const ByteSource& source) {
  const std::uint64_t file_size = source.size();
  if (elf_kind(elf) != ELF_K_ELF) return fail("not an ELF file (bad magic or an archive)");
  GElf_Ehdr header;
  if (!gelf_getehdr(elf, &header)) return fail(libelf_error("reading the ELF header"));
  // libelf quietly reports no sections when the table lies past the end; a
  // truncated library must be an error, not "no kernels".
  const std::uint64_t table_entries = header.e_shnum != 0 ? header.e_shnum : (header.e_shoff != 0 ? 1 : 0);
  if (header.e_shoff > file_size ||
      (header.e_shentsize != 0 && table_entries > (file_size - header.e_shoff) / header.e_shentsize)) {
    return fail(
        fmt::format("section header table ({} entries at offset {}) runs past the end of the "
                    "{}-byte file (truncated?)",
                    table_entries, header.e_shoff, file_size));
  }
  std::size_t names_index = 0;
  if (elf_getshdrstrndx(elf, &names_index) != 0) return fail(libelf_error("finding section names"));

  ElfInfo info;
  bool arch_specific = false;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section; section = elf_nextscn(elf, section)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(section, &sh)) return fail(libelf_error("reading a section header"));
    const char* raw_name = elf_strptr(elf, names_index, sh.sh_name);
    if (!raw_name) continue;
    const std::string_view name(raw_name);
    const bool wanted = name == k_fatbin_section || name == k_relfatbin_section || name == ".nv.compat";
    if (!wanted || sh.sh_type == SHT_NOBITS) continue;
    if (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset) {
      return fail(
          fmt::format("section {} ({} bytes at offset {}) runs past the end of the {}-byte "
                      "file (truncated?)",
                      name, sh.sh_size, sh.sh_offset, file_size));
    }
    if (sh.sh_flags & SHF_COMPRESSED) {
      return fail(fmt::format("section {} is ELF-compressed (SHF_COMPRESSED); not supported", name));
    }
    if (name == ".nv.compat") {
      std::vector<std::byte> compat(static_cast<std::size_t>(std::min<std::uint64_t>(sh.sh_size, k_compat_max)));
      arch_specific = source.read(sh.sh_offset, compat) && compat_says_arch_specific(compat);
      continue;
    }
    info.fatbin_sections.push_back({std::string(name), sh.sh_offset, sh.sh_size});
  }

  if (header.e_machine == k_em_cuda) {
    const int abi = header.e_ident[EI_ABIVERSION];
    const auto number = abi >= k_cubin_abi_new ? (header.e_flags >> 8) & 0xff : header.e_flags & 0xff;
    auto arch = Arch::parse("sm_" + std::to_string(number));
    if (!arch) return fail(fmt::format("cubin e_flags 0x{:x} name no CUDA arch", header.e_flags));
    if (abi < k_cubin_abi_new && (header.e_flags & k_ef_cuda_accelerators)) arch_specific = true;
    if (arch_specific) arch->variant = ArchVariant::specific;
    info.cubin_arch = *arch;
  }
  return info;
}

}  // namespace

Expected<ElfInfo> read_elf(std::span<std::byte> image) {
  if (!libelf_ready()) return fail(libelf_error("elf_version"));
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(reinterpret_cast<char*>(image.data()), image.size()));
  if (!elf) return fail(libelf_error("elf_memory"));
  return read_sections(elf.get(), ByteSource(image));
}

Expected<ElfInfo> read_elf(const ByteSource& file) {
  if (!libelf_ready()) return fail(libelf_error("elf_version"));
  if (file.fd() < 0) return fail("read_elf: the source has no file descriptor");
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(file.fd(), ELF_C_READ, nullptr));
  if (!elf) return fail(libelf_error("elf_begin"));
  return read_sections(elf.get(), file);
}

}  // namespace torchfix::binary
