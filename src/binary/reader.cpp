#include "binary/reader.hpp"

#include <algorithm>
#include <array>
#include <map>

#include "binary/elf.hpp"
#include "binary/pe.hpp"

namespace torchfix::binary {
namespace {

Expected<std::vector<Fatbin>> read_section(const ByteSource& source, const ElfSection& section) {
  auto fatbins = is_large_data_section(section.name) ? find_fatbins(source, section.offset, section.size)
                                                     : parse_fatbins(source, section.offset, section.size);
  if (!fatbins) return fail("section " + section.name + ": " + fatbins.error().message);
  return fatbins;
}

Expected<FileKernels> kernels_from_elf(const ByteSource& source, const ElfInfo& elf) {
  FileKernels file;
  file.format = FileFormat::elf;
  file.cudart_major = elf.cudart_major;
  file.links_torch = elf.links_torch;
  if (elf.cubin_arch) {
    file.format = FileFormat::cubin;
    FatbinEntry entry;
    entry.kind = EntryKind::sass;
    entry.raw_kind = 2;
    entry.arch = *elf.cubin_arch;
    entry.payload_bytes = source.size();
    entry.uncompressed_bytes = source.size();
    file.modules.push_back({0, source.size(), {entry}});
    return file;
  }
  const bool linked =
      std::ranges::any_of(elf.fatbin_sections, [](const ElfSection& s) { return s.name == k_fatbin_section; });
  for (const ElfSection& section : elf.fatbin_sections) {
    TF_TRY(fatbins, read_section(source, section));
    if (linked && section.name == k_relfatbin_section) {
      // Pre-link copies for later device linking; the runtime loads the
      // linked result in .nv_fatbin instead.
      std::ranges::move(fatbins, std::back_inserter(file.relocatable));
      continue;
    }
    // A data section searched for fatbins names the file's kernels only when
    // it held some and no fatbin section came first.
    if (!is_large_data_section(section.name) || (file.section.empty() && !fatbins.empty())) file.section = section.name;
    std::ranges::move(fatbins, std::back_inserter(file.modules));
  }
  return file;
}

// Reads a file whose first bytes are `head`; `read_elf_table` runs libelf
// on it (from memory or from the file descriptor).
template <typename ReadElf>
Expected<FileKernels> read_any(const ByteSource& source, ReadElf&& read_elf_table) {
  std::array<std::byte, 16> head{};
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(source.size(), head.size()));
  if (!source.read(0, std::span(head).first(n))) return fail("cannot read the first bytes");
  const auto first = std::span<const std::byte>(head).first(n);
  Expected<FileKernels> file = FileKernels{};
  if (starts_with_fatbin(first)) {
    TF_TRY(fatbins, parse_fatbins(source, 0, source.size()));
    file->format = FileFormat::fatbin;
    file->modules = std::move(fatbins);
  } else if (is_elf(first)) {
    TF_TRY(elf, read_elf_table());
    file = kernels_from_elf(source, elf);
  } else if (is_pe(first)) {
    TF_TRY(pe, read_pe_headers(source));
    file = kernels_from_elf(source, pe);
    if (file) file->format = FileFormat::pe;
  } else {
    return fail("neither an ELF file, a PE file nor a fatbin (no ELF, MZ or fatbin magic in the first bytes)");
  }
  if (file) file->file_bytes = source.size();
  return file;
}

}  // namespace

bool FileKernels::has_kernels() const {
  return std::ranges::any_of(modules, [](const Fatbin& m) { return !is_kernel_less(m); });
}

FileKernels unreadable(std::string path, std::string error) {
  FileKernels file;
  file.path = std::move(path);
  file.error = std::move(error);
  return file;
}

bool looks_readable(std::span<const std::byte> bytes) {
  return is_elf(bytes) || starts_with_fatbin(bytes) || is_pe(bytes);
}

Expected<FileKernels> read_kernels(std::span<std::byte> image) {
  const ByteSource source(image);
  return read_any(source, [&] { return read_elf(image); });
}

Expected<FileKernels> read_kernels_headers(const ByteSource& source) {
  return read_any(source, [&] { return read_elf_headers(source); });
}

FileKernels read_kernels_file(const std::filesystem::path& path, ElfReader reader) {
  FileKernels file;
  auto source = ByteSource::open(path);
  if (!source) {
    file.error = source.error().message;
  } else if (auto read = reader == ElfReader::headers ? read_kernels_headers(*source)
                                                      : read_any(*source, [&] { return read_elf(*source); });
             !read) {
    file.error = read.error().message;
    file.file_bytes = source->size();
  } else {
    file = std::move(*read);
  }
  file.path = path.string();
  return file;
}

BinaryKernels summarise(const FileKernels& file) {
  std::map<std::vector<Arch>, int> counts;
  bool zstd = false;
  for (const Fatbin& module : file.modules) {
    if (is_kernel_less(module)) continue;
    std::vector<Arch> images;
    for (const FatbinEntry& entry : module.entries) {
      if (entry.kind != EntryKind::other) images.push_back(entry.arch);
      if (entry.kind != EntryKind::other && entry.zstd) zstd = true;
    }
    if (images.empty()) continue;
    std::ranges::sort(images);
    images.erase(std::unique(images.begin(), images.end()), images.end());
    ++counts[images];
  }
  BinaryKernels out;
  out.path = file.path;
  out.error = file.error;
  out.cudart_major = file.cudart_major;
  out.links_torch = file.links_torch;
  out.zstd_fatbins = zstd;
  for (auto& [images, modules] : counts) out.groups.push_back({images, modules});
  std::ranges::stable_sort(out.groups, std::greater{}, &ModuleGroup::modules);
  return out;
}

std::string_view to_string(FileFormat format) {
  switch (format) {
    case FileFormat::elf:
      return "elf";
    case FileFormat::fatbin:
      return "fatbin";
    case FileFormat::cubin:
      return "cubin";
    case FileFormat::pe:
      return "pe";
  }
  return "elf";
}

}  // namespace torchfix::binary
