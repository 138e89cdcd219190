#include "core/ngc_table.hpp"

#include <algorithm>
#include "core/toml_text.hpp"

#include "core/knowledge.hpp"

namespace torchfix {
namespace {

// A row of one array of tables, with its file and line for errors.
struct Row {
  const toml::table& table;
  const std::string& file;
  const char* array;

  Error error(const std::string& what) const {
    return Error{file + ":" + std::to_string(table.source().begin.line) + " ([[" + array + "]]): " + what};
  }
  Expected<std::string> string(const char* key) const {
    if (auto v = table[key].value<std::string>(); v && !v->empty()) return *v;
    return std::unexpected(error(std::string("missing or empty string field '") + key + "'"));
  }
  Expected<Version> version(const char* key) const {
    TF_TRY(text, string(key));
    auto v = Version::parse(text);
    if (!v || v->parts().size() < 2) {
      return std::unexpected(error(std::string("field '") + key + "' = '" + text + "' is not a version like 25.01"));
    }
    return *v;
  }
  Expected<std::vector<std::string>> strings(const char* key) const {
    const toml::array* list = table[key].as_array();
    if (!list || list->empty()) return std::unexpected(error(std::string("missing or empty list '") + key + "'"));
    std::vector<std::string> out;
    for (const auto& item : *list) {
      auto s = item.value<std::string>();
      if (!s) return std::unexpected(error(std::string("list '") + key + "' must hold strings"));
      out.push_back(*s);
    }
    return out;
  }
  // Reads `doubtful`/`doubt`: a doubtful row must say what is in doubt.
  Expected<std::pair<bool, std::string>> doubt() const {
    const bool doubtful = table["doubtful"].value_or(false);
    std::string why = table["doubt"].value_or(std::string());
    if (doubtful && why.empty()) return std::unexpected(error("doubtful = true needs a 'doubt' saying which value"));
    return std::pair(doubtful, why);
  }
};

constexpr std::string_view k_platforms[] = {"x86_64", "arm64-sbsa", "igpu"};

Expected<void> check_platforms(const Row& row, const std::vector<std::string>& platforms) {
  for (const std::string& p : platforms) {
    if (std::ranges::find(k_platforms, p) == std::end(k_platforms)) {
      return std::unexpected(row.error("unknown platform '" + p + "' (x86_64, arm64-sbsa or igpu)"));
    }
  }
  return {};
}

// Visits the rows of one array of tables (core/toml_text.hpp).
template <typename F>
Expected<void> for_each_row(const toml::table& root, const std::string& file, const char* name, F&& parse_row) {
  return for_each_toml_row<Row>(root, file, name, std::forward<F>(parse_row));
}

Expected<NgcRelease> parse_release(const Row& r) {
  NgcRelease out;
  TF_TRY(tag, r.string("tag"));
  TF_TRY(tag_version, r.version("tag"));
  TF_TRY(torch, r.string("torch"));
  TF_TRY(cuda, r.version("cuda"));
  TF_TRY(platforms, r.strings("platforms"));
  TF_TRY(doubt, r.doubt());
  TF_TRY(source, r.string("source"));
  if (tag.size() != 5 || tag[2] != '.') return std::unexpected(r.error("tag '" + tag + "' is not YY.MM"));
  if (cuda.parts().size() != 2) return std::unexpected(r.error("cuda '" + cuda.str() + "' must be major.minor"));
  if (auto ok = check_platforms(r, platforms); !ok) return std::unexpected(ok.error());
  out.tag = tag;
  out.tag_version = tag_version;
  out.torch = torch;
  out.cuda = cuda;
  out.cuda_detail = r.table["cuda_detail"].value_or(std::string());
  out.platforms = platforms;
  out.doubtful = doubt.first;
  out.doubt = doubt.second;
  out.source = source;
  return out;
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
  auto parsed = parse_toml_text(text, file);
  if (!parsed) return std::unexpected(parsed.error());
  const toml::table& root = *parsed;
  NgcTable t;
  if (auto r = for_each_row(root, file, "release",
                            [&](const Row& row) -> Expected<void> {
                              TF_TRY(release, parse_release(row));
                              if (t.release(release.tag)) return std::unexpected(row.error("tag listed twice"));
                              t.releases.push_back(std::move(release));
                              return {};
                            });
      !r)
    return std::unexpected(r.error());
  if (auto r = for_each_row(root, file, "arch_list",
                            [&](const Row& row) -> Expected<void> {
                              NgcArchList list;
                              TF_TRY(first, row.version("first"));
                              TF_TRY(last, row.version("last"));
                              TF_TRY(platforms, row.strings("platforms"));
                              TF_TRY(arch_list, row.string("arch_list"));
                              TF_TRY(doubt, row.doubt());
                              TF_TRY(source, row.string("source"));
                              if (auto ok = check_platforms(row, platforms); !ok) return ok;
                              auto images = images_from_arch_list(arch_list);
                              if (!images) return std::unexpected(row.error(images.error().message));
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
                            });
      !r)
    return std::unexpected(r.error());
  if (auto r = for_each_row(root, file, "first_tag",
                            [&](const Row& row) -> Expected<void> {
                              TF_TRY(cc_text, row.string("cc"));
                              auto cc = ComputeCapability::parse(cc_text);
                              if (!cc) return std::unexpected(row.error(cc.error().message));
                              TF_TRY(tag, row.version("tag"));
                              TF_TRY(source, row.string("source"));
                              t.first_tags.push_back({*cc, tag, source});
                              return {};
                            });
      !r)
    return std::unexpected(r.error());
  if (auto r = for_each_row(root, file, "forward_compat",
                            [&](const Row& row) -> Expected<void> {
                              NgcForwardCompat fc;
                              auto major = row.table["cuda_major"].value<std::int64_t>();
                              if (!major) return std::unexpected(row.error("missing integer field 'cuda_major'"));
                              TF_TRY(drivers, row.strings("drivers"));
                              for (const std::string& d : drivers) {
                                auto v = Version::parse(d);
                                if (!v || v->major() < 100)
                                  return std::unexpected(row.error("driver '" + d + "' is not a driver version"));
                                fc.drivers.push_back(*v);
                              }
                              TF_TRY(doubt, row.doubt());
                              TF_TRY(source, row.string("source"));
                              fc.cuda_major = static_cast<int>(*major);
                              fc.doubtful = doubt.first;
                              fc.doubt = doubt.second;
                              fc.source = source;
                              t.forward_compat.push_back(std::move(fc));
                              return {};
                            });
      !r)
    return std::unexpected(r.error());
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
