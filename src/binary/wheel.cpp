#include "binary/wheel.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <map>
#include <memory>

namespace torchfix::binary {
namespace {

struct ArchiveCloser {
  void operator()(archive* a) const { archive_read_free(a); }
};
using Archive = std::unique_ptr<archive, ArchiveCloser>;

constexpr std::size_t k_block_bytes = 1 << 20;
constexpr std::size_t k_magic_bytes = 16;
// Members up to WheelLimits::in_memory_max are read whole and parsed with
// libelf; larger ones are streamed, so that reading any wheel stays under
// 64 MB (the 903 MB libtorch_cuda.so of a torch wheel used to be held whole).
// A streamed member keeps the bytes just read (WheelLimits::window; names of
// sections sit right before the section table), and remembers every header
// it served so that a second pass, after a read that fell behind the stream,
// needs no seek back.
constexpr std::size_t k_stream_chunk = 256u << 10;
constexpr std::size_t k_memo_max_bytes = 8u << 20;
constexpr int k_max_passes = 4;

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

// Opens the zip on `fd` from its start (libarchive seeks with the central
// directory, so later members are reached without decompressing earlier ones).
Expected<Archive> open_archive(int fd) {
  Archive a(archive_read_new());
  if (!a) return fail("cannot start libarchive (out of memory?)");
  archive_read_support_format_zip(a.get());
  if (::lseek(fd, 0, SEEK_SET) != 0 || archive_read_open_fd(a.get(), fd, k_block_bytes) != ARCHIVE_OK) {
    return fail(archive_message(a.get()));
  }
  return a;
}

// Serves reads of one member from its decompressed stream, forward only,
// with the memory bounds above. A read behind the stream that neither the
// window nor the memo holds fails and sets behind(); the caller then starts
// a new pass over the member with rewind().
class MemberStream {
 public:
  MemberStream(archive* a, std::filesystem::path wheel, std::size_t index, std::uint64_t size,
               std::span<const std::byte> head, std::size_t window)
      : m_archive(a),
        m_wheel(std::move(wheel)),
        m_index(index),
        m_size(size),
        m_window_max(window),
        m_head(head.begin(), head.end()) {
    start();
  }
  MemberStream(const MemberStream&) = delete;
  MemberStream& operator=(const MemberStream&) = delete;
  ~MemberStream() {
    m_reopened.reset();
    if (m_fd >= 0) ::close(m_fd);
  }

  bool read(std::uint64_t offset, std::span<std::byte> out) {
    if (out.empty()) return true;
    if (auto hit = m_memo.upper_bound(offset); hit != m_memo.begin()) {
      --hit;
      if (offset + out.size() <= hit->first + hit->second.size()) {
        std::memcpy(out.data(), hit->second.data() + (offset - hit->first), out.size());
        return true;
      }
    }
    const std::uint64_t window_start = m_pos - m_window.size();
    if (offset < window_start) {
      m_behind = true;
      return false;
    }
    const std::uint64_t end = offset + out.size();
    while (m_pos < end) {
      const la_ssize_t got = archive_read_data(m_current, m_chunk.data(), m_chunk.size());
      if (got <= 0) {
        m_error = got < 0 ? archive_message(m_current) : "the member ends before its declared size";
        return false;
      }
      m_window.insert(m_window.end(), m_chunk.begin(), m_chunk.begin() + got);
      m_pos += static_cast<std::uint64_t>(got);
      if (m_window.size() > 2 * m_window_max + m_chunk.size()) {
        const std::uint64_t keep_from = std::min(offset, m_pos - m_window_max);
        const std::uint64_t first = m_pos - m_window.size();
        if (keep_from > first) m_window.erase(m_window.begin(), m_window.begin() + (keep_from - first));
      }
    }
    std::memcpy(out.data(), m_window.data() + (offset - (m_pos - m_window.size())), out.size());
    if (m_memo_bytes + out.size() + 64 <= k_memo_max_bytes) {
      m_memo.emplace(offset, std::vector<std::byte>(out.begin(), out.end()));
      m_memo_bytes += out.size() + 64;
    }
    return true;
  }

  bool behind() const { return m_behind; }
  const std::string& error() const { return m_error; }

  // Opens the archive again at this member for another pass, through a
  // descriptor of its own: the caller's archive keeps reading its own one.
  // Returns an empty string, or what went wrong.
  std::string rewind() {
    m_reopened.reset();
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    auto file = open_regular_file(m_wheel);
    if (!file) return file.error().message;
    m_fd = file->fd;
    auto reopened = open_archive(m_fd);
    if (!reopened) return reopened.error().message;
    archive_entry* entry = nullptr;
    for (std::size_t i = 0; i <= m_index; ++i) {
      const int status = archive_read_next_header(reopened->get(), &entry);
      if (status != ARCHIVE_OK && status != ARCHIVE_WARN) {
        return "cannot find the member again: " + archive_message(reopened->get());
      }
    }
    m_reopened = std::move(*reopened);
    m_current = m_reopened.get();
    std::array<std::byte, k_magic_bytes> skip{};
    if (auto got = read_fully(m_current, skip.data(), std::min<std::uint64_t>(m_head.size(), m_size)); !got) {
      return got.error().message;
    }
    start();
    return {};
  }

 private:
  void start() {
    m_window.assign(m_head.begin(), m_head.end());
    m_pos = m_head.size();
    m_behind = false;
  }

  archive* m_archive;
  archive* m_current = m_archive;
  std::filesystem::path m_wheel;
  Archive m_reopened;
  int m_fd = -1;
  std::size_t m_index;
  std::uint64_t m_size;
  std::size_t m_window_max;
  std::vector<std::byte> m_head;
  std::vector<std::byte> m_window;
  std::vector<std::byte> m_chunk = std::vector<std::byte>(k_stream_chunk);
  std::uint64_t m_pos = 0;
  std::map<std::uint64_t, std::vector<std::byte>> m_memo;
  std::size_t m_memo_bytes = 0;
  bool m_behind = false;
  std::string m_error;
};

// Reads a member larger than k_member_in_memory_max through MemberStream.
FileKernels read_member_streamed(archive* a, const std::filesystem::path& wheel, std::size_t index, std::uint64_t size,
                                 std::span<const std::byte> head, std::size_t window) {
  FileKernels file;
  MemberStream stream(a, wheel, index, size, head, window);
  for (int pass = 0; pass < k_max_passes; ++pass) {
    const ByteSource source(size,
                            [&](std::uint64_t offset, std::span<std::byte> out) { return stream.read(offset, out); });
    auto read = read_kernels_headers(source);
    if (!stream.behind() || !stream.error().empty()) {
      if (read) return std::move(*read);
      file.error = stream.error().empty() ? read.error().message : "cannot decompress member: " + stream.error();
      file.file_bytes = size;
      return file;
    }
    if (const std::string why = stream.rewind(); !why.empty()) {
      file.error = "cannot read the member again: " + why;
      return file;
    }
  }
  file.error = fmt::format("member needs more than {} passes over its bytes to read its headers", k_max_passes);
  file.file_bytes = size;
  return file;
}

// Reads one member whose first bytes are `head`: whole into memory when it is
// small, else streamed.
FileKernels read_member(archive* a, archive_entry* entry, const std::filesystem::path& wheel, std::size_t index,
                        std::span<const std::byte> head, const WheelLimits& limits) {
  FileKernels file;
  if (!archive_entry_size_is_set(entry)) {
    file.error = "member size is not recorded in the archive directory";
    return file;
  }
  const auto declared = static_cast<std::uint64_t>(archive_entry_size(entry));
  if (declared > limits.in_memory_max) return read_member_streamed(a, wheel, index, declared, head, limits.window);
  const auto size = static_cast<std::size_t>(declared);
  std::vector<std::byte> buffer(std::max<std::size_t>(size, 1));
  const std::size_t head_size = std::min(head.size(), size);
  std::ranges::copy(head.first(head_size), buffer.begin());
  auto rest = read_fully(a, buffer.data() + head_size, size - head_size);
  if (!rest) {
    file.error = "cannot decompress member: " + rest.error().message;
    return file;
  }
  if (head_size + *rest != size) {
    file.error = fmt::format("member holds {} bytes but the archive says {}", head_size + *rest, size);
    return file;
  }
  auto read = read_kernels(std::span<std::byte>(buffer.data(), size));
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

Expected<std::vector<FileKernels>> read_wheel(const std::filesystem::path& wheel, const WheelLimits& limits) {
  // A FIFO named x.whl must not stall the open, and is no wheel.
  auto file = open_regular_file(wheel);
  if (!file) return fail("cannot open wheel: " + file.error().message);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{file->fd};
  auto a = open_archive(file->fd);
  if (!a) return fail(fmt::format("cannot open wheel '{}': {}", wheel.string(), a.error().message));
  std::vector<FileKernels> out;
  archive_entry* entry = nullptr;
  for (std::size_t index = 0;; ++index) {
    const int status = archive_read_next_header(a->get(), &entry);
    if (status == ARCHIVE_EOF) break;
    if (status != ARCHIVE_OK && status != ARCHIVE_WARN) {
      return fail(fmt::format("wheel '{}' is corrupt after {} kernel members: {}", wheel.string(), out.size(),
                              archive_message(a->get())));
    }
    if (archive_entry_filetype(entry) != AE_IFREG) continue;
    const std::string member = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "?";
    std::array<std::byte, k_magic_bytes> head{};
    auto got = read_fully(a->get(), head.data(), head.size());
    const std::string path = wheel.string() + "!" + member;
    if (!got) {
      out.push_back(unreadable(path, "cannot decompress member: " + got.error().message));
      continue;
    }
    if (!looks_readable(std::span<const std::byte>(head.data(), *got))) continue;
    FileKernels kernels =
        read_member(a->get(), entry, wheel, index, std::span<const std::byte>(head.data(), *got), limits);
    kernels.path = path;
    if (kernels.has_kernels() || !kernels.error.empty()) out.push_back(std::move(kernels));
  }
  return out;
}

}  // namespace torchfix::binary
