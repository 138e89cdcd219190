#include "binary/scan.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "binary/wheel.hpp"

namespace torchfix::binary {
namespace {

namespace fs = std::filesystem;

// Reads the first bytes of a file to decide cheaply whether to parse it;
// FIFOs and devices are never opened blocking, nor read.
bool starts_readable(const fs::path& path) {
  auto file = open_regular_file(path);
  if (!file) return false;
  std::array<std::byte, 16> head{};
  const auto got = ::pread(file->fd, head.data(), head.size(), 0);
  ::close(file->fd);
  return got > 0 && looks_readable(std::span<const std::byte>(head.data(), static_cast<std::size_t>(got)));
}

// Threads reading libraries at once in scan_site_packages.
constexpr unsigned k_scan_threads = 8;

// Reads `path` like read_kernels_file, but with the libelf-free section reader.
FileKernels read_kernels_file_headers(const fs::path& path) {
  FileKernels file;
  auto source = ByteSource::open(path);
  if (!source) {
    file.error = source.error().message;
  } else if (auto read = read_kernels_headers(*source); !read) {
    file.error = read.error().message;
    file.file_bytes = source->size();
  } else {
    file = std::move(*read);
  }
  file.path = path.string();
  return file;
}

// RECORD of torch 2.6 is 1 MB; METADATA's header block a few KB.
constexpr std::size_t k_record_max_bytes = 64u << 20;
constexpr std::size_t k_metadata_max_bytes = 1u << 20;

// Splits `text` into lines without their "\n" or "\r\n".
std::vector<std::string_view> text_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

Expected<std::vector<FileKernels>> read_directory(const fs::path& root) {
  std::vector<FileKernels> out;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return fail("cannot list '" + root.string() + "': " + ec.message());
  std::vector<fs::path> files;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return fail("cannot list '" + root.string() + "': " + ec.message());
    std::error_code type_ec;
    // A folder or file this user cannot read is said, not silently skipped
    // (inspect then exits 2): "no CUDA binaries found" would be a wrong answer.
    if (!it->is_symlink(type_ec) && it->is_directory(type_ec) && ::access(it->path().c_str(), R_OK | X_OK) != 0) {
      out.push_back(unreadable(it->path().string(), "cannot list the folder: permission denied"));
      continue;
    }
    if (it->is_symlink(type_ec) || !it->is_regular_file(type_ec)) continue;
    if (::access(it->path().c_str(), R_OK) != 0) {
      out.push_back(unreadable(it->path().string(), "cannot read the file: permission denied"));
      continue;
    }
    files.push_back(it->path());
  }
  std::ranges::sort(files);
  for (const fs::path& file : files) {
    if (is_wheel_path(file)) {
      auto members = read_wheel(file);
      if (!members) {
        out.push_back(unreadable(file.string(), members.error().message));
      } else {
        std::ranges::move(*members, std::back_inserter(out));
      }
      continue;
    }
    if (!starts_readable(file)) continue;
    FileKernels kernels = read_kernels_file(file);
    if (kernels.has_kernels() || !kernels.error.empty()) out.push_back(std::move(kernels));
  }
  return out;
}

bool is_shared_library(const std::string& path) {
  const auto name = fs::path(path).filename().string();
  return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

// Returns the first field of a RECORD line (CSV; the path may be quoted with
// doubled quotes inside).
std::string record_path(std::string_view line) {
  if (line.empty() || line.front() != '"') return std::string(line.substr(0, line.find(',')));
  std::string out;
  for (std::size_t i = 1; i < line.size(); ++i) {
    if (line[i] == '"') {
      if (i + 1 < line.size() && line[i + 1] == '"') {
        out += '"';
        ++i;
      } else {
        break;
      }
    } else {
      out += line[i];
    }
  }
  return out;
}

// Reads Name and Version from the header block of a METADATA file.
std::pair<std::string, std::string> read_metadata(const fs::path& metadata) {
  std::string name;
  std::string version;
  auto text = read_regular_file(metadata, k_metadata_max_bytes);
  if (!text) return {name, version};
  for (std::string_view line : text_lines(*text)) {
    if (line.empty()) break;
    if (line.starts_with("Name: ")) name = line.substr(6);
    if (line.starts_with("Version: ")) version = line.substr(9);
  }
  return {name, version};
}

}  // namespace

Expected<std::vector<FileKernels>> read_path(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    return fail("cannot read '" + path.string() + "': " + (ec ? ec.message() : "no such file or directory"));
  }
  if (fs::is_directory(status)) return read_directory(path);
  if (is_wheel_path(path)) return read_wheel(path);
  return std::vector<FileKernels>{read_kernels_file(path)};
}

std::vector<PackageKernels> scan_site_packages(const fs::path& site_packages) {
  return scan_site_packages(site_packages, std::chrono::steady_clock::time_point::max()).packages;
}

SiteScan scan_site_packages(const fs::path& site_packages, std::chrono::steady_clock::time_point deadline) {
  SiteScan scan;
  std::error_code ec;
  fs::directory_iterator it(site_packages, ec);
  if (ec) return scan;
  std::vector<fs::path> dist_infos;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code type_ec;
    if (it->path().extension() == ".dist-info" && it->is_directory(type_ec)) dist_infos.push_back(it->path());
  }
  std::ranges::sort(dist_infos);
  // First the list of libraries per distribution (cheap), then the libraries
  // read by a few threads at once (about 30 CUDA libraries of 3 GB in a torch
  // environment), then the results in RECORD order.
  struct Library {
    std::size_t package;
    fs::path file;
    std::optional<BinaryKernels> result;  // set when missing, or read with kernels or an error
  };
  std::vector<PackageKernels> packages;
  std::vector<Library> libraries;
  std::set<fs::path> seen;
  for (const fs::path& dist_info : dist_infos) {
    auto record = read_regular_file(dist_info / "RECORD", k_record_max_bytes);
    if (!record) continue;
    auto [name, version] = read_metadata(dist_info / "METADATA");
    PackageKernels& package = packages.emplace_back();
    package.distribution = name.empty() ? dist_info.stem().string() : name;
    package.version = version;
    for (std::string_view line : text_lines(*record)) {
      const std::string relative = record_path(line);
      if (relative.empty() || !is_shared_library(relative)) continue;
      const fs::path file = (site_packages / relative).lexically_normal();
      if (!seen.insert(file).second) continue;
      Library& library = libraries.emplace_back(Library{packages.size() - 1, file, std::nullopt});
      std::error_code exists_ec;
      if (!fs::exists(file, exists_ec)) {
        library.result = BinaryKernels{
            .path = file.string(),
            .groups = {},
            .error = "listed in " + (dist_info / "RECORD").string() + " but missing (broken or partial install)"};
      }
    }
  }
  std::atomic<std::size_t> next{0};
  std::atomic<bool> cut_short{false};
  auto work = [&] {
    for (std::size_t i = next++; i < libraries.size(); i = next++) {
      Library& library = libraries[i];
      if (library.result) continue;
      if (std::chrono::steady_clock::now() >= deadline) {
        cut_short = true;
        continue;
      }
      if (!starts_readable(library.file)) continue;
      // The libelf-free reader: libelf keeps global state, so it is not
      // called from several threads.
      FileKernels kernels = read_kernels_file_headers(library.file);
      if (kernels.has_kernels() || !kernels.error.empty()) library.result = summarise(kernels);
    }
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, k_scan_threads);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  for (Library& library : libraries) {
    if (library.result) packages[library.package].binaries.push_back(std::move(*library.result));
  }
  for (PackageKernels& package : packages) {
    if (!package.binaries.empty()) scan.packages.push_back(std::move(package));
  }
  scan.cut_short = cut_short;
  std::ranges::sort(scan.packages, {}, &PackageKernels::distribution);
  return scan;
}

}  // namespace torchfix::binary
