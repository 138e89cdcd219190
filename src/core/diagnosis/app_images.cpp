#include "core/diagnosis/app_images.hpp"

#include <algorithm>

#include "core/facts/knowledge.hpp"
#include "core/facts/toml_text.hpp"
#include "core/situation/ngc.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {
namespace {

using enum FieldType;
constexpr Need opt = Need::optional;
constexpr std::string_view k_platforms[] = {"x86_64", "arm64"};

constexpr Field k_image_fields[] = {{"repository", text},
                                    {"tag", text},
                                    {"project", text},
                                    {"project_version", text},
                                    {"torch", text},
                                    {"cuda", version},
                                    {"cuda_detail", text, opt},
                                    {"python", text, opt},
                                    {"platforms", texts, Need::required, k_platforms},
                                    {"archs", texts},
                                    {"doubtful", boolean, opt},
                                    {"doubt", text, opt},
                                    {"source", text}};
constexpr TableSchema k_image{"[[image]]", k_image_fields};
constexpr Field k_file_fields[] = {{"image", tables, opt, {}, &k_image}};
constexpr TableSchema k_file{"recipes/app-images.toml", k_file_fields};

// The image sets this (vllm-project/vllm docker/Dockerfile, every release
// from v0.6 to v0.33: ENV VLLM_USAGE_SOURCE production-docker-image).
constexpr std::string_view k_vllm_marker = "production-docker-image";

// "0.6.3.post1" -> 0.6.3.1, "0.11.0" -> 0.11.0.0, "0.11.0+cu128" -> 0.11.0.0:
// releases in order, a post release after its base.
std::optional<Version> release_order(std::string_view text) {
  text = text.substr(0, text.find('+'));
  const auto post = text.find(".post");
  auto base = Version::parse(text.substr(0, post));
  if (!base) return std::nullopt;
  std::vector<int> parts = base->parts();
  parts.resize(3, 0);
  int number = 0;
  if (post != std::string_view::npos) {
    for (char c : text.substr(post + 5)) {
      if (c < '0' || c > '9') return std::nullopt;
      number = number * 10 + (c - '0');
    }
  }
  parts.push_back(number);
  return Version(parts);
}

Expected<AppImage> parse_image(const Row& r) {
  AppImage out;
  TF_TRY(repository, r.string("repository"));
  TF_TRY(tag, r.string("tag"));
  TF_TRY(project, r.string("project"));
  TF_TRY(project_version, r.string("project_version"));
  TF_TRY(torch, r.string("torch"));
  TF_TRY(cuda, r.version("cuda"));
  TF_TRY(platforms, r.strings("platforms"));
  TF_TRY(archs, r.strings("archs"));
  TF_TRY(source, r.source());
  auto order = release_order(project_version);
  if (!order)
    return std::unexpected(
        r.error("project_version '" + project_version + "' is not like 0.11.0 or 0.6.3.post1", "project_version"));
  if (cuda.parts().size() != 2)
    return std::unexpected(r.error("cuda '" + cuda.str() + "' must be major.minor", "cuda"));
  if (source.empty() || tag.empty() || repository.empty())
    return std::unexpected(r.error("repository, tag and source need a value"));
  for (const std::string& a : archs) out.arch_list += (out.arch_list.empty() ? "" : ";") + a;
  auto images = images_from_arch_list(out.arch_list);
  if (!images) return std::unexpected(r.error(images.error().message, "archs"));
  out.doubtful = r.flag("doubtful");
  out.doubt = r.optional_string("doubt").value_or("");
  if (out.doubtful && out.doubt.empty())
    return std::unexpected(r.error("doubtful = true needs a 'doubt' saying which value"));
  out.repository = repository;
  out.tag = tag;
  out.project = project;
  out.project_version = project_version;
  out.order = *order;
  out.torch = torch;
  out.cuda = cuda;
  out.cuda_detail = r.optional_string("cuda_detail").value_or("");
  out.platforms = platforms;
  out.images = *images;
  out.source = source;
  return out;
}

// The image platform of this machine in the table's words.
std::string image_platform(const Snapshot& s) {
  return s.platform.machine == "aarch64" || s.platform.machine == "arm64" ? "arm64" : "x86_64";
}

// Judges `image` on this machine through the NGC image judge (the same
// rules: SASS or PTX for each GPU, the host driver for the image's CUDA).
NgcVerdict judge(const Situation& x, const Knowledge& k, const AppImage& image) {
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

// The vllm version installed in this image's Python, "" when none.
std::string installed_vllm(const Snapshot& s) {
  for (const PythonEnv& env : s.pythons) {
    if (auto it = env.distributions.find("vllm"); it != env.distributions.end()) return it->second;
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

// Marks the pip installs and source builds other findings offer: inside an
// image they are lost when the container is recreated.
void mark_in_container_fixes(Diagnosis& d) {
  for (Finding& f : d.findings) {
    for (Fix& fix : f.fixes) {
      const bool in_place = std::ranges::any_of(fix.commands, [](const std::string& c) {
        return c.find("pip install") != std::string::npos || c.starts_with("torchfix build");
      });
      if (in_place)
        fix.summary += " (inside vLLM's image: lost when the container is recreated; change the tag instead)";
    }
  }
}

}  // namespace

Expected<AppImageTable> parse_app_image_table(std::string_view text, const std::string& file) {
  TF_TRY(root, parse_checked_toml(text, file, k_file));
  AppImageTable t;
  auto rows = for_each_toml_row(root, file, "image", [&](const Row& row) -> Expected<void> {
    TF_TRY(image, parse_image(row));
    t.images.push_back(std::move(image));
    return {};
  });
  if (!rows) return std::unexpected(rows.error());
  std::ranges::stable_sort(t.images, [](const AppImage& a, const AppImage& b) {
    return a.repository != b.repository ? a.repository < b.repository : a.order < b.order;
  });
  return t;
}

void add_inside_app_image_notes(Diagnosis& d, const Situation& x, const Knowledge& k) {
  const Snapshot& s = *x.snapshot;
  const auto marker = s.environment.find("VLLM_USAGE_SOURCE");
  if (marker == s.environment.end() || marker->second != k_vllm_marker) return;
  const std::string version = installed_vllm(s);
  const auto order = release_order(version);
  const auto rows = candidates(k, s, "vllm/vllm-openai");
  const auto same = std::ranges::find_if(rows, [&](const AppImage* i) { return order && i->order == *order; });
  Finding f;
  f.id = "container.app";
  f.section = Section::gpus;
  f.package = "vllm";
  if (same == rows.end()) {
    f.severity = Severity::note;
    f.title = "Running inside vLLM's image (vllm " + (version.empty() ? std::string("not found") : version) +
              "): recipes/app-images.toml has no row for it; torchfix judges its binaries as they are";
    d.findings.push_back(std::move(f));
    return;
  }
  const AppImage& now = **same;
  const NgcVerdict v = judge(x, k, now);
  f.details.push_back(now.image() + ": torch " + now.torch + ", CUDA " +
                      (now.cuda_detail.empty() ? now.cuda.str() : now.cuda_detail) + ", vllm kernels for " +
                      now.arch_list + " (" + now.source + ")");
  for (const NgcGpuFit& g : v.gpus) f.details.push_back(g.why);
  if (now.doubtful) f.details.push_back("doubtful row: " + now.doubt);
  mark_in_container_fixes(d);
  if (v.runs || s.gpus.empty()) {
    f.severity = Severity::note;
    f.title = "Running inside vLLM's image " + now.image() + ": change the image's tag, not packages inside it";
    d.findings.push_back(std::move(f));
    return;
  }
  f.severity = Severity::problem;
  f.title = "vLLM's image " + now.image() + " cannot run on " + (s.gpus.size() == 1 ? "this GPU" : "every GPU here") +
            " with this driver";
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
  if (!choice.first && !choice.older)
    f.details.push_back("no vLLM image in recipes/app-images.toml runs here with this driver; a driver upgrade may");
  d.findings.push_back(std::move(f));
}

}  // namespace torchfix
