#include "core/knowledge.hpp"

#include "core/arch_list.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include "core/toml_text.hpp"

namespace torchfix {
namespace {

// Lowercase, drop "nvidia" and "geforce", turn '-' and '_' into spaces, squeeze
// spaces: "NVIDIA GeForce RTX 5070-Ti" and "rtx 5070 ti" compare equal.
std::string normalise_name(std::string_view name) {
  std::string lowered;
  for (char c : name) {
    lowered += (c == '-' || c == '_') ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::istringstream words(lowered);
  std::string word;
  std::string out;
  while (words >> word) {
    if (word == "nvidia" || word == "geforce") continue;
    out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

bool contains_words(const std::string& haystack, const std::string& needle) {
  const std::string padded = " " + haystack + " ";
  return padded.find(" " + needle + " ") != std::string::npos;
}

// One row of a TOML array of tables, with the file and line for errors.
class Row {
 public:
  Row(const toml::table& table, const std::string& file, const char* array)
      : m_table(table), m_file(file), m_array(array) {}

  std::string where() const {
    return m_file + ":" + std::to_string(m_table.source().begin.line) + " ([[" + m_array + "]])";
  }
  Error error(const std::string& what) const { return Error{where() + ": " + what}; }

  Expected<std::string> string(const char* key) const {
    if (auto v = m_table[key].value<std::string>()) return *v;
    return std::unexpected(error(std::string("missing or non-string field '") + key + "'"));
  }
  std::optional<std::string> optional_string(const char* key) const { return m_table[key].value<std::string>(); }
  bool flag(const char* key) const { return m_table[key].value_or(false); }
  std::optional<int> optional_int(const char* key) const {
    if (auto v = m_table[key].value<std::int64_t>()) return static_cast<int>(*v);
    return std::nullopt;
  }
  Expected<Version> version(const char* key) const {
    TF_TRY(text, string(key));
    if (auto v = Version::parse(text); v && v->str() == text) return *v;
    return std::unexpected(error(std::string("field '") + key + "' = '" + text + "' is not a version"));
  }
  Expected<std::optional<Version>> optional_version(const char* key) const {
    if (!m_table.contains(key)) return std::optional<Version>{};
    TF_TRY(v, version(key));
    return std::optional<Version>(v);
  }
  Expected<std::vector<std::string>> strings(const char* key) const {
    const toml::array* array = m_table[key].as_array();
    if (!array || array->empty()) return std::unexpected(error(std::string("missing or empty list '") + key + "'"));
    std::vector<std::string> out;
    for (const auto& item : *array) {
      auto s = item.value<std::string>();
      if (!s) return std::unexpected(error(std::string("list '") + key + "' must hold strings"));
      out.push_back(*s);
    }
    return out;
  }
  Expected<ComputeCapability> cc(const char* key) const {
    TF_TRY(text, string(key));
    auto cc = ComputeCapability::parse(text);
    if (!cc) return std::unexpected(error(cc.error().message));
    return *cc;
  }
  Expected<std::string> source() const { return string("source"); }

 private:
  const toml::table& m_table;
  const std::string& m_file;
  const char* m_array;
};

// Calls `parse_row` for each table of the array `name` in `root`.
// Visits the rows of one array of tables (core/toml_text.hpp).
template <typename F>
Expected<void> for_each_row(const toml::table& root, const std::string& file, const char* name, F&& parse_row) {
  return for_each_toml_row<Row>(root, file, name, std::forward<F>(parse_row));
}

// Tables the resolver needs: per-generation drivers, PyPI defaults, Python
// ranges, extension pins, Triton's bundled ptxas.
Expected<void> parse_remedy_tables(const toml::table& root, const std::string& file, Knowledge& k) {
  if (auto r = for_each_row(root, file, "gpu_driver",
                            [&](const Row& r) -> Expected<void> {
                              GpuDriverSupport g;
                              TF_TRY(generation, r.string("generation"));
                              TF_TRY(cc_min, r.cc("cc_min"));
                              TF_TRY(cc_max, r.cc("cc_max"));
                              TF_TRY(linux_first, r.version("linux"));
                              TF_TRY(windows, r.optional_version("windows"));
                              TF_TRY(source, r.source());
                              g.generation = generation;
                              g.cc_min = cc_min;
                              g.cc_max = cc_max;
                              g.linux = linux_first;
                              g.windows = windows;
                              g.last_branch = r.optional_int("last_branch");
                              g.source = source;
                              k.gpu_drivers.push_back(std::move(g));
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "pypi_default",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(min, r.version("min"));
                              TF_TRY(max, r.version("max"));
                              TF_TRY(platform, r.string("platform"));
                              TF_TRY(variant, r.string("variant"));
                              TF_TRY(source, r.source());
                              k.pypi_defaults.push_back({min, max, platform, variant, source});
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "torch_python",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(min, r.version("min"));
                              TF_TRY(max, r.version("max"));
                              TF_TRY(python_min, r.version("python_min"));
                              TF_TRY(python_max, r.version("python_max"));
                              TF_TRY(source, r.source());
                              k.torch_pythons.push_back({min, max, python_min, python_max, source});
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "extension_pin",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(distribution, r.string("distribution"));
                              TF_TRY(version, r.string("version"));
                              TF_TRY(torch, r.version("torch"));
                              TF_TRY(source, r.source());
                              k.extension_pins.push_back({distribution, version, torch, source});
                              return {};
                            });
      !r)
    return r;
  return for_each_row(root, file, "triton", [&](const Row& r) -> Expected<void> {
    TF_TRY(min, r.version("min"));
    TF_TRY(max, r.version("max"));
    TF_TRY(ptxas, r.version("ptxas"));
    TF_TRY(blackwell, r.optional_version("ptxas_blackwell"));
    TF_TRY(source, r.source());
    k.triton.push_back({min, max, ptxas, blackwell, source});
    return {};
  });
}

Expected<void> parse_file(const KnowledgeText& input, Knowledge& k) {
  auto parsed = parse_toml_text(input.text, input.file);
  if (!parsed) return std::unexpected(parsed.error());
  const toml::table& root = *parsed;
  const std::string& file = input.file;
  if (auto r = for_each_row(root, file, "gpu",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(cc, r.cc("cc"));
                              TF_TRY(names, r.strings("names"));
                              TF_TRY(source, r.source());
                              k.gpus.push_back({cc, names, r.flag("tegra"), source});
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "driver_floor",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(cuda, r.version("cuda"));
                              TF_TRY(linux_floor, r.version("linux"));
                              TF_TRY(windows, r.optional_version("windows"));
                              TF_TRY(source, r.source());
                              k.driver_floors.push_back({cuda, linux_floor, windows, source});
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "minor_compat",
                            [&](const Row& r) -> Expected<void> {
                              auto major = r.optional_int("cuda_major");
                              if (!major) return std::unexpected(r.error("missing integer field 'cuda_major'"));
                              TF_TRY(linux_floor, r.version("linux"));
                              TF_TRY(windows, r.optional_version("windows"));
                              TF_TRY(source, r.source());
                              k.minor_compat.push_back({*major, linux_floor, windows, source});
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "nvcc_arch",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(names, r.strings("archs"));
                              NvccArchRange range;
                              for (const std::string& name : names) {
                                auto arch = Arch::parse(name);
                                if (!arch) return std::unexpected(r.error(arch.error().message));
                                range.archs.push_back(*arch);
                              }
                              TF_TRY(first, r.optional_version("first"));
                              TF_TRY(last, r.optional_version("last"));
                              TF_TRY(source, r.source());
                              range.first = first;
                              range.last = last;
                              range.source = source;
                              k.nvcc_archs.push_back(std::move(range));
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "host_compiler",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(cuda_min, r.version("cuda_min"));
                              TF_TRY(cuda_max, r.version("cuda_max"));
                              TF_TRY(source, r.source());
                              k.host_compilers.push_back({cuda_min, cuda_max, r.optional_int("gcc_below"),
                                                          r.optional_int("clang_below"), source});
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "wheel",
                            [&](const Row& r) -> Expected<void> {
                              WheelVariant w;
                              TF_TRY(min, r.version("min"));
                              TF_TRY(max, r.version("max"));
                              TF_TRY(variant, r.string("variant"));
                              TF_TRY(arch_list, r.string("arch_list"));
                              TF_TRY(confidence, r.string("confidence"));
                              TF_TRY(source, r.source());
                              auto cuda = variant.starts_with("cu") ? Version::parse(variant.substr(2)) : std::nullopt;
                              if (!cuda || cuda->parts().size() != 1 || cuda->major() < 100) {
                                return std::unexpected(
                                    r.error("variant '" + variant + "' is not a CUDA variant like cu128"));
                              }
                              auto images = images_from_arch_list(arch_list);
                              if (!images) return std::unexpected(r.error(images.error().message));
                              w.min = min;
                              w.max = max;
                              w.variant = variant;
                              w.cuda = Version({cuda->major() / 10, cuda->major() % 10});
                              w.platform = r.optional_string("platform").value_or("x86_64");
                              w.arch_list = arch_list;
                              w.images = *images;
                              w.confidence = confidence;
                              w.source = source;
                              k.wheels.push_back(std::move(w));
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "extension",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(distribution, r.string("distribution"));
                              TF_TRY(cc, r.cc("min_cc"));
                              TF_TRY(source, r.source());
                              k.extensions.push_back({distribution, cc, r.flag("torch_abi"), source});
                              return {};
                            });
      !r)
    return r;
  if (auto r = for_each_row(root, file, "extension_wheel",
                            [&](const Row& r) -> Expected<void> {
                              TF_TRY(distribution, r.string("distribution"));
                              TF_TRY(min, r.version("min"));
                              TF_TRY(max, r.version("max"));
                              TF_TRY(arch_list, r.string("arch_list"));
                              TF_TRY(source, r.source());
                              auto images = images_from_arch_list(arch_list);
                              if (!images) return std::unexpected(r.error("arch_list: " + images.error().message));
                              k.extension_wheels.push_back({distribution, min, max, arch_list, *images, source});
                              return {};
                            });
      !r)
    return r;
  return parse_remedy_tables(root, file, k);
}

Version major_minor(const Version& v) {
  return Version({v.major(), v.minor()});
}

}  // namespace

bool WheelVariant::covers_release(const Version& release) const {
  const Version mm = major_minor(release);
  return mm >= min && mm <= max;
}

std::string WheelVariant::index_url() const {
  return "https://download.pytorch.org/whl/" + variant;
}

Expected<std::vector<Arch>> images_from_arch_list(std::string_view list) {
  TF_TRY(parsed, parse_arch_list(list));
  return images(parsed);
}

Expected<ComputeCapability> Knowledge::resolve_gpu(std::string_view spec) const {
  if (auto cc = ComputeCapability::parse(spec)) return *cc;
  const std::string wanted = normalise_name(spec);
  if (wanted.empty()) return fail("--gpu needs a value: a product name (\"RTX 5090\"), sm_120 or 12.0");
  std::set<ComputeCapability> exact;
  std::set<ComputeCapability> partial;
  std::vector<std::string> partial_names;
  for (const GpuProduct& product : gpus) {
    for (const std::string& name : product.names) {
      const std::string normal = normalise_name(name);
      if (normal == wanted)
        exact.insert(product.cc);
      else if (contains_words(normal, wanted)) {
        partial.insert(product.cc);
        partial_names.push_back(name + " (" + product.cc.str() + ")");
      }
    }
  }
  if (exact.size() == 1) return *exact.begin();
  if (exact.empty() && partial.size() == 1) return *partial.begin();
  if (exact.size() > 1 || partial.size() > 1) {
    std::string names;
    for (const std::string& n : partial_names) names += (names.empty() ? "" : ", ") + n;
    return fail("GPU name '" + std::string(spec) + "' is ambiguous: " + names +
                "; give the full product name or the compute capability (e.g. 12.0)");
  }
  return fail("unknown GPU '" + std::string(spec) +
              "': not a product in recipes/gpus.toml, nor sm_XY or X.Y; give the compute capability "
              "(see https://developer.nvidia.com/cuda-gpus), e.g. --gpu 12.0");
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
    // fall back to the Linux number, which a branch's Windows drivers share.
    const Version& needed = windows && floor.windows ? *floor.windows : floor.linux;
    if (needed <= driver && (!best || floor.cuda > *best)) best = floor.cuda;
  }
  return best;
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

Expected<Knowledge> parse_knowledge(const std::vector<KnowledgeText>& files) {
  Knowledge k;
  for (const KnowledgeText& file : files) {
    if (auto r = parse_file(file, k); !r) return std::unexpected(r.error());
  }
  return k;
}

}  // namespace torchfix
