// libFuzzer target: the ELF + fatbin reader and the PE import reader on arbitrary bytes. Any crash,
// hang, out-of-bounds read (ASan) or undefined behaviour (UBSan) is a bug;
// errors returned as values are the expected outcome for garbage.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "binary/elf.hpp"
#include "binary/fatbin.hpp"
#include "binary/pe.hpp"
#include "binary/reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A private, writable copy: libelf may convert headers in place, as it may
  // in the private file mapping of the real reader.
  std::vector<std::byte> image(size);
  for (std::size_t i = 0; i < size; ++i) image[i] = static_cast<std::byte>(data[i]);
  if (auto kernels = torchfix::binary::read_kernels(image)) {
    const auto summary = torchfix::binary::summarise(*kernels);
    (void)summary;
  }
  // The libelf-free section reader that wheel members are streamed through.
  (void)torchfix::binary::read_kernels_headers(torchfix::binary::ByteSource(std::span<const std::byte>(image)));
  // The .dynsym reader of the torch-symbol check (binary/torch_symbols.cpp).
  (void)torchfix::binary::read_dynamic_symbols(torchfix::binary::ByteSource(std::span<const std::byte>(image)));
  // The PE import directory of a Windows DLL whose load failed (binary/pe.cpp).
  (void)torchfix::binary::read_pe_imports(torchfix::binary::ByteSource(std::span<const std::byte>(image)));
  // The container parser alone, also on regions that do not start at a fatbin.
  (void)torchfix::binary::parse_fatbins(std::span<const std::byte>(image), 0);
  return 0;
}
