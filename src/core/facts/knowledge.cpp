#include "core/facts/knowledge.hpp"

#include "core/arch/arch_list.hpp"
#include "core/facts/gpu_name.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

namespace torchfix {
namespace {

Version major_minor(const Version& v) {
  return Version({v.major(), v.minor()});
}

}  // namespace

std::string_view WheelVariant::how_known() const {
  if (confidence == "UNVERIFIED") return "not confirmed";
  if (confidence == "build script") return "from the build script";
  if (confidence == "maintainer") return "from the maintainers";
  if (confidence == "reports") return "from user reports";
  return confidence;
}

bool WheelVariant::covers_release(const Version& release) const {
  const Version mm = major_minor(release);
  return mm >= min && mm <= max;
}

std::string WheelVariant::index_url() const {
  return "https://download.pytorch.org/whl/" + variant;
}

bool ProjectIndexPage::exact() const {
  return page.contains("{release}") || page.contains("{release_nodot}");
}

bool ProjectIndexPage::serves(const Version& release) const {
  // An exact page is for one patch release: a fix that installs "2.8.*" has none.
  if (exact()) return release.parts().size() >= 3 && release == torch;
  return release.major_minor() == torch.major_minor();
}

std::string ProjectIndexPage::url(const std::string& variant, const std::string& python) const {
  if (std::ranges::find(variants, variant) == variants.end()) return "";
  const bool names_python = page.contains("{python_nodot}");
  if (names_python && std::ranges::find(pythons, python) == pythons.end()) return "";
  const auto nodot = [](std::string text) {
    std::erase(text, '.');
    return text;
  };
  std::string out = page;
  for (const auto& [key, value] : {std::pair<std::string, std::string>{"{torch}", torch.major_minor()},
                                   {"{release}", torch.str()},
                                   {"{release_nodot}", nodot(torch.str())},
                                   {"{python_nodot}", nodot(python)},
                                   {"{variant}", variant}}) {
    for (auto at = out.find(key); at != std::string::npos; at = out.find(key)) out.replace(at, key.size(), value);
  }
  return out;
}

std::string ProjectSource::tag(std::string_view version) const {
  const std::string release(version.substr(0, version.find('+')));
  std::string out = tag_format;
  if (const auto at = out.find("{version}"); at != std::string::npos) out.replace(at, 9, release);
  const auto lower = [](std::string text) {
    std::ranges::transform(text, text.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return text;
  };
  const auto odd = std::ranges::find_if(odd_tags, [&](const std::string& t) { return lower(t) == lower(out); });
  return odd == odd_tags.end() ? out : *odd;
}

Expected<ComputeCapability> Knowledge::resolve_gpu(std::string_view spec) const {
  if (auto cc = ComputeCapability::parse(spec)) return *cc;
  return match_gpu_name(spec, gpus);  // core/facts/gpu_name.cpp
}

std::string Knowledge::product_name(ComputeCapability cc) const {
  for (const GpuProduct& product : gpus) {
    if (product.cc == cc && !product.names.empty()) return product.names.front();
  }
  return {};
}

std::optional<Version> Knowledge::cuda_for_driver(const Version& driver, bool windows) const {
  std::optional<Version> best;
  for (const DriverFloor& floor : driver_floors) {
    // Toolkits that bundle no Windows driver (13.x) name no Windows floor:
    // fall back to the Linux floor's branch ("580"), the number a branch's
    // Windows drivers share (R580: 580.xx to 582.xx); its Linux number
    // (580.65.06) is no Windows number and would put Windows 580.xx below it.
    const Version needed = !windows ? floor.linux : floor.windows ? *floor.windows : Version({floor.linux.major()});
    if (needed <= driver && (!best || floor.cuda > *best)) best = floor.cuda;
  }
  return best;
}

const L4tRelease* Knowledge::l4t_release(const Version& release) const {
  for (const L4tRelease& row : l4t) {
    if (row.release.major() == release.major() && row.release.minor() == release.minor()) return &row;
  }
  return nullptr;
}

const GpuDriverSupport* Knowledge::gpu_driver(ComputeCapability cc) const {
  for (const GpuDriverSupport& row : gpu_drivers) {
    if (cc >= row.cc_min && cc <= row.cc_max) return &row;
  }
  return nullptr;
}

const PypiDefault* Knowledge::pypi_default(const Version& release, std::string_view platform) const {
  const Version mm = major_minor(release);
  for (const PypiDefault& row : pypi_defaults) {
    if (row.platform == platform && mm >= row.min && mm <= row.max) return &row;
  }
  return nullptr;
}

const TorchPython* Knowledge::torch_python(const Version& release) const {
  const Version mm = major_minor(release);
  for (const TorchPython& row : torch_pythons) {
    if (mm >= row.min && mm <= row.max) return &row;
  }
  return nullptr;
}

const TritonPtxas* Knowledge::triton_ptxas(std::string_view triton_version) const {
  auto parsed = Version::parse(triton_version);
  if (!parsed || triton.empty()) return nullptr;
  const Version mm = major_minor(*parsed);
  const TritonPtxas* newest = nullptr;
  for (const TritonPtxas& row : triton) {
    if (mm >= row.min && mm <= row.max) return &row;
    if (!newest || row.max > newest->max) newest = &row;
  }
  return mm > newest->max ? newest : nullptr;
}

const TorchTriton* Knowledge::triton_for_torch(std::string_view distribution, const Version& release) const {
  const TorchTriton* series = nullptr;
  for (const TorchTriton& row : torch_tritons) {
    if (row.distribution != distribution) continue;
    if (row.torch.parts().size() > 2 && row.torch == release) return &row;
    if (row.torch.parts().size() <= 2 && row.torch == major_minor(release)) series = &row;
  }
  return series;
}

const DriverFloor* Knowledge::driver_floor(const Version& cuda) const {
  const Version mm = major_minor(cuda);
  for (const DriverFloor& floor : driver_floors) {
    if (floor.cuda == mm) return &floor;
  }
  return nullptr;
}

const MinorCompat* Knowledge::minor_compat_for(int cuda_major) const {
  for (const MinorCompat& row : minor_compat) {
    if (row.cuda_major == cuda_major) return &row;
  }
  return nullptr;
}

std::vector<Arch> Knowledge::nvcc_archs_for(const Version& nvcc) const {
  const Version mm = major_minor(nvcc);
  std::vector<Arch> out;
  for (const NvccArchRange& range : nvcc_archs) {
    if ((range.first && mm < *range.first) || (range.last && mm > *range.last)) continue;
    out.insert(out.end(), range.archs.begin(), range.archs.end());
  }
  std::ranges::sort(out);
  return out;
}

std::optional<Version> Knowledge::first_nvcc_for(ComputeCapability cc) const {
  const auto window = nvcc_window_for(cc);
  return window ? window->first : std::nullopt;
}

std::optional<NvccWindow> Knowledge::nvcc_window_for(ComputeCapability cc) const {
  std::optional<NvccWindow> out;
  bool open_first = false;
  bool open_last = false;
  for (const NvccArchRange& range : nvcc_archs) {
    const bool matches = std::ranges::any_of(
        range.archs, [&](const Arch& a) { return a.variant == ArchVariant::generic && sass_runs_on(a, cc); });
    if (!matches) continue;
    if (!out) out = NvccWindow{};
    if (!range.first) open_first = true;
    if (!range.last) open_last = true;
    if (range.first && (!out->first || *range.first < *out->first)) out->first = range.first;
    if (range.last && (!out->last || *range.last > *out->last)) out->last = range.last;
  }
  if (out && open_first) out->first.reset();
  if (out && open_last) out->last.reset();
  return out;
}

std::optional<Version> Knowledge::first_nvcc_for_variant(ArchVariant variant) const {
  std::optional<Version> out;
  if (variant == ArchVariant::generic) return out;
  for (const NvccArchRange& range : nvcc_archs) {
    if (!range.first || std::ranges::none_of(range.archs, [&](const Arch& a) { return a.variant == variant; }))
      continue;
    if (!out || *range.first < *out) out = range.first;
  }
  return out;
}

bool NvccWindow::contains(const Version& version) const {
  const Version mm = major_minor(version);
  return (!first || mm >= *first) && (!last || mm <= *last);
}

std::string NvccWindow::str() const {
  if (first && last) return "CUDA " + first->str() + " to " + last->str();
  if (first) return "CUDA >= " + first->str();
  if (last) return "CUDA <= " + last->str();
  return "any CUDA";
}

void NvccWindow::narrow(const NvccWindow& other) {
  if (other.first && (!first || *other.first > *first)) first = other.first;
  if (other.last && (!last || *other.last < *last)) last = other.last;
}

bool NvccWindow::empty() const {
  return first && last && *first > *last;
}

const HostCompilerBounds* Knowledge::host_bounds_for(const Version& nvcc) const {
  const Version mm = major_minor(nvcc);
  for (const HostCompilerBounds& row : host_compilers) {
    if (mm >= row.cuda_min && mm <= row.cuda_max) return &row;
  }
  return nullptr;
}

const Recipe* Knowledge::build_recipe(std::string_view name) const {
  for (const Recipe& recipe : build_recipes) {
    if (recipe.name == name) return &recipe;
  }
  return nullptr;
}

const ExtensionWheel* Knowledge::extension_wheel(std::string_view distribution, const Version& version) const {
  for (const ExtensionWheel& row : extension_wheels) {
    if (row.distribution == distribution && row.min <= version && version <= row.max) return &row;
  }
  return nullptr;
}

const ExtensionSupport* Knowledge::extension(std::string_view distribution) const {
  for (const ExtensionSupport& row : extensions) {
    if (row.distribution == distribution) return &row;
  }
  return nullptr;
}

const ExtensionPin* Knowledge::pin_of(std::string_view distribution, std::string_view version) const {
  const auto row = std::ranges::find_if(
      extension_pins, [&](const ExtensionPin& e) { return e.distribution == distribution && e.version == version; });
  return row == extension_pins.end() ? nullptr : &*row;
}

const ExtensionPin* Knowledge::built_against_row(std::string_view distribution, std::string_view version) const {
  const ExtensionPin* row = pin_of(distribution, version);
  if (!row && version.find('+') != std::string_view::npos)
    row = pin_of(distribution, version.substr(0, version.find('+')));
  return row && row->built_against ? row : nullptr;
}

const VariantIndex* Knowledge::variant_index(std::string_view distribution, std::string_view version,
                                             std::string_view variant) const {
  const std::string_view release = version.substr(0, version.find('+'));
  const auto row = std::ranges::find_if(variant_indexes, [&](const VariantIndex& v) {
    return v.distribution == distribution && v.version == release && v.variant == variant;
  });
  return row == variant_indexes.end() ? nullptr : &*row;
}

bool BrokenRelease::breaks(const Version& release, ComputeCapability cc) const {
  return !(release < min) && !(max < release) && !(cc < min_cc) && !(max_cc && *max_cc < cc);
}

const BrokenRelease* Knowledge::broken_release(std::string_view distribution, const Version& version,
                                               ComputeCapability cc) const {
  const auto row = std::ranges::find_if(
      broken_releases, [&](const BrokenRelease& r) { return r.distribution == distribution && r.breaks(version, cc); });
  return row == broken_releases.end() ? nullptr : &*row;
}

bool Knowledge::pins(std::string_view distribution) const {
  return std::ranges::any_of(extension_pins, [&](const ExtensionPin& e) { return e.distribution == distribution; });
}

std::string Knowledge::release_for_torch(std::string_view distribution, const Version& torch) const {
  std::string release;
  for (const ExtensionPin& e : extension_pins) {
    if (e.distribution != distribution || e.torch.major_minor() != torch.major_minor()) continue;
    if (e.torch == torch) return e.version;
    release = e.version;
  }
  return release;
}

std::vector<const ProjectIndexPage*> Knowledge::project_rows(std::string_view distribution) const {
  std::vector<const ProjectIndexPage*> out;
  for (const ProjectIndexPage& row : project_index) {
    if (std::ranges::find(row.distributions, distribution) != row.distributions.end()) out.push_back(&row);
  }
  return out;
}

const ProjectIndexPage* Knowledge::project_page_row(std::string_view distribution, const Version& release) const {
  for (const ProjectIndexPage* row : project_rows(distribution)) {
    if (row->serves(release)) return row;
  }
  return nullptr;
}

std::string Knowledge::project_page(std::string_view distribution, const Version& release, const std::string& variant,
                                    const std::string& python) const {
  const ProjectIndexPage* row = project_page_row(distribution, release);
  return row ? row->url(variant, python) : "";
}

bool SourceTorchCap::admits(const Version& torch) const {
  if (torch.parts().size() >= 3) return torch >= torch_min && torch <= torch_max;
  const Version series({torch.major(), torch.minor()});
  const Version cap_series({torch_max.major(), torch_max.minor()});
  return Version({torch.major(), torch.minor(), 0}) >= torch_min && series < cap_series;
}

const SourceTorchCap* Knowledge::source_torch_cap(std::string_view distribution, const Version& release) const {
  const auto row = std::ranges::find_if(source_torch_caps, [&](const SourceTorchCap& c) {
    return c.distribution == distribution && c.release == release;
  });
  return row == source_torch_caps.end() ? nullptr : &*row;
}

const SourceTorchCap* Knowledge::newest_release_admitting(std::string_view distribution, const Version& torch) const {
  const SourceTorchCap* best = nullptr;
  for (const SourceTorchCap& c : source_torch_caps) {
    if (c.distribution == distribution && c.admits(torch) && (!best || c.release > best->release)) best = &c;
  }
  return best;
}

const ProjectSource* Knowledge::project_source(std::string_view distribution) const {
  const auto row =
      std::ranges::find_if(project_sources, [&](const ProjectSource& p) { return p.distribution == distribution; });
  return row == project_sources.end() ? nullptr : &*row;
}

}  // namespace torchfix
