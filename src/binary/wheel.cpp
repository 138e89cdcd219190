#include "binary/wheel.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <fmt/format.h>
#include <memory>
#include <new>

namespace torchfix::binary {
namespace {

struct ArchiveCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};
using Archive = std::unique_ptr<archive, ArchiveCloser>;

constexpr std::size_t k_block_bytes = 1 << 20;
constexpr std::size_t k_magic_bytes = 16;

std::string archive_message(archive* a) {
  const char* text = archive_error_string(a);
  return text ? text : "unknown libarchive error";
}

// Reads up to `size` bytes of the current member into `out`; returns the
// number read, or an error.
Expected<std::size_t> read_fully(archive* a, std::byte* out, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const la_ssize_t got = archive_read_data(a, out + done, size - done);
    if (got < 0) return fail(archive_message(a));
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  return done;
}

// Reads one member whose first bytes are `head` into memory and parses it.
FileKernels read_member(archive* a, archive_entry* entry, std::span<const std::byte> head) {
  FileKernels file;
  if (!archive_entry_size_is_set(entry)) {
    file.error = "member size is not recorded in the archive directory";
    return file;
  }
  const auto declared = static_cast<std::uint64_t>(archive_entry_size(entry));
  if (declared > k_wheel_member_max_bytes) {
    file.error = fmt::format("member is {} bytes, over the {}-byte limit for reading in memory", declared,
                             k_wheel_member_max_bytes);
    return file;
  }
  const auto size = static_cast<std::size_t>(declared);
  // A hostile archive may declare sizes up to the cap: running out of
  // memory is this member's error, not an exception.
  std::unique_ptr<std::byte[]> buffer(new (std::nothrow) std::byte[std::max<std::size_t>(size, 1)]);
  if (!buffer) {
    file.error = fmt::format("cannot allocate {} bytes to read the member", size);
    return file;
  }
  const std::size_t head_size = std::min(head.size(), size);
  std::ranges::copy(head.first(head_size), buffer.get());
  auto rest = read_fully(a, buffer.get() + head_size, size - head_size);
  if (!rest) {
    file.error = "cannot decompress member: " + rest.error().message;
    return file;
  }
  if (head_size + *rest != size) {
    file.error = fmt::format("member holds {} bytes but the archive says {}", head_size + *rest, size);
    return file;
  }
  auto read = read_kernels(std::span<std::byte>(buffer.get(), size));
  if (!read) {
    file.error = read.error().message;
    file.file_bytes = size;
    return file;
  }
  return std::move(*read);
}

}  // namespace

bool is_wheel_path(const std::filesystem::path& path) {
  return path.extension() == ".whl";
}

Expected<std::vector<FileKernels>> read_wheel(const std::filesystem::path& wheel) {
  Archive a(archive_read_new());
  if (!a) return fail("cannot start libarchive (out of memory?)");
  archive_read_support_format_zip(a.get());
  if (archive_read_open_filename(a.get(), wheel.c_str(), k_block_bytes) != ARCHIVE_OK) {
    return fail(fmt::format("cannot open wheel '{}': {}", wheel.string(), archive_message(a.get())));
  }
  std::vector<FileKernels> out;
  archive_entry* entry = nullptr;
  while (true) {
    const int status = archive_read_next_header(a.get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status != ARCHIVE_OK && status != ARCHIVE_WARN) {
      return fail(fmt::format("wheel '{}' is corrupt after {} kernel members: {}", wheel.string(), out.size(),
                              archive_message(a.get())));
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const std::string member = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "?";
    std::array<std::byte, k_magic_bytes> head{};
    auto got = read_fully(a.get(), head.data(), head.size());
    const std::string path = wheel.string() + "!" + member;
    if (!got) {
      out.push_back(unreadable(path, "cannot decompress member: " + got.error().message));
      continue;
    }
    if (!looks_readable(std::span<const std::byte>(head.data(), *got))) continue;
    FileKernels file = read_member(a.get(), entry, std::span<const std::byte>(head.data(), *got));
    file.path = path;
    if (file.has_kernels() || !file.error.empty()) out.push_back(std::move(file));
  }
  return out;
}

}  // namespace torchfix::binary
