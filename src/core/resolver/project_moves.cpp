// The words and choices of a fix that moves an extension's project with
// torch: which torch releases its index pages serve, which release of it
// a source build at its tag can use against the fix's torch, and where a
// release that fails on a GPU here moves ([[broken_release]]).

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/resolver/resolver.hpp"
#include "core/resolver/resolver_internal.hpp"

namespace torchfix::detail {

// Returns the torch releases of `package`'s [[project_index]] rows as
// "1.13 to 2.4" (exact releases in full: "1.8.0 to 2.0.1"), and, where rows
// are for `release`'s major.minor, their variants (or exact releases).
std::string index_pages_text(const Knowledge& k, const std::string& package, const Version& release) {
  const std::vector<const ProjectIndexPage*> rows = k.project_rows(package);
  const auto torch = [](const ProjectIndexPage* row) {
    return row->exact() ? row->torch.str() : row->torch.major_minor();
  };
  std::string text = "for torch " + torch(rows.front()) + " to " + torch(rows.back());
  std::string same;
  for (const ProjectIndexPage* row : rows) {
    if (row->torch.major_minor() != release.major_minor()) continue;
    // An exact row is one release of that major.minor; another row, its variants.
    for (const std::string& v : row->exact() ? std::vector<std::string>{row->torch.str()} : row->variants) {
      same += (same.empty() ? "" : ", ") + v;
    }
  }
  if (same.empty()) return text;
  return text + "; for " + release.major_minor() + " only " + same +
         (rows.front()->exact()
              ? ", each for that exact release, while the fix installs torch " + release.major_minor() + ".*"
              : "");
}

// The release of `m`'s project to build against the fix's torch: the
// installed one, or where its setup.py caps torch below it
// ([[source_torch_cap]]), the newest release whose cap admits that torch;
// nullopt (and `text` says why) when none does. IGNORE_TORCH_VER-style
// overrides are never set: the project warns against them.
std::optional<std::string> release_to_build(const Knowledge& k, const Remedy& r, const Constraints& c,
                                            const PackageMove& m, std::string& text) {
  const std::string installed = m.from.substr(0, m.from.find('+'));
  const auto from = Version::parse(installed);
  const SourceTorchCap* cap = from ? k.source_torch_cap(m.package, *from) : nullptr;
  if (!cap || (!r.wheel && !c.torch)) return installed;
  const Version torch = r.wheel ? r.wheel->release : c.torch->release;
  if (cap->admits(torch)) return installed;
  const std::string refuses = m.package + " " + installed + "'s setup.py accepts torch " + cap->torch_min.str() +
                              " to " + cap->torch_max.str() + " only (" + cap->source + ")";
  if (const SourceTorchCap* other = k.newest_release_admitting(m.package, torch)) {
    text += ": " + refuses + "; release " + other->release.str() + " accepts torch " + other->torch_min.str() + " to " +
            other->torch_max.str() + " (" + other->source + ")";
    return other->release.str();
  }
  const SourceTorchCap* newest = cap;
  for (const SourceTorchCap& row : k.source_torch_caps) {
    if (row.distribution == m.package && row.release > newest->release) newest = &row;
  }
  text += ": no release of " + m.package + " builds against torch " + torch.str() + ": " + refuses +
          (newest == cap ? ""
                         : "; the newest, " + newest->release.str() + ", accepts torch " + newest->torch_min.str() +
                               " to " + newest->torch_max.str() + " (" + newest->source + ")") +
          "; setup.py stops outside that range unless an override is set that it warns against; keep a torch it "
          "accepts for " +
          m.package;
  return std::nullopt;
}

// The torch series the first fixed release of each installed release that
// fails on a GPU here pins ([[broken_release]], [[extension_pin]]), newest last.
std::vector<Version> fixed_torches(const Constraints& c, const Knowledge& k) {
  std::vector<Version> out;
  for (const InstalledPackage& p : c.packages) {
    const ExtensionPin* pin = p.fixed_release ? k.pin_of(p.name, p.fixed_release->str()) : nullptr;
    if (pin && std::ranges::find(out, major_minor_of(pin->torch)) == out.end())
      out.push_back(major_minor_of(pin->torch));
  }
  std::ranges::sort(out);
  return out;
}

// Moves each installed release that fails on a GPU here to its first fixed
// release, where that release runs on the installed torch; says why not
// (`reasons`) where it pins another torch: the fix then moves torch with it.
void move_to_fixed(const Constraints& c, const Knowledge& k, Remedy& r, std::vector<std::string>& reasons) {
  for (const InstalledPackage& p : c.packages) {
    if (!p.fixed_release) continue;
    const std::string fixed = p.fixed_release->str();
    const ExtensionPin* pin = k.pin_of(p.name, fixed);
    if (pin && c.torch && !(pin->torch == c.torch->release)) {
      reasons.push_back(p.name + " " + fixed + ", the first release that runs on every GPU here, requires torch " +
                        pin->torch.str() + " (" + pin->source + ")");
      continue;
    }
    std::erase_if(r.moves, [&](const PackageMove& m) { return m.package == p.name; });
    PackageMove m{p.name, p.version, fixed, "", "recipes/extensions.toml [[broken_release]]"};
    m.fixed = true;
    r.moves.push_back(std::move(m));
  }
}

}  // namespace torchfix::detail
