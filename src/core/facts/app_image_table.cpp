#include "core/facts/app_image_table.hpp"

#include <algorithm>

#include "core/facts/knowledge.hpp"
#include "core/facts/toml_text.hpp"

namespace torchfix {
namespace {

using enum FieldType;
constexpr Need opt = Need::optional;
constexpr std::string_view k_platforms[] = {"x86_64", "arm64"};

constexpr Field k_project_fields[] = {{"name", text},
                                      {"title", text},
                                      {"repository", text},
                                      {"kernels", text},
                                      {"marker_variable", text, opt},
                                      {"marker_value", text, opt},
                                      {"marker_editable", text, opt},
                                      {"source", text}};
constexpr TableSchema k_project{"[[project]]", k_project_fields};
constexpr Field k_image_fields[] = {{"repository", text},
                                    {"tag", text},
                                    {"project", text},
                                    {"project_version", text},
                                    {"kernels_version", text, opt},
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
constexpr Field k_file_fields[] = {{"project", tables, opt, {}, &k_project}, {"image", tables, opt, {}, &k_image}};
constexpr TableSchema k_file{"recipes/app-images.toml", k_file_fields};

Expected<AppProject> parse_project(const Row& r) {
  AppProject p;
  TF_TRY(name, r.string("name"));
  TF_TRY(title, r.string("title"));
  TF_TRY(repository, r.string("repository"));
  TF_TRY(kernels, r.string("kernels"));
  TF_TRY(source, r.source());
  p.marker_variable = r.optional_string("marker_variable").value_or("");
  p.marker_value = r.optional_string("marker_value").value_or("");
  p.marker_editable = r.optional_string("marker_editable").value_or("");
  if (p.marker_variable.empty() != p.marker_value.empty())
    return std::unexpected(r.error("marker_variable and marker_value go together"));
  if (p.marker_variable.empty() == p.marker_editable.empty())
    return std::unexpected(r.error("give one marker: marker_variable with marker_value, or marker_editable"));
  if (source.empty()) return std::unexpected(r.error("source needs a value", "source"));
  p.name = name;
  p.title = title;
  p.repository = repository;
  p.kernels = kernels;
  p.source = source;
  return p;
}

Expected<AppImage> parse_image(const Row& r, const std::vector<AppProject>& projects) {
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
  const auto owner = std::ranges::find(projects, project, &AppProject::name);
  if (owner == projects.end())
    return std::unexpected(r.error("project '" + project + "' has no [[project]] row above", "project"));
  if (owner->repository != repository)
    return std::unexpected(r.error(
        "repository '" + repository + "' is not project " + project + "'s (" + owner->repository + ")", "repository"));
  auto order = app_release_order(project_version);
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
  out.kernels_version = r.optional_string("kernels_version").value_or("");
  out.torch = torch;
  out.cuda = cuda;
  out.cuda_detail = r.optional_string("cuda_detail").value_or("");
  out.platforms = platforms;
  out.images = *images;
  out.source = source;
  return out;
}

}  // namespace

std::optional<Version> app_release_order(std::string_view text) {
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

Expected<AppImageTable> parse_app_image_table(std::string_view text, const std::string& file) {
  TF_TRY(root, parse_checked_toml(text, file, k_file));
  AppImageTable t;
  auto projects = for_each_toml_row(root, file, "project", [&](const Row& row) -> Expected<void> {
    TF_TRY(project, parse_project(row));
    if (std::ranges::find(t.projects, project.name, &AppProject::name) != t.projects.end())
      return std::unexpected(row.error("project '" + project.name + "' is listed twice", "name"));
    t.projects.push_back(std::move(project));
    return {};
  });
  if (!projects) return std::unexpected(projects.error());
  auto rows = for_each_toml_row(root, file, "image", [&](const Row& row) -> Expected<void> {
    TF_TRY(image, parse_image(row, t.projects));
    t.images.push_back(std::move(image));
    return {};
  });
  if (!rows) return std::unexpected(rows.error());
  std::ranges::stable_sort(t.images, [](const AppImage& a, const AppImage& b) {
    return a.repository != b.repository ? a.repository < b.repository : a.order < b.order;
  });
  return t;
}

}  // namespace torchfix
