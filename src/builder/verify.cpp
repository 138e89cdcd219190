#include "builder/verify.hpp"

#ifndef _WIN32
#include <fnmatch.h>
#endif

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <span>

#include "binary/reader.hpp"
#include "binary/wheel.hpp"

namespace torchfix {
namespace {

LibraryCheck check_file(const binary::FileKernels& file, const std::vector<Arch>& expected) {
  LibraryCheck c;
  c.path = file.path;
  c.error = file.error;
  c.modules = static_cast<int>(file.modules.size());
  std::set<Arch> found;
  for (const binary::Fatbin& module : file.modules) {
    for (const binary::FatbinEntry& e : module.entries) {
      if (e.kind != binary::EntryKind::other) found.insert(e.arch);
    }
  }
  c.images.assign(found.begin(), found.end());
  for (const Arch& want : expected) {
    if (!found.contains(want)) c.missing.push_back(want);
  }
  for (const Arch& have : found) {
    if (std::ranges::find(expected, have) == expected.end()) c.extra.push_back(have);
  }
  return c;
}

constexpr std::string_view k_ar_magic = "!<arch>\n";

// Returns the first bytes of `path` (at most 8); empty when unreadable.
std::string head_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char buffer[8] = {};
  in.read(buffer, sizeof buffer);
  return std::string(buffer, static_cast<std::size_t>(in.gcount()));
}

// Reads the kernels of every ELF member of a static library (an ar archive,
// System V / GNU format as ar(1) writes it) into one FileKernels: a CMake
// project's libkernels.a is a build output like a .so. Members are read one
// at a time, each no larger than the file holds.
binary::FileKernels read_static_library(const std::filesystem::path& path) {
  binary::FileKernels out;
  out.path = path.string();
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  out.file_bytes = ec ? 0 : size;
  std::ifstream in(path, std::ios::binary);
  std::uint64_t offset = k_ar_magic.size();
  while (!ec && offset + 60 <= size) {
    char header[60];
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in.read(header, sizeof header) || header[58] != '`' || header[59] != '\n') {
      out.error = "corrupt ar member header at byte " + std::to_string(offset);
      return out;
    }
    std::uint64_t member = 0;
    const char* end = header + 58;
    const char* digits = header + 48;
    auto [stop, parse] = std::from_chars(digits, end, member);
    if (parse != std::errc() || member > size - offset - 60) {
      out.error = "ar member at byte " + std::to_string(offset) + " runs past the end of the file";
      return out;
    }
    const std::string name = std::string(header, 16).substr(0, std::string(header, 16).find_last_not_of(' ') + 1);
    // "/" and "/SYM64/" are symbol tables, "//" the long-name table.
    if (!name.starts_with('/') && member >= 4) {
      std::vector<std::byte> bytes(member);
      if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(member))) {
        out.error = "cannot read ar member at byte " + std::to_string(offset);
        return out;
      }
      if (binary::looks_readable(bytes)) {
        auto kernels = binary::read_kernels(bytes);
        if (!kernels) {
          out.error = "member " + name + ": " + kernels.error().message;
          return out;
        }
        for (auto& m : kernels->modules) out.modules.push_back(std::move(m));
        for (auto& m : kernels->relocatable) out.relocatable.push_back(std::move(m));
      }
    }
    offset += 60 + member + (member & 1);
  }
  return out;
}

std::string names(const std::vector<Arch>& archs) {
  std::string out;
  for (const Arch& a : archs) out += (out.empty() ? "" : " ") + a.name();
  return out.empty() ? "none" : out;
}

// fnmatch(pattern, name, FNM_PERIOD) for * and ? (MinGW has no fnmatch; a
// '[' class is taken literally there): a leading '.' is matched only by a '.'.
bool name_matches(const std::string& pattern, const std::string& name) {
#ifdef _WIN32
  if (!name.empty() && name[0] == '.' && (pattern.empty() || pattern[0] != '.')) return false;
  std::size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
#else
  return ::fnmatch(pattern.c_str(), name.c_str(), FNM_PERIOD) == 0;
#endif
}

}  // namespace

std::vector<std::filesystem::path> expand_glob(const std::filesystem::path& base, const std::string& glob) {
  std::filesystem::path pattern(glob);
  std::vector<std::filesystem::path> current = {pattern.is_absolute() ? std::filesystem::path("/") : base};
  for (const auto& part : pattern.relative_path()) {
    const std::string p = part.string();
    std::vector<std::filesystem::path> next;
    for (const auto& dir : current) {
      if (p.find_first_of("*?[") == std::string::npos) {
        next.push_back(dir / p);
        continue;
      }
      std::error_code ec;
      for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (name_matches(p, entry.path().filename().string())) next.push_back(entry.path());
      }
    }
    current = std::move(next);
  }
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& f : current) {
    if (std::filesystem::is_regular_file(f, ec)) files.push_back(f);
  }
  std::ranges::sort(files);
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

VerifyResult verify_outputs(const BuildPlan& plan, std::optional<std::filesystem::file_time_type> since) {
  VerifyResult r;
  auto consider = [&](const binary::FileKernels& file) {
    if (!file.error.empty()) {
      r.libraries.push_back(check_file(file, {}));
      r.problems.push_back(file.path + ": unreadable: " + file.error);
      return;
    }
    if (!file.has_kernels()) return;  // host-only libraries carry no kernels by design
    LibraryCheck c = check_file(file, plan.expected_images);
    if (!c.missing.empty()) {
      r.problems.push_back(c.path + ": missing " + names(c.missing) + " (has " + names(c.images) + ")");
    }
    if (plan.nvcc_wrap && !c.extra.empty()) {
      r.problems.push_back(c.path + ": holds " + names(c.extra) +
                           ", which the plan does not build: a compile bypassed torchfix's nvcc stand-in (" +
                           plan.nvcc_wrap->cuda_home.string() + "/bin/nvcc), e.g. a build file that names " +
                           plan.nvcc_wrap->real_nvcc + " directly");
    }
    r.libraries.push_back(std::move(c));
  };
  std::set<std::filesystem::path> seen;
  for (const Artefact& a : plan.artefacts) {
    for (const auto& path : expand_glob(plan.src_dir, a.glob)) {
      if (!seen.insert(path).second) continue;
      std::error_code ec;
      // A wheel left by an earlier build (another version, other archs) is
      // not this build's output: pip writes a new one every time. (A library
      // is kept: an incremental rebuild with nothing to do leaves its time.)
      if (a.kind == ArtefactKind::wheel && since && std::filesystem::last_write_time(path, ec) < *since && !ec) {
        continue;
      }
      if (a.kind == ArtefactKind::wheel) {
        r.wheels.push_back(path.string());
        auto members = binary::read_wheel(path);
        if (!members) {
          r.problems.push_back(path.string() + ": unreadable wheel: " + members.error().message);
          continue;
        }
        for (const auto& m : *members) consider(m);
      } else {
        // Globs over a build folder ({build_dir}/*) also meet CMakeCache.txt
        // and .ninja_log: only ELF files (libraries, executables), fatbins
        // and static libraries are outputs.
        const std::string head = head_of(path);
        if (head.starts_with(k_ar_magic)) {
          consider(read_static_library(path));
        } else if (binary::looks_readable(std::as_bytes(std::span(head.data(), head.size())))) {
          consider(binary::read_kernels_file(path));
        }
      }
    }
  }
  if (r.libraries.empty()) {
    std::string globs;
    for (const Artefact& a : plan.artefacts) globs += (globs.empty() ? "" : ", ") + a.glob;
    r.problems.push_back("no CUDA library, executable or static library with kernels found (looked for " + globs +
                         " under " + plan.src_dir.string() + ")");
  }
  return r;
}

}  // namespace torchfix
