// An extension built against another torch release (its binary misses torch
// symbols): where the tables or its wheel's name say which torch it was built
// against, the remedy moves torch back to that release from torch's own
// index, in the extension's CUDA variant. The same release from another index
// or in an NGC image keeps the C++ ABI that misses the symbols: no fix.

#include <algorithm>

#include "core/resolver/resolver_internal.hpp"

namespace torchfix::detail {
namespace {

// Says whether wheel row `w` serves `b`'s torch in the CUDA the extension
// links: its exact variant where its tag names one, else its CUDA major.
bool serves(const WheelVariant& w, const BuiltAgainst& b) {
  if (!w.url.empty() || !w.covers_release(b.torch)) return false;
  if (!b.variant.empty()) return w.variant == b.variant;
  return !b.cuda_major || w.cuda.major() == *b.cuda_major;
}

// Returns the wheel rows that serve `b`: the installed torch's variant
// alone where it does, else every row of the extension's CUDA.
std::vector<const WheelVariant*> rows_for(const Constraints& c, const Knowledge& k, const BuiltAgainst& b) {
  std::vector<const WheelVariant*> rows;
  for (const WheelVariant* w : wheel_rows(c, k)) {
    if (serves(*w, b)) rows.push_back(w);
  }
  const auto installed =
      std::ranges::find_if(rows, [&](const WheelVariant* w) { return c.torch && w->variant == c.torch->variant; });
  if (installed != rows.end()) return {*installed};
  return rows;
}

}  // namespace

std::vector<std::string> same_abi_reasons(const Constraints& c) {
  std::vector<std::string> out;
  if (!c.torch) return out;
  for (const InstalledPackage& p : c.packages) {
    if (!p.abi_broken) continue;
    out.push_back(p.name + " " + p.version + " misses symbols of torch " + c.torch->release.str() +
                  "'s C++ ABI: another build of that torch, or an image's torch with " + p.name +
                  " as it was built, does not change what it was built against");
  }
  return out;
}

void built_against_candidates(const Constraints& c, const Knowledge& k, std::vector<Scored>& out) {
  if (!c.torch) return;
  for (const InstalledPackage& p : c.packages) {
    if (!p.abi_broken || !p.built_against) continue;
    const BuiltAgainst& b = *p.built_against;
    if (b.series ? major_minor_of(b.torch) == major_minor_of(c.torch->release) : b.torch == c.torch->release) continue;
    for (const WheelVariant* w : rows_for(c, k, b)) {
      Scored s;
      s.remedy.kind = CandidateKind::wheel;
      s.reasons = check_torch(s.remedy, c, k, w->images, w->cuda, "torch " + w->variant + " " + w->arch_list);
      add_gpu_driver_reasons(s, c, k);
      const Version release = b.series ? major_minor_of(b.torch) : b.torch;
      s.remedy.wheel = WheelChange{w, release, false, !b.series};
      for (auto& r : python_reasons(*w, release, !b.series, c, k)) s.reasons.push_back(std::move(r));
      s.remedy.built_for = p.name + " " + p.version + " was built against torch " + b.torch.str() +
                           (b.series ? ".x" : "") + " (" + b.source + ")";
      s.remedy.moves = moves_for(release, w->variant, false, c, k);
      // It goes back to the torch it was built for: nothing of it moves.
      std::erase_if(s.remedy.moves, [&](const PackageMove& m) { return m.package == p.name; });
      s.remedy.builds = rebuilds(c, k, s.remedy.moves);
      out.push_back(std::move(s));
    }
  }
}

}  // namespace torchfix::detail
