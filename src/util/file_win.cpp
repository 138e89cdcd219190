// util/file.hpp on Windows (file.cpp and read.cpp are the POSIX side): the
// same bounded reader of regular files and the same atomic replace, through
// CreateFileW and MoveFileExW. Windows has no mode bits, owners or
// protected_symlinks: `mode`, `owner` and `group` are not applied, and a
// link is followed as Windows follows it (making one needs the
// SeCreateSymbolicLinkPrivilege or developer mode).
#include <io.h>
#include <windows.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "util/file.hpp"

namespace torchfix::util {
namespace {

namespace fs = std::filesystem;

std::string mib(std::size_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

// "<what> <path>: <FormatMessage text>" for GetLastError() codes.
std::string win_error(std::string_view what, const fs::path& path, DWORD code) {
  char text[512] = {};
  const DWORD n = FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, code, 0, text,
                                 sizeof text, nullptr);
  std::string message(text, n);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' || message.back() == '.')) {
    message.pop_back();
  }
  if (message.empty()) message = "Windows error " + std::to_string(code);
  return std::string(what) + " " + path.string() + ": " + message;
}

// Closes a HANDLE on every path out of a function.
class Handle {
 public:
  explicit Handle(HANDLE h) : m_h(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }
  HANDLE get() const { return m_h; }
  /// Closes the held handle and holds `h` instead.
  void reset(HANDLE h) {
    close();
    m_h = h;
  }
  bool valid() const { return m_h != INVALID_HANDLE_VALUE && m_h != nullptr; }
  bool close() {
    const bool ok = !valid() || CloseHandle(m_h);
    m_h = INVALID_HANDLE_VALUE;
    return ok;
  }

 private:
  HANDLE m_h;
};

Expected<void> write_handle(HANDLE h, std::string_view bytes, const fs::path& name) {
  while (!bytes.empty()) {
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(bytes.size(), 1u << 30));
    DWORD written = 0;
    if (!WriteFile(h, bytes.data(), chunk, &written, nullptr))
      return fail(win_error("cannot write", name, GetLastError()));
    bytes.remove_prefix(written);
  }
  return {};
}

Expected<std::string> read_handle(HANDLE h, const fs::path& path, const ReadLimits& limits) {
  std::string bytes;
  char buffer[65536];
  for (;;) {
    DWORD n = 0;
    if (!ReadFile(h, buffer, sizeof buffer, &n, nullptr)) {
      const DWORD code = GetLastError();
      if (code == ERROR_BROKEN_PIPE || code == ERROR_HANDLE_EOF) return bytes;  // the writer closed its end
      return fail(win_error("cannot read", path, code));
    }
    if (n == 0) return bytes;
    if (bytes.size() + n > limits.max_bytes) {
      return fail(path.string() + " holds more than " + mib(limits.max_bytes) + ", more than any " +
                  std::string(limits.what) + " torchfix reads; give the right file");
    }
    bytes.append(buffer, n);
  }
}

// A name no other writer picks: CREATE_NEW fails on an existing one (as
// O_EXCL does), and the caller tries the next.
std::wstring temp_name(const fs::path& target, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  const unsigned long long tag = (static_cast<unsigned long long>(GetCurrentProcessId()) << 32) ^ GetTickCount64() ^
                                 (counter.fetch_add(1) * 2654435761u) ^ attempt;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", tag);
  const std::string name = "." + target.filename().string() + std::string(temp_file_marker()) + hex;
  return (target.parent_path() / name).wstring();
}

Expected<void> check_unchanged(const fs::path& target, std::optional<std::string_view> expected, std::size_t hint) {
  const bool exists_now = GetFileAttributesW(target.wstring().c_str()) != INVALID_FILE_ATTRIBUTES;
  auto now = exists_now ? read_file_bytes(target, ReadLimits{hint + 1, Pipes::refuse, "file"})
                        : Expected<std::string>(std::string());
  if (exists_now != expected.has_value() || !now || (exists_now && *now != *expected)) {
    return fail(target.string() + " changed while torchfix was editing it; nothing was written. Run the command again");
  }
  return {};
}

// The regular-file case: a new file beside the target, MoveFileExW over it.
Expected<void> replace_atomically(const fs::path& target, std::string_view bytes, const WriteOptions& o) {
  std::wstring temp;
  Handle file(INVALID_HANDLE_VALUE);
  for (unsigned attempt = 0; attempt < 16 && !file.valid(); ++attempt) {
    temp = temp_name(target, attempt);
    file.reset(CreateFileW(temp.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr));
    if (!file.valid() && GetLastError() != ERROR_FILE_EXISTS) break;
  }
  if (!file.valid()) return fail(win_error("cannot create a temporary file in", target.parent_path(), GetLastError()));
  const fs::path temp_path(temp);
  const auto abort = [&](std::string message) {
    file.close();
    DeleteFileW(temp.c_str());
    return fail(std::move(message));
  };
  if (auto ok = write_handle(file.get(), bytes, temp_path); !ok) return abort(ok.error().message);
  if (!FlushFileBuffers(file.get())) return abort(win_error("cannot write", temp_path, GetLastError()));
  if (!file.close()) return abort(win_error("cannot write", temp_path, GetLastError()));
  if (o.expected) {
    const std::size_t hint = bytes.size() + (*o.expected ? (*o.expected)->size() : 0);
    if (auto same = check_unchanged(target, *o.expected, hint); !same) return abort(same.error().message);
  }
  if (!MoveFileExW(temp.c_str(), target.wstring().c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) {
    return abort(win_error("cannot rename " + temp_path.string() + " over", target, GetLastError()));
  }
  return {};
}

}  // namespace

std::string os_error(std::string_view what, const fs::path& path, int err) {
  return std::string(what) + " " + path.string() + ": " + std::strerror(err);
}

Expected<void> check_link_trust(const fs::path& /*link*/) {
  return {};  // see the file comment: no owners to compare
}

Expected<fs::path> resolve_trusted(const fs::path& start) {
  std::error_code ec;
  fs::path path = fs::absolute(start, ec);
  if (ec) return fail("cannot resolve " + start.string() + ": " + ec.message());
  return path;
}

ReadLimits snapshot_limits() {
  return ReadLimits{8u << 20, Pipes::read, "snapshot"};
}

Expected<std::string> read_file_bytes(const fs::path& path, const ReadLimits& limits) {
  const DWORD attributes = GetFileAttributesW(path.wstring().c_str());
  if (attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY)) {
    return fail(path.string() + " is not a regular file (a folder); give a " + std::string(limits.what) + " file");
  }
  Handle h(CreateFileW(path.wstring().c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                       nullptr, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr));
  if (!h.valid()) return fail(win_error("cannot open", path, GetLastError()));
  const DWORD type = GetFileType(h.get());
  const bool pipe = type == FILE_TYPE_PIPE && limits.pipes == Pipes::read;
  if (type != FILE_TYPE_DISK && !pipe) {
    return fail(path.string() + " is not a regular file (a pipe or device); give a " + std::string(limits.what) +
                " file");
  }
  LARGE_INTEGER size{};
  if (type == FILE_TYPE_DISK && GetFileSizeEx(h.get(), &size) &&
      static_cast<unsigned long long>(size.QuadPart) > limits.max_bytes) {
    return fail(path.string() + " is " + mib(static_cast<std::size_t>(size.QuadPart)) + ", more than any " +
                std::string(limits.what) + " torchfix reads (" + mib(limits.max_bytes) + "); give the right file");
  }
  return read_handle(h.get(), path, limits);
}

std::string_view temp_file_marker() {
  return ".torchfix-";
}

Expected<void> write_fd(int fd, std::string_view bytes, std::string_view name) {
  while (!bytes.empty()) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes.size(), 1u << 30));
    const int n = ::_write(fd, bytes.data(), chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(os_error("cannot write", std::string(name), errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

Expected<void> write_file(const fs::path& target, std::string_view bytes, const WriteOptions& options) {
  auto resolved = resolve_trusted(target);
  if (!resolved) return std::unexpected(resolved.error());
  const DWORD attributes = GetFileAttributesW(resolved->wstring().c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    const DWORD code = GetLastError();
    if (code != ERROR_FILE_NOT_FOUND && code != ERROR_PATH_NOT_FOUND) {
      return fail(win_error("cannot look at", *resolved, code));
    }
    return replace_atomically(*resolved, bytes, options);
  }
  if (attributes & FILE_ATTRIBUTE_DIRECTORY) {
    return fail(resolved->string() + " is a folder; torchfix writes only regular files and devices: give a file name");
  }
  // NUL, CON and named pipes are written in place, as a shell would.
  Handle h(CreateFileW(resolved->wstring().c_str(), GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, nullptr,
                       OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr));
  if (h.valid() && GetFileType(h.get()) != FILE_TYPE_DISK) {
    if (options.expected) return fail(resolved->string() + " is not a regular file; give a regular file");
    return write_handle(h.get(), bytes, *resolved);
  }
  h.close();
  return replace_atomically(*resolved, bytes, options);
}

FileLock::~FileLock() {
  if (m_fd >= 0) ::_close(m_fd);  // closing the handle releases the LockFileEx lock
}

Expected<std::optional<FileLock>> try_lock_file(const fs::path& path) {
  HANDLE h = CreateFileW(path.wstring().c_str(), GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                         nullptr, OPEN_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (h == INVALID_HANDLE_VALUE) return fail(win_error("cannot open", path, GetLastError()));
  OVERLAPPED at{};
  if (!LockFileEx(h, LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &at)) {
    const DWORD code = GetLastError();
    CloseHandle(h);
    if (code == ERROR_LOCK_VIOLATION || code == ERROR_IO_PENDING) return std::optional<FileLock>();
    return fail(win_error("cannot lock", path, code));
  }
  const int fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(h), 0);
  if (fd < 0) {
    CloseHandle(h);
    return fail(os_error("cannot lock", path, errno));
  }
  return std::optional<FileLock>(FileLock(fd));
}

}  // namespace torchfix::util
