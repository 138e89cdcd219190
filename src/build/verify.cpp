#include "build/verify.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <set>

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
  return c;
}

std::string names(const std::vector<Arch>& archs) {
  std::string out;
  for (const Arch& a : archs) out += (out.empty() ? "" : " ") + a.name();
  return out.empty() ? "none" : out;
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
        if (::fnmatch(p.c_str(), entry.path().filename().c_str(), FNM_PERIOD) == 0) next.push_back(entry.path());
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

VerifyResult verify_outputs(const BuildPlan& plan) {
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
    r.libraries.push_back(std::move(c));
  };
  for (const Artefact& a : plan.artefacts) {
    for (const auto& path : expand_glob(plan.src_dir, a.glob)) {
      if (a.kind == ArtefactKind::wheel) {
        r.wheels.push_back(path.string());
        auto members = binary::read_wheel(path);
        if (!members) {
          r.problems.push_back(path.string() + ": unreadable wheel: " + members.error().message);
          continue;
        }
        for (const auto& m : *members) consider(m);
      } else {
        consider(binary::read_kernels_file(path));
      }
    }
  }
  if (r.libraries.empty()) {
    std::string globs;
    for (const Artefact& a : plan.artefacts) globs += (globs.empty() ? "" : ", ") + a.glob;
    r.problems.push_back("no CUDA library with kernels found (looked for " + globs + " under " + plan.src_dir.string() +
                         ")");
  }
  return r;
}

}  // namespace torchfix
