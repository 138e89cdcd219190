#include "builder/stand_in.hpp"

#include "util/file.hpp"

namespace torchfix {
namespace {

namespace fs = std::filesystem;

// Links every entry of `real` into `mirror` except `skip`; stale links go first.
Expected<void> mirror_folder(const fs::path& real, const fs::path& mirror, const std::string& skip) {
  std::error_code ec;
  fs::create_directories(mirror, ec);
  if (ec) return fail("cannot create " + mirror.string() + ": " + ec.message());
  for (const auto& entry : fs::directory_iterator(mirror, ec)) {
    std::error_code kind;
    if (entry.is_symlink(kind)) fs::remove(entry.path(), kind);
  }
  fs::directory_iterator it(real, ec);
  if (ec) return fail("cannot read the toolkit folder " + real.string() + ": " + ec.message());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name == skip || name == "bin") continue;
    std::error_code link;
    fs::create_symlink(it->path(), mirror / name, link);
    if (link && link != std::errc::file_exists) {
      return fail("cannot link " + (mirror / name).string() + ": " + link.message());
    }
  }
  return {};
}

Expected<void> lay_out_stand_in(const NvccWrap& w) {
  if (auto top = mirror_folder(w.real_cuda_home, w.cuda_home, "bin"); !top) return top;
  if (auto bin = mirror_folder(fs::path(w.real_nvcc).parent_path(), w.cuda_home / "bin", "nvcc"); !bin) return bin;
  std::error_code ec;
  fs::create_symlink(w.program, w.cuda_home / "bin" / "nvcc", ec);
  if (ec) return fail("cannot link " + (w.cuda_home / "bin" / "nvcc").string() + ": " + ec.message());
  return {};
}

}  // namespace

Expected<void> prepare_plan_files(const BuildPlan& plan) {
  if (plan.nvcc_wrap) {
    if (auto laid = lay_out_stand_in(*plan.nvcc_wrap); !laid) return laid;
  }
  // util's writer: never through a planted link, never over a device.
  util::WriteOptions options;
  options.mode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  for (const PlanFile& f : plan.files) {
    std::error_code ec;
    fs::create_directories(f.path.parent_path(), ec);
    if (auto ok = util::write_file(f.path, f.content, options); !ok) return fail("cannot write " + ok.error().message);
  }
  return {};
}

}  // namespace torchfix
