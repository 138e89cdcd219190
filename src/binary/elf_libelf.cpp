// read_elf through libelf (TORCHFIX_ELF=ON): libelf reads only the headers
// it needs from a file descriptor.
#include <gelf.h>
#include <libelf.h>

#include <fmt/format.h>
#include <memory>
#include <string_view>

#include "binary/elf.hpp"
#include "binary/elf_format.hpp"

namespace torchfix::binary {
namespace {

using namespace elf_format;

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

std::string libelf_error(std::string_view what) {
  const char* message = elf_errmsg(-1);
  return fmt::format("not a readable ELF file: {} failed ({})", what, message ? message : "unknown");
}

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
  // libelf reads the whole name table into memory: a declared size is not
  // trusted (a sparse file may declare gigabytes).
  if (Elf_Scn* names = elf_getscn(elf, names_index)) {
    GElf_Shdr names_header;
    if (gelf_getshdr(names, &names_header) && names_header.sh_size > k_names_max) {
      return fail(fmt::format("section name table of {} bytes (over {}): not a plausible ELF file",
                              names_header.sh_size, k_names_max));
    }
  }

  ElfInfo info;
  bool arch_specific = false;
  for (Elf_Scn* section = elf_nextscn(elf, nullptr); section; section = elf_nextscn(elf, section)) {
    GElf_Shdr sh;
    if (!gelf_getshdr(section, &sh)) return fail(libelf_error("reading a section header"));
    const char* raw_name = elf_strptr(elf, names_index, sh.sh_name);
    if (!raw_name) continue;
    const std::string_view name(raw_name);
    const bool wanted =
        name == k_fatbin_section || name == k_relfatbin_section || name == ".nv.compat" || is_large_data_section(name);
    if (!wanted || sh.sh_type == SHT_NOBITS) continue;
    // Other data that may hold fatbins: searched only when whole and plain.
    if (is_large_data_section(name) &&
        ((sh.sh_flags & SHF_COMPRESSED) || sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset))
      continue;
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
  if (auto counted = check_section_count(ByteSource(image)); !counted) return std::unexpected(counted.error());
  std::unique_ptr<Elf, ElfCloser> elf(elf_memory(reinterpret_cast<char*>(image.data()), image.size()));
  if (!elf) return fail(libelf_error("elf_memory"));
  return read_sections(elf.get(), ByteSource(image));
}

Expected<ElfInfo> read_elf(const ByteSource& file) {
  if (!libelf_ready()) return fail(libelf_error("elf_version"));
  if (file.fd() < 0) return fail("read_elf: the source has no file descriptor");
  if (auto counted = check_section_count(file); !counted) return std::unexpected(counted.error());
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(file.fd(), ELF_C_READ, nullptr));
  if (!elf) return fail(libelf_error("elf_begin"));
  return read_sections(elf.get(), file);
}

}  // namespace torchfix::binary
