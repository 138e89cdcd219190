#include "binary/reader.hpp"

#include <algorithm>
#include <map>

#include "binary/elf.hpp"
#include "binary/mapped_file.hpp"

namespace torchfix::binary {
namespace {

Expected<std::vector<Fatbin>> read_section(std::span<std::byte> image, const ElfSection& section) {
  auto bytes = image.subspan(section.offset, section.size);
  auto fatbins = parse_fatbins(bytes, section.offset);
  if (!fatbins) return fail("section " + section.name + ": " + fatbins.error().message);
  return fatbins;
}

Expected<FileKernels> read_elf_kernels(std::span<std::byte> image) {
  TF_TRY(elf, read_elf(image));
  FileKernels file;
  file.format = FileFormat::elf;
  if (elf.cubin_arch) {
    file.format = FileFormat::cubin;
    FatbinEntry entry;
    entry.kind = EntryKind::sass;
    entry.raw_kind = 2;
    entry.arch = *elf.cubin_arch;
    entry.payload_bytes = image.size();
    entry.uncompressed_bytes = image.size();
    file.modules.push_back({0, image.size(), {entry}});
    return file;
  }
  const bool linked = std::ranges::any_of(
      elf.fatbin_sections, [](const ElfSection& s) { return s.name == k_fatbin_section; });
  for (const ElfSection& section : elf.fatbin_sections) {
    TF_TRY(fatbins, read_section(image, section));
    if (linked && section.name == k_relfatbin_section) {
      // Pre-link copies for later device linking; the runtime loads the
      // linked result in .nv_fatbin instead.
      file.relocatable_fatbins += static_cast<int>(fatbins.size());
      continue;
    }
    file.section = section.name;
    std::ranges::move(fatbins, std::back_inserter(file.modules));
  }
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
  return is_elf(bytes) || starts_with_fatbin(bytes);
}

Expected<FileKernels> read_kernels(std::span<std::byte> image) {
  Expected<FileKernels> file = fail("");
  if (starts_with_fatbin(image)) {
    auto fatbins = parse_fatbins(image, 0);
    if (!fatbins) return std::unexpected(fatbins.error());
    FileKernels out;
    out.format = FileFormat::fatbin;
    out.modules = std::move(*fatbins);
    file = std::move(out);
  } else if (is_elf(image)) {
    file = read_elf_kernels(image);
  } else {
    return fail("neither an ELF file nor a fatbin (no ELF or fatbin magic in the first bytes)");
  }
  if (file) file->file_bytes = image.size();
  return file;
}

FileKernels read_kernels_file(const std::filesystem::path& path) {
  FileKernels file;
  auto mapped = MappedFile::open(path);
  if (!mapped) {
    file.error = mapped.error().message;
  } else if (auto read = read_kernels(mapped->bytes()); !read) {
    file.error = read.error().message;
    file.file_bytes = mapped->bytes().size();
  } else {
    file = std::move(*read);
  }
  file.path = path.string();
  return file;
}

BinaryKernels summarise(const FileKernels& file) {
  std::map<std::vector<Arch>, int> counts;
  for (const Fatbin& module : file.modules) {
    if (is_kernel_less(module)) continue;
    std::vector<Arch> images;
    for (const FatbinEntry& entry : module.entries) {
      if (entry.kind != EntryKind::other) images.push_back(entry.arch);
    }
    if (images.empty()) continue;
    std::ranges::sort(images);
    images.erase(std::unique(images.begin(), images.end()), images.end());
    ++counts[images];
  }
  BinaryKernels out;
  out.path = file.path;
  out.error = file.error;
  for (auto& [images, modules] : counts) out.groups.push_back({images, modules});
  std::ranges::stable_sort(out.groups, std::greater{}, &ModuleGroup::modules);
  return out;
}

std::string_view to_string(FileFormat format) {
  switch (format) {
    case FileFormat::elf: return "elf";
    case FileFormat::fatbin: return "fatbin";
    case FileFormat::cubin: return "cubin";
  }
  return "elf";
}

}  // namespace torchfix::binary
