#include "core/facts/ngc_table.hpp"

#include <algorithm>
#include "core/facts/toml_text.hpp"

#include "core/facts/knowledge.hpp"

namespace torchfix {
namespace {

using enum FieldType;
constexpr Need opt = Need::optional;

// NGC's platform words: x86_64 and SBSA (server aarch64) images, and the
// -igpu images for Jetson's integrated GPUs.
constexpr std::string_view k_platforms[] = {"x86_64", "arm64-sbsa", "igpu"};

constexpr Field k_release_fields[] = {{"tag", version},
                                      {"torch", text},
                                      {"cuda", version},
                                      {"cuda_detail", text, opt},
                                      {"platforms", texts, Need::required, k_platforms},
                                      {"doubtful", boolean, opt},
                                      {"doubt", text, opt},
                                      {"source", text}};
constexpr Field k_arch_list_fields[] = {
    {"first", version},  {"last", version},          {"platforms", texts, Need::required, k_platforms},
    {"arch_list", text}, {"doubtful", boolean, opt}, {"doubt", text, opt},
    {"source", text}};
constexpr Field k_first_tag_fields[] = {{"cc", cc}, {"tag", version}, {"source", text}};
constexpr Field k_forward_compat_fields[] = {
    {"cuda_major", integer}, {"drivers", texts}, {"doubtful", boolean, opt}, {"doubt", text, opt}, {"source", text}};
constexpr TableSchema k_release{"[[release]]", k_release_fields};
constexpr TableSchema k_arch_list{"[[arch_list]]", k_arch_list_fields};
constexpr TableSchema k_first_tag{"[[first_tag]]", k_first_tag_fields};
constexpr TableSchema k_forward_compat{"[[forward_compat]]", k_forward_compat_fields};
constexpr Field k_file_fields[] = {{"release", tables, opt, {}, &k_release},
                                   {"arch_list", tables, opt, {}, &k_arch_list},
                                   {"first_tag", tables, opt, {}, &k_first_tag},
                                   {"forward_compat", tables, opt, {}, &k_forward_compat}};
constexpr TableSchema k_file{"recipes/ngc-pytorch.toml", k_file_fields};

// Reads a string that must not be empty (a tag, a source).
Expected<std::string> nonempty(const Row& r, const char* key) {
  TF_TRY(text, r.string(key));
  if (text.empty()) return std::unexpected(r.error(std::string("field '") + key + "' is empty", key));
  return text;
}

// Reads a version of at least two parts, "25.01".
Expected<Version> ngc_version(const Row& r, const char* key) {
  TF_TRY(v, r.version(key));
  if (v.parts().size() < 2) {
    return std::unexpected(
        r.error(std::string("field '") + key + "' = '" + v.str() + "' is not a version like 25.01", key));
  }
  return v;
}

// Reads `doubtful`/`doubt`: a doubtful row must say what is in doubt.
Expected<std::pair<bool, std::string>> doubt(const Row& r) {
  const bool doubtful = r.flag("doubtful");
  std::string why = r.optional_string("doubt").value_or("");
  if (doubtful && why.empty()) return std::unexpected(r.error("doubtful = true needs a 'doubt' saying which value"));
  return std::pair(doubtful, why);
}

Expected<void> check_platforms(const Row& row, const std::vector<std::string>& platforms) {
  for (const std::string& p : platforms) {
    if (std::ranges::find(k_platforms, p) == std::end(k_platforms)) {
      return std::unexpected(row.error("unknown platform '" + p + "' (x86_64, arm64-sbsa or igpu)", "platforms"));
    }
  }
  return {};
}

Expected<NgcRelease> parse_release(const Row& r) {
  NgcRelease out;
  TF_TRY(tag, nonempty(r, "tag"));
  TF_TRY(tag_version, ngc_version(r, "tag"));
  TF_TRY(torch, nonempty(r, "torch"));
  TF_TRY(cuda, ngc_version(r, "cuda"));
  TF_TRY(platforms, r.strings("platforms"));
  TF_TRY(doubt, doubt(r));
  TF_TRY(source, nonempty(r, "source"));
  if (tag.size() != 5 || tag[2] != '.') return std::unexpected(r.error("tag '" + tag + "' is not YY.MM"));
  if (cuda.parts().size() != 2) return std::unexpected(r.error("cuda '" + cuda.str() + "' must be major.minor"));
  if (auto ok = check_platforms(r, platforms); !ok) return std::unexpected(ok.error());
  out.tag = tag;
  out.tag_version = tag_version;
  out.torch = torch;
  out.cuda = cuda;
  out.cuda_detail = r.optional_string("cuda_detail").value_or("");
  out.platforms = platforms;
  out.doubtful = doubt.first;
  out.doubt = doubt.second;
  out.source = source;
  return out;
}

Expected<void> parse_arch_list(const Row& row, NgcTable& t) {
  NgcArchList list;
  TF_TRY(first, ngc_version(row, "first"));
  TF_TRY(last, ngc_version(row, "last"));
  TF_TRY(platforms, row.strings("platforms"));
  TF_TRY(arch_list, nonempty(row, "arch_list"));
  TF_TRY(doubt, doubt(row));
  TF_TRY(source, nonempty(row, "source"));
  if (auto ok = check_platforms(row, platforms); !ok) return ok;
  auto images = images_from_arch_list(arch_list);
  if (!images) return std::unexpected(row.error(images.error().message, "arch_list"));
  list.first = first;
  list.last = last;
  list.platforms = platforms;
  list.arch_list = arch_list;
  list.images = *images;
  list.doubtful = doubt.first;
  list.doubt = doubt.second;
  list.source = source;
  t.arch_lists.push_back(std::move(list));
  return {};
}

Expected<void> parse_first_tag(const Row& row, NgcTable& t) {
  TF_TRY(cc, row.cc("cc"));
  TF_TRY(tag, ngc_version(row, "tag"));
  TF_TRY(source, nonempty(row, "source"));
  t.first_tags.push_back({cc, tag, source});
  return {};
}

Expected<void> parse_forward_compat(const Row& row, NgcTable& t) {
  NgcForwardCompat fc;
  TF_TRY(major, row.integer("cuda_major"));
  TF_TRY(drivers, row.strings("drivers"));
  for (const std::string& d : drivers) {
    auto v = Version::parse(d);
    if (!v || v->major() < 100)
      return std::unexpected(row.error("driver '" + d + "' is not a driver version", "drivers"));
    fc.drivers.push_back(*v);
  }
  TF_TRY(doubt, doubt(row));
  TF_TRY(source, nonempty(row, "source"));
  fc.cuda_major = static_cast<int>(major);
  fc.doubtful = doubt.first;
  fc.doubt = doubt.second;
  fc.source = source;
  t.forward_compat.push_back(std::move(fc));
  return {};
}

}  // namespace

const NgcRelease* NgcTable::release(std::string_view tag) const {
  for (const NgcRelease& r : releases) {
    if (r.tag == tag) return &r;
  }
  return nullptr;
}

const NgcArchList* NgcTable::arch_list(const NgcRelease& release, std::string_view platform) const {
  for (const NgcArchList& list : arch_lists) {
    if (release.tag_version >= list.first && release.tag_version <= list.last &&
        std::ranges::find(list.platforms, platform) != list.platforms.end())
      return &list;
  }
  return nullptr;
}

const NgcForwardCompat* NgcTable::forward_compat_for(int cuda_major) const {
  for (const NgcForwardCompat& row : forward_compat) {
    if (row.cuda_major == cuda_major) return &row;
  }
  return nullptr;
}

Expected<NgcTable> parse_ngc_table(std::string_view text, const std::string& file) {
  TF_TRY(root, parse_checked_toml(text, file, k_file));
  NgcTable t;
  auto rows = for_each_toml_row(root, file, "release", [&](const Row& row) -> Expected<void> {
    TF_TRY(release, parse_release(row));
    if (t.release(release.tag)) return std::unexpected(row.error("tag listed twice"));
    t.releases.push_back(std::move(release));
    return {};
  });
  if (rows) rows = for_each_toml_row(root, file, "arch_list", [&](const Row& row) { return parse_arch_list(row, t); });
  if (rows) rows = for_each_toml_row(root, file, "first_tag", [&](const Row& row) { return parse_first_tag(row, t); });
  if (rows) {
    rows =
        for_each_toml_row(root, file, "forward_compat", [&](const Row& row) { return parse_forward_compat(row, t); });
  }
  if (!rows) return std::unexpected(rows.error());
  std::ranges::sort(t.releases, {}, &NgcRelease::tag_version);
  for (const NgcRelease& release : t.releases) {
    for (const std::string& platform : release.platforms) {
      if (!t.arch_list(release, platform)) {
        return fail(file + ": tag " + release.tag + " on " + platform +
                    " has no [[arch_list]] row; add one (with its source)");
      }
    }
  }
  return t;
}

}  // namespace torchfix
