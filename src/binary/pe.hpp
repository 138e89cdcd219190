#pragma once
// Windows PE/COFF files (.pyd, .dll, .exe, .obj): finds the sections that hold
// CUDA fatbins without any library, reading one header at a time.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "binary/elf.hpp"
#include "binary/source.hpp"
#include "core/base/error.hpp"

namespace torchfix::binary {

/// Returns true when `bytes` starts like a PE image ("MZ", a DOS stub that
/// points at the PE header) or a COFF object of x86-64 or ARM64.
bool is_pe(std::span<const std::byte> bytes);

/// Reads the section table of the PE image or COFF object in `source` and
/// returns its fatbin sections under the ELF names (`.nv_fatbin`,
/// `__nv_relfatbin`): images keep 8-byte names, so MSVC's link.exe writes
/// `.nv_fatb` (measured: nvjpeg64_12.dll of nvidia-nvjpeg-cu12 12.4.0.76,
/// win_amd64); objects may use `/N` long names from the COFF string table.
/// A section's bytes are min(VirtualSize, SizeOfRawData) at PointerToRawData
/// (the rest is the linker's zero padding to the file alignment). Every field
/// is bounds-checked against the file size and nothing is allocated by a
/// field of the file. A DOS program without a PE header gives no sections.
/// Errors: a header cut off, or a fatbin section that runs past the end.
Expected<ElfInfo> read_pe_headers(const ByteSource& source);

/// Returns the DLL names of the import directory (data directory 1) of the
/// PE image in `source`, in file order, as written ("KERNEL32.dll",
/// "VCRUNTIME140_1.dll"): the DLLs Windows' loader loads with it. Delay-load
/// imports are not listed (they load on first call). Every RVA is mapped
/// through the section table and bounds-checked against the file; at most
/// 4096 descriptors and 256 bytes per name are read. An image without an
/// import directory gives an empty list. Errors: not a PE image (a COFF
/// object or a DOS program), a header cut off, or a descriptor or name
/// outside every section.
Expected<std::vector<std::string>> read_pe_imports(const ByteSource& source);

}  // namespace torchfix::binary
