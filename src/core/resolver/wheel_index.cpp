// Index truth, pure part: wheel file names (core/base/index_page.hpp reads them
// from the pages) judged against a release, a Python and a platform.

#include "core/resolver/wheel_index.hpp"

#include <algorithm>

namespace torchfix {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find(separator, start);
    out.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

// The public part of a version as pip compares it with `==X.Y.Z` or
// `==X.Y.*`; nullopt for pre-, post- and dev releases (digits and dots only).
std::optional<Version> public_release(std::string_view version) {
  const std::string_view pub = version.substr(0, version.find('+'));
  if (pub.empty() || !std::ranges::all_of(pub, [](char ch) { return (ch >= '0' && ch <= '9') || ch == '.'; }))
    return std::nullopt;
  return Version::parse(pub);
}

bool python_fits(std::string_view python_tags, std::string_view abi_tags, const std::optional<Version>& python) {
  // A free-threaded build (cp313t) is not what a default interpreter installs.
  const auto abis = split(abi_tags, '.');
  if (std::ranges::all_of(abis, [](std::string_view a) { return a.starts_with("cp") && a.ends_with("t"); }))
    return false;
  if (!python) return true;
  const std::string major = std::to_string(python->major());
  const std::string cp = "cp" + major + std::to_string(python->minor());
  return std::ranges::any_of(split(python_tags, '.'), [&](std::string_view tag) {
    return tag == cp || tag == "py" + major || tag == "py" + major + std::to_string(python->minor());
  });
}

bool platform_fits(std::string_view platform_tags, PlatformKind platform) {
  const std::string machine(wheel_platform(platform));
  return std::ranges::any_of(split(platform_tags, '.'), [&](std::string_view tag) {
    if (tag == "any") return true;
    if (machine == "windows") return tag == "win_amd64";
    return (tag.starts_with("linux_") || tag.starts_with("manylinux")) && tag.ends_with("_" + machine);
  });
}

std::string python_tag(const std::optional<Version>& python) {
  return python ? "cp" + std::to_string(python->major()) + std::to_string(python->minor()) : "any Python";
}

}  // namespace

bool wheel_file_fits(std::string_view file, const Version& release, bool exact, const std::optional<Version>& python,
                     PlatformKind platform) {
  if (!file.ends_with(".whl")) return false;
  file.remove_suffix(4);
  const auto parts = split(file, '-');
  // name-version(-build)?-python-abi-platform
  if ((parts.size() != 5 && parts.size() != 6) || parts[0] != "torch") return false;
  const auto version = public_release(parts[1]);
  if (!version) return false;
  const bool release_fits =
      exact ? *version == release : version->major() == release.major() && version->minor() == release.minor();
  const std::size_t tags = parts.size() - 3;
  return release_fits && python_fits(parts[tags], parts[tags + 1], python) && platform_fits(parts[tags + 2], platform);
}

const IndexPage* find_index_page(const std::vector<IndexPage>& pages, std::string_view upstream) {
  const auto it = std::ranges::find_if(pages, [&](const IndexPage& p) { return p.upstream == upstream; });
  return it == pages.end() ? nullptr : &*it;
}

std::optional<std::string> index_hole(const IndexPage& page, const Version& release, bool exact,
                                      const std::optional<Version>& python, PlatformKind platform) {
  const std::string what = "torch " + (exact ? release.str() : release.major_minor() + ".*") + " for " +
                           python_tag(python) + " on " + std::string(to_string(platform));
  if (page.answer == IndexAnswer::absent) return page.url + " has no torch page (" + page.error + "): no " + what;
  if (page.answer != IndexAnswer::listed) return std::nullopt;
  if (std::ranges::any_of(page.files, [&](const std::string& file) {
        return wheel_file_fits(file, release, exact, python, platform);
      })) {
    return std::nullopt;
  }
  return page.url + " lists no " + what + " (" + page.format + ", " + std::to_string(page.files.size()) +
         " torch files)";
}

std::vector<IndexQuery> index_queries(const Snapshot& snapshot, const Diagnosis& diagnosis) {
  std::vector<IndexQuery> out;
  for (const Finding& f : diagnosis.findings) {
    const auto it =
        std::ranges::find_if(snapshot.pythons, [&](const PythonEnv& p) { return p.interpreter == f.python; });
    if (f.python.empty() || it == snapshot.pythons.end()) continue;
    const auto python = static_cast<std::size_t>(it - snapshot.pythons.begin());
    for (const Fix& fix : f.fixes) {
      for (const FixStep& step : fix.steps) {
        if (step.kind != StepKind::install || step.index_url.empty() || step.variant.empty()) continue;
        if (find_index_page(it->index_pages, step.index_url)) continue;
        if (std::ranges::any_of(
                out, [&](const IndexQuery& q) { return q.python == python && q.upstream == step.index_url; }))
          continue;
        out.push_back({python, step.index_url, step.variant});
      }
    }
  }
  return out;
}

std::string index_note(const FixStep& step, const std::vector<IndexPage>& pages) {
  if (step.kind != StepKind::install || step.index_url.empty() || step.variant.empty()) return {};
  const IndexPage* page = find_index_page(pages, step.index_url);
  if (!page) return {};
  if (page->answer == IndexAnswer::listed)
    return "checked on " + page->url + " (" + page->format + (page->cached ? ", cached" : "") + ")";
  return "not checked: " + page->url + ": " + page->error + "; the tables decided";
}

}  // namespace torchfix
