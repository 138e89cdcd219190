#pragma once
// ELF files through libelf: finds the sections that hold fatbins, and reads
// the target arch of a standalone cubin (an ELF for the GPU, EM_CUDA).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "binary/source.hpp"
#include "core/arch/arch.hpp"
#include "core/base/error.hpp"

namespace torchfix::binary {

/// Names the section that holds loadable fatbins.
inline constexpr std::string_view k_fatbin_section = ".nv_fatbin";
/// Names the section of relocatable device code (-rdc=true objects; in linked
/// programs, the pre-link copies kept for later device linking).
inline constexpr std::string_view k_relfatbin_section = "__nv_relfatbin";

/// Says whether `name` is an x86-64 large-model data section (`.ldata`,
/// `.lrodata`, System V x86-64 psABI 3.5.6): libraries linked with
/// -mcmodel=medium keep big arrays there, and cuFFT keeps most of its fatbins
/// there (libcufft.so.12 of CUDA 13.0: 23,983 fatbins in `.ldata`, one in
/// `.nv_fatbin`). Such a section is searched for fatbins (find_fatbins),
/// not parsed as a fatbin region.
inline bool is_large_data_section(std::string_view name) {
  return name == ".ldata" || name == ".lrodata";
}

/// Locates one section's bytes inside the file.
struct ElfSection {
  std::string name;
  std::uint64_t offset = 0;  // file offset, bytes
  std::uint64_t size = 0;    // bytes
};

/// Describes what the reader needs from an ELF file.
struct ElfInfo {
  std::vector<ElfSection> fatbin_sections;  // `.nv_fatbin` and `__nv_relfatbin`, in file order
  std::optional<Arch> cubin_arch;           // set when the file is itself a cubin (EM_CUDA)
  std::optional<int> cudart_major;          // N of a DT_NEEDED libcudart.so.N (read_elf_headers only)
  bool links_torch = false;                 // a DT_NEEDED libc10.so or libtorch*.so (read_elf_headers only)
};

/// Holds the names in the dynamic symbol table (.dynsym) of a shared library.
struct DynamicSymbols {
  std::vector<std::string> undefined;  // global, not weak, in no section: what it needs from other libraries
  std::vector<std::string> exported;   // defined; global, weak or unique; default or protected visibility
};

/// Returns true when `bytes` starts with the ELF magic.
bool is_elf(std::span<const std::byte> bytes);

/// Checks the section count the ELF header of `source` declares (with the
/// extended count of section 0) before libelf allocates a table for it: at
/// most 2^20 sections, all inside the file (a 4 KB sparse file once made
/// libelf's elf_begin ask for 14 GB: fuzz_size_paths). Errors name the count.
Expected<void> check_section_count(const ByteSource& source);

/// Reads the section table of the ELF image `image` (the whole file, in
/// memory). libelf may convert headers in place, so the span must be
/// writable. Errors name what libelf rejected or the section that runs past
/// the end of the file.
Expected<ElfInfo> read_elf(std::span<std::byte> image);

/// Reads the section table of the open file `file` (a ByteSource with a file
/// descriptor): libelf reads only the headers it needs. Errors as above.
Expected<ElfInfo> read_elf(const ByteSource& file);

/// Reads the section table of any ByteSource (a wheel member streamed from
/// its archive) without libelf: little-endian ELF32/ELF64 only (a big-endian
/// file holds no CUDA kernels and gives an empty ElfInfo). Reads one header
/// at a time, in file order where it can, and allocates nothing sized by a
/// field of the file. Errors as above.
Expected<ElfInfo> read_elf_headers(const ByteSource& source);

/// Reads the dynamic symbol table of `source` without libelf (little-endian
/// ELF32/ELF64; a big-endian file or one without .dynsym gives none). The
/// table and its names are read whole, each at most 256 MiB (libtorch_cpu.so
/// of torch 2.5: about 10 MiB of names). Errors: the header or section table
/// cannot be read, or the table or its names run past the end of the file.
Expected<DynamicSymbols> read_dynamic_symbols(const ByteSource& source);

}  // namespace torchfix::binary
