#pragma once
// Reads the CUDA kernel modules of one file: an ELF (.so, executable, .o), a
// Windows PE (.pyd, .dll), a standalone .fatbin or .cubin, from disk (mmap) or from memory (wheel members).

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "binary/fatbin.hpp"
#include "core/base/error.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix::binary {

/// Names the container a file's kernels were read from.
enum class FileFormat { elf, fatbin, cubin, pe };

/// Holds the kernel modules of one file. `modules` are the fatbins the CUDA
/// runtime loads: those of `.nv_fatbin`, or of `__nv_relfatbin` when the file
/// has no `.nv_fatbin` (a relocatable -rdc=true object). A standalone cubin is
/// one module with one SASS entry.
struct FileKernels {
  std::string path;  // file path, or "wheel.whl!member/path.so"
  FileFormat format = FileFormat::elf;
  std::string section;  // section the modules came from; empty for .fatbin/.cubin
  std::vector<Fatbin> modules;
  std::vector<Fatbin> relocatable;  // __nv_relfatbin fatbins not in `modules` (linked files)
  std::uint64_t file_bytes = 0;     // size of the file, bytes
  std::optional<int> cudart_major;  // N of a DT_NEEDED libcudart.so.N (the libelf-free reader only)
  bool links_torch = false;         // a DT_NEEDED libc10.so or libtorch*.so (the libelf-free reader only)
  std::string error;                // non-empty when the file could not be read

  /// Returns true when the file holds at least one module that is not kernel-less.
  bool has_kernels() const;
};

/// Builds the FileKernels of a file that could not be read.
FileKernels unreadable(std::string path, std::string error);

/// Reads the kernel modules of a file image held in memory (the whole file).
/// The span must be writable (libelf may convert headers in place). Errors
/// describe the corruption (truncated section, bad fatbin header) or say that
/// the bytes are neither ELF, fatbin nor cubin.
Expected<FileKernels> read_kernels(std::span<std::byte> image);

/// Reads the kernel modules of any ByteSource (a wheel member streamed from
/// its archive) with the libelf-free section reader (read_elf_headers),
/// reading only headers, in file order where it can. Errors as read_kernels.
Expected<FileKernels> read_kernels_headers(const ByteSource& source);

/// Names the ELF section reader a file is read with: libelf (read_elf), or
/// the libelf-free one that reads only headers (read_elf_headers). The
/// result does not depend on it.
enum class ElfReader { libelf, headers };

/// Opens `path` and reads its kernel modules with `reader`; never throws.
/// Errors (unreadable file, corrupt contents) are returned in
/// FileKernels::error, with file_bytes set where the file could be opened.
FileKernels read_kernels_file(const std::filesystem::path& path, ElfReader reader = ElfReader::libelf);

/// Returns true when `bytes` starts like a file this reader understands
/// (ELF, PE/COFF or fatbin magic); used to skip other files cheaply.
bool looks_readable(std::span<const std::byte> bytes);

/// Groups modules by their set of images (sorted, duplicates dropped) into
/// the Snapshot form; kernel-less modules (no SASS or PTX images, or only
/// device-link stubs, see is_kernel_less) are left out.
BinaryKernels summarise(const FileKernels& file);

/// Returns "elf", "fatbin", "cubin" or "pe".
std::string_view to_string(FileFormat format);

}  // namespace torchfix::binary
