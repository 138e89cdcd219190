#include "core/diagnosis/app_images.hpp"

#include <algorithm>

#include "core/facts/knowledge.hpp"
#include "core/situation/ngc.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {
namespace {

// The image platform of this machine in the table's words.
std::string image_platform(const Snapshot& s) {
  return s.platform.machine == "aarch64" || s.platform.machine == "arm64" ? "arm64" : "x86_64";
}

// Says whether this machine carries `p`'s mark: the variable its image sets,
// or its project installed editable from the folder its image clones into.
bool marked(const AppProject& p, const Snapshot& s) {
  if (!p.marker_variable.empty()) {
    const auto it = s.environment.find(p.marker_variable);
    return it != s.environment.end() && it->second == p.marker_value;
  }
  return std::ranges::any_of(s.pythons, [&](const PythonEnv& env) {
    const auto it = env.editable_urls.find(p.name);
    return it != env.editable_urls.end() && it->second == "file://" + p.marker_editable;
  });
}

// Judges `image` on this machine through the NGC image judge (the same
// rules: SASS or PTX for each GPU, the host driver for the image's CUDA).
NgcVerdict judge(const Situation& x, const Knowledge& k, const AppImage& image) {
  const auto owner = std::ranges::find(k.app_images.projects, image.project, &AppProject::name);
  const std::string platform = image_platform(*x.snapshot) == "arm64" ? "arm64-sbsa" : "x86_64";
  NgcTable table;
  NgcRelease release;
  release.tag = image.tag;
  release.tag_version = image.order;
  release.torch = image.torch;
  release.cuda = image.cuda;
  release.cuda_detail = image.cuda_detail;
  release.platforms = {platform};
  release.source = image.source;
  if (owner != k.app_images.projects.end()) release.kernels = owner->kernels;
  table.releases.push_back(release);
  NgcArchList list;
  list.first = image.order;
  list.last = image.order;
  list.platforms = {platform};
  list.arch_list = image.arch_list;
  list.images = image.images;
  list.source = image.source;
  table.arch_lists.push_back(std::move(list));
  NgcVerdict v = judge_ngc_image(ngc_host(x, platform), k, table, table.releases.front());
  v.release = nullptr;  // pointed into the local table
  v.image = image.image();
  return v;
}

// The rows of `repository` for this machine's platform, oldest first.
std::vector<const AppImage*> candidates(const Knowledge& k, const Snapshot& s, std::string_view repository) {
  std::vector<const AppImage*> out;
  const std::string platform = image_platform(s);
  for (const AppImage& image : k.app_images.images) {
    if (image.repository == repository && std::ranges::find(image.platforms, platform) != image.platforms.end())
      out.push_back(&image);
  }
  return out;
}

// The version of distribution `name` installed in this image's Python, "" when none.
std::string installed(const Snapshot& s, const std::string& name) {
  for (const PythonEnv& env : s.pythons) {
    if (auto it = env.distributions.find(name); it != env.distributions.end()) return it->second;
  }
  return {};
}

// The tags offered: the first release at or after the installed one that
// runs here, the newest that does, and (when none from the installed one on
// does) the newest older one. Among tags of one release the first listed
// (the default CUDA) wins.
struct TagChoice {
  const AppImage* first = nullptr;
  const AppImage* newest = nullptr;
  const AppImage* older = nullptr;
};

TagChoice choose_tags(const std::vector<const AppImage*>& rows, const AppImage& now, const Situation& x,
                      const Knowledge& k) {
  TagChoice c;
  for (const AppImage* image : rows) {
    if (!judge(x, k, *image).runs) continue;
    if (image->order < now.order) {
      if (!c.older || image->order > c.older->order) c.older = image;
      continue;
    }
    if (!c.first) c.first = image;
    if (!c.newest || image->order > c.newest->order) c.newest = image;
  }
  return c;
}

// Takes the commands out of the pip installs and source builds other
// findings offer: inside an image they would change a running container
// (lost when it is recreated, and SGLang's and vLLM's kernels are no
// in-place build), so they are kept as words in the details and the fix
// names the tag instead; `torchfix fix` and "Run first" then never run them.
void mark_in_container_fixes(Diagnosis& d, const AppProject& p) {
  for (Finding& f : d.findings) {
    for (Fix& fix : f.fixes) {
      const bool in_place = std::ranges::any_of(fix.commands, [](const std::string& c) {
        return c.find("pip install") != std::string::npos || c.starts_with("torchfix build");
      });
      if (!in_place) continue;
      keep_fix_as_words(
          f, fix, "not run inside " + p.title + "'s image",
          " (inside " + p.title + "'s image: lost when the container is recreated; change the tag instead)");
    }
  }
}

// What the image holds, one line: torch, CUDA and the kernels' arch list.
std::string image_line(const AppProject& p, const AppImage& now) {
  const std::string kernels = p.kernels + (now.kernels_version.empty() ? "" : " " + now.kernels_version);
  return now.image() + ": torch " + now.torch + ", CUDA " +
         (now.cuda_detail.empty() ? now.cuda.str() : now.cuda_detail) + ", " + kernels + " kernels for " +
         now.arch_list + " (" + now.source + ")";
}

// The fixes of an image that cannot run here: the tags that do, else the
// driver its own tag needs when only the driver stands in the way.
void add_tag_fixes(Finding& f, const AppProject& p, const std::vector<const AppImage*>& rows, const AppImage& now,
                   const NgcVerdict& v, const Situation& x, const Knowledge& k) {
  const TagChoice choice = choose_tags(rows, now, x, k);
  if (choice.first) {
    f.fixes.push_back({"On the host, move to " + choice.first->image() +
                           ", the first release from yours whose kernels and CUDA run here",
                       {"docker pull " + choice.first->image()}});
  }
  if (choice.newest && choice.newest != choice.first)
    f.fixes.push_back({"Or the newest: " + choice.newest->image(), {"docker pull " + choice.newest->image()}});
  if (!choice.first && choice.older) {
    f.fixes.push_back({"On the host, go back to " + choice.older->image() +
                           ": no release from yours on runs here with this driver, and that is the newest that does",
                       {"docker pull " + choice.older->image()}});
  }
  const bool kernels_cover = std::ranges::all_of(v.gpus, [](const NgcGpuFit& g) { return g.covered; });
  if (kernels_cover && v.driver_needed && x.numbering != DriverNumbering::tegra) {
    f.fixes.push_back({std::string(choice.first || choice.older ? "Or, on" : "On") +
                           " the host, upgrade the driver to " + ngc_driver_text(v.driver_needed) + ": " + now.image() +
                           " then runs as it is",
                       {}});
  }
  if (!choice.first && !choice.older && !kernels_cover) {
    f.fixes.push_back({"None in " + p.title + "'s images: no tag in recipes/app-images.toml has " + p.kernels +
                           " kernels for every GPU here (this one holds " + now.arch_list +
                           "); run it on a GPU they cover, or use another project's image",
                       {}});
  }
}

// Adds what the doctor says inside `p`'s image.
void add_notes_for(Diagnosis& d, const Situation& x, const Knowledge& k, const AppProject& p) {
  const Snapshot& s = *x.snapshot;
  const std::string version = installed(s, p.name);
  const auto order = app_release_order(version);
  const auto rows = candidates(k, s, p.repository);
  const auto same = std::ranges::find_if(rows, [&](const AppImage* i) { return order && i->order == *order; });
  Finding f;
  f.id = "container.app";
  f.section = Section::gpus;
  f.package = p.name;
  if (same == rows.end()) {
    f.severity = Severity::note;
    f.title = "Running inside " + p.title + "'s image (" + p.name + " " +
              (version.empty() ? std::string("not found") : version) +
              "): recipes/app-images.toml has no row for it; torchfix judges its binaries as they are";
    d.findings.push_back(std::move(f));
    return;
  }
  const AppImage& now = **same;
  const NgcVerdict v = judge(x, k, now);
  f.details.push_back(image_line(p, now));
  for (const NgcGpuFit& g : v.gpus) f.details.push_back(g.why);
  if (now.doubtful) f.details.push_back("doubtful row: " + now.doubt);
  mark_in_container_fixes(d, p);
  if (v.runs || s.gpus.empty()) {
    f.severity = Severity::note;
    f.title =
        "Running inside " + p.title + "'s image " + now.image() + ": change the image's tag, not packages inside it";
    d.findings.push_back(std::move(f));
    return;
  }
  f.severity = Severity::problem;
  f.title = p.title + "'s image " + now.image() + " cannot run on " +
            (s.gpus.size() == 1 ? "this GPU" : "every GPU here") + " with this driver";
  add_tag_fixes(f, p, rows, now, v, x, k);
  d.findings.push_back(std::move(f));
}

}  // namespace

bool inside_app_image(const Snapshot& s, const Knowledge& k) {
  return std::ranges::any_of(k.app_images.projects, [&](const AppProject& p) { return marked(p, s); });
}

void keep_fix_as_words(Finding& f, Fix& fix, const std::string& not_run, const std::string& why) {
  fix.summary += why;
  for (const std::string& c : fix.commands) f.details.push_back(not_run + ": " + c);
  fix.commands.clear();
  fix.steps.clear();
}

void add_inside_app_image_notes(Diagnosis& d, const Situation& x, const Knowledge& k) {
  for (const AppProject& p : k.app_images.projects) {
    if (!marked(p, *x.snapshot)) continue;
    add_notes_for(d, x, k, p);
    return;
  }
}

}  // namespace torchfix
