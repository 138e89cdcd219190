#include "binary/scan.hpp"

#include <unistd.h>  // close (MinGW has it too)

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "binary/installs.hpp"
#include "binary/source_os.hpp"
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
  const auto got = read_at(file->fd, head.data(), head.size(), 0);
  ::close(file->fd);
  return got > 0 && looks_readable(std::span<const std::byte>(head.data(), static_cast<std::size_t>(got)));
}

// Threads reading libraries at once in scan_site_packages.
constexpr unsigned k_scan_threads = 8;

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
    if (!it->is_symlink(type_ec) && it->is_directory(type_ec) && !can_read(it->path(), Access::list)) {
      out.push_back(unreadable(it->path().string(), "cannot list the folder: permission denied"));
      continue;
    }
    if (it->is_symlink(type_ec) || !it->is_regular_file(type_ec)) continue;
    if (!can_read(it->path(), Access::read)) {
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

// Says whether `p` is torch itself: the distribution that installs the torch
// import package (pip's "torch", conda's "pytorch"), whose libraries link
// libc10 and libtorch without being extensions of it.
bool is_torch_itself(const PackageKernels& p) {
  return p.distribution == "torch" || p.distribution == "pytorch" ||
         std::ranges::find(p.provenance.owns, "torch") != p.provenance.owns.end();
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
  // First the list of libraries per distribution (cheap), then the libraries
  // read by a few threads at once (about 30 CUDA libraries of 3 GB in a torch
  // environment), then the results in listing order.
  struct Library {
    std::size_t package;
    fs::path file;
    std::optional<BinaryKernels> result;  // set when read with kernels or an error
  };
  std::vector<PackageKernels> packages;
  std::vector<Library> libraries;
  for (Installed& installed : list_installed(site_packages)) {
    packages.push_back(std::move(installed.package));
    for (InstalledLibrary& library : installed.libraries) {
      std::optional<BinaryKernels> missing;
      if (!library.missing.empty()) missing = BinaryKernels{library.path.string(), {}, std::move(library.missing), {}};
      libraries.push_back({packages.size() - 1, std::move(library.path), std::move(missing)});
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
      FileKernels kernels = read_kernels_file(library.file, ElfReader::headers);
      // A library that links torch's C++ libraries is kept without kernels
      // (a CPU-only C++ extension, or one whose kernels are in another .so):
      // it breaks on another torch release, so a fix that moves torch must
      // see it. Before, it was dropped with the other kernel-less libraries.
      // torch's own (libtorch_python.so, torch/_C.so) move with torch itself.
      const bool extension = kernels.links_torch && !is_torch_itself(packages[library.package]);
      if (kernels.has_kernels() || extension || !kernels.error.empty()) {
        library.result = summarise(kernels);
      }
    }
  };
  const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, k_scan_threads);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& thread : pool) thread.join();
  for (Library& library : libraries) {
    if (!library.result) continue;
    PackageKernels& package = packages[library.package];
    // The library's own DT_NEEDED libcudart.so.N wins over a cuNNN tag.
    if (library.result->cudart_major) package.provenance.cuda_major = library.result->cudart_major;
    package.binaries.push_back(std::move(*library.result));
  }
  // Import packages that two distributions install (triton beside
  // pytorch-triton): both are kept, kernels or not, so the doctor sees them.
  std::map<std::string, int> owners;
  for (const PackageKernels& package : packages) {
    for (const std::string& top : package.provenance.owns) ++owners[top];
  }
  for (PackageKernels& package : packages) {
    const bool shared =
        std::ranges::any_of(package.provenance.owns, [&](const std::string& t) { return owners[t] > 1; });
    if (!package.binaries.empty() || shared) scan.packages.push_back(std::move(package));
  }
  scan.cut_short = cut_short;
  std::ranges::sort(scan.packages, {}, &PackageKernels::distribution);
  return scan;
}

}  // namespace torchfix::binary
