// read_elf without libelf (TORCHFIX_ELF=OFF, the Windows build for now): the
// same bounds-checked header reader that reads wheel members
// (read_elf_headers), on the whole image or the open file.
#include "binary/elf.hpp"

namespace torchfix::binary {

Expected<ElfInfo> read_elf(std::span<std::byte> image) {
  return read_elf_headers(ByteSource(image));
}

Expected<ElfInfo> read_elf(const ByteSource& file) {
  return read_elf_headers(file);
}

}  // namespace torchfix::binary
