// The schema of each knowledge table (recipes/gpus.toml, toolkits.toml,
// drivers.toml, torch-wheels.toml, triton-ptxas.toml, extensions.toml) and the
// parsers of their rows into Knowledge. A file is checked whole against its
// schema before a row is read (core/facts/toml_text.hpp): an unknown array or key,
// a wrong type or an unknown word is an error naming the file and line.
// docs/knowledge.md describes every table for people adding rows.

#include <algorithm>

#include "core/arch/arch_list.hpp"
#include "core/facts/knowledge.hpp"
#include "core/facts/toml_text.hpp"

namespace torchfix {
namespace {

using enum FieldType;
constexpr Need opt = Need::optional;

constexpr Field k_source{"source", text};

// Platform words of [[wheel]] and [[pypi_default]]: the wheel tags torchfix
// tells apart (manylinux x86_64, manylinux aarch64, win_amd64).
constexpr std::string_view k_wheel_platforms[] = {"x86_64", "aarch64", "windows"};
// How a wheel row's arch list is known: read in the build script, said by a
// maintainer, measured from the binary (wins over the others), quoted from
// torch.cuda.get_arch_list() in user reports, or not verified.
constexpr std::string_view k_confidence[] = {"build script", "maintainer", "measured", "reports", "UNVERIFIED"};

constexpr Field k_gpu_fields[] = {{"cc", cc}, {"names", texts}, {"tegra", boolean, opt}, k_source};
constexpr Field k_driver_floor_fields[] = {{"cuda", version}, {"linux", version}, {"windows", version, opt}, k_source};
constexpr Field k_minor_compat_fields[] = {
    {"cuda_major", integer}, {"linux", version}, {"windows", version, opt}, k_source};
constexpr Field k_nvcc_arch_fields[] = {{"archs", texts}, {"first", version, opt}, {"last", version, opt}, k_source};
constexpr Field k_host_compiler_fields[] = {
    {"cuda_min", version}, {"cuda_max", version}, {"gcc_below", integer, opt}, {"clang_below", integer, opt}, k_source};
// The compiler families a [[compiler_package]] row installs.
constexpr std::string_view k_compiler_families[] = {"gcc", "clang"};
constexpr Field k_compiler_package_fields[] = {{"os", texts},     {"family", text, Need::required, k_compiler_families},
                                               {"command", text}, {"cxx", text},
                                               {"cc", text},      k_source};
constexpr Field k_wheel_fields[] = {{"min", version},
                                    {"max", version},
                                    {"variant", text},
                                    {"platform", text, opt, k_wheel_platforms},
                                    {"arch_list", text},
                                    {"confidence", text, Need::required, k_confidence},
                                    k_source};
constexpr Field k_pypi_default_fields[] = {{"min", version},
                                           {"max", version},
                                           {"platform", text, Need::required, k_wheel_platforms},
                                           {"variant", text},
                                           k_source};
constexpr Field k_torch_python_fields[] = {
    {"min", version}, {"max", version}, {"python_min", version}, {"python_max", version}, k_source};
constexpr Field k_extension_pin_fields[] = {{"distribution", text}, {"version", text}, {"torch", version}, k_source};
constexpr Field k_extension_fields[] = {{"distribution", text}, {"min_cc", cc}, {"torch_abi", boolean, opt}, k_source};
constexpr Field k_extension_wheel_fields[] = {
    {"distribution", text}, {"min", version}, {"max", version}, {"arch_list", text}, k_source};
constexpr Field k_project_index_fields[] = {{"distributions", texts}, {"page", text},          {"torch", version},
                                            {"variants", texts},      {"pythons", texts, opt}, k_source};
constexpr Field k_project_source_fields[] = {
    {"distribution", text}, {"repository", text}, {"tag_format", text}, {"odd_tags", texts, opt}, k_source};
constexpr Field k_gpu_driver_fields[] = {
    {"generation", text},          {"cc_min", cc}, {"cc_max", cc}, {"linux", version}, {"windows", version, opt},
    {"last_branch", integer, opt}, k_source};
// Jetson Linux releases and the CUDA a driver branch reports between toolkit
// releases (recipes/drivers.toml), read by the platform-aware driver decision.
constexpr Field k_l4t_fields[] = {
    {"release", version}, {"jetpack", version}, {"cuda", version}, {"driver", version, opt}, k_source};
constexpr Field k_driver_cuda_fields[] = {{"linux", version}, {"windows", version, opt}, {"cuda", version}, k_source};
constexpr Field k_driver_package_fields[] = {{"os", texts}, {"command", text}, k_source};
constexpr Field k_triton_fields[] = {
    {"min", version}, {"max", version}, {"ptxas", version}, {"ptxas_blackwell", version, opt}, k_source};

constexpr TableSchema k_gpu{"[[gpu]]", k_gpu_fields};
constexpr TableSchema k_driver_floor{"[[driver_floor]]", k_driver_floor_fields};
constexpr TableSchema k_minor_compat{"[[minor_compat]]", k_minor_compat_fields};
constexpr TableSchema k_nvcc_arch{"[[nvcc_arch]]", k_nvcc_arch_fields};
constexpr TableSchema k_host_compiler{"[[host_compiler]]", k_host_compiler_fields};
constexpr TableSchema k_compiler_package{"[[compiler_package]]", k_compiler_package_fields};
constexpr TableSchema k_driver_package{"[[driver_package]]", k_driver_package_fields};
constexpr TableSchema k_wheel{"[[wheel]]", k_wheel_fields};
constexpr TableSchema k_pypi_default{"[[pypi_default]]", k_pypi_default_fields};
constexpr TableSchema k_torch_python{"[[torch_python]]", k_torch_python_fields};
constexpr TableSchema k_extension_pin{"[[extension_pin]]", k_extension_pin_fields};
constexpr TableSchema k_extension{"[[extension]]", k_extension_fields};
constexpr TableSchema k_extension_wheel{"[[extension_wheel]]", k_extension_wheel_fields};
constexpr TableSchema k_project_index{"[[project_index]]", k_project_index_fields};
constexpr TableSchema k_project_source{"[[project_source]]", k_project_source_fields};
constexpr TableSchema k_gpu_driver{"[[gpu_driver]]", k_gpu_driver_fields};
constexpr TableSchema k_triton{"[[triton]]", k_triton_fields};
constexpr TableSchema k_l4t{"[[l4t]]", k_l4t_fields};
constexpr TableSchema k_driver_cuda{"[[driver_cuda]]", k_driver_cuda_fields};

constexpr Field rows_of(std::string_view key, const TableSchema& schema) {
  return Field{key, tables, opt, {}, &schema};
}

constexpr Field k_gpus_file[] = {rows_of("gpu", k_gpu)};
constexpr Field k_toolkits_file[] = {rows_of("driver_floor", k_driver_floor), rows_of("minor_compat", k_minor_compat),
                                     rows_of("nvcc_arch", k_nvcc_arch), rows_of("host_compiler", k_host_compiler),
                                     rows_of("compiler_package", k_compiler_package)};
constexpr Field k_drivers_file[] = {rows_of("gpu_driver", k_gpu_driver), rows_of("l4t", k_l4t),
                                    rows_of("driver_cuda", k_driver_cuda), rows_of("driver_package", k_driver_package)};
constexpr Field k_wheels_file[] = {rows_of("wheel", k_wheel), rows_of("pypi_default", k_pypi_default),
                                   rows_of("torch_python", k_torch_python), rows_of("extension_pin", k_extension_pin)};
constexpr Field k_triton_file[] = {rows_of("triton", k_triton)};
constexpr Field k_extensions_file[] = {rows_of("extension_wheel", k_extension_wheel), rows_of("extension", k_extension),
                                       rows_of("project_index", k_project_index),
                                       rows_of("project_source", k_project_source),
                                       rows_of("project_source", k_project_source)};
// A file of another name (a test's text) may hold any of the arrays.
constexpr Field k_any_file[] = {rows_of("gpu", k_gpu),
                                rows_of("driver_floor", k_driver_floor),
                                rows_of("minor_compat", k_minor_compat),
                                rows_of("nvcc_arch", k_nvcc_arch),
                                rows_of("host_compiler", k_host_compiler),
                                rows_of("compiler_package", k_compiler_package),
                                rows_of("gpu_driver", k_gpu_driver),
                                rows_of("wheel", k_wheel),
                                rows_of("pypi_default", k_pypi_default),
                                rows_of("torch_python", k_torch_python),
                                rows_of("extension_pin", k_extension_pin),
                                rows_of("extension", k_extension),
                                rows_of("extension_wheel", k_extension_wheel),
                                rows_of("project_index", k_project_index),
                                rows_of("project_source", k_project_source),
                                rows_of("triton", k_triton),
                                rows_of("l4t", k_l4t),
                                rows_of("driver_cuda", k_driver_cuda),
                                rows_of("driver_package", k_driver_package)};

struct FileSchema {
  std::string_view file;
  TableSchema schema;
};

constexpr FileSchema k_files[] = {
    {"gpus.toml", {"recipes/gpus.toml", k_gpus_file}},
    {"toolkits.toml", {"recipes/toolkits.toml", k_toolkits_file}},
    {"drivers.toml", {"recipes/drivers.toml", k_drivers_file}},
    {"torch-wheels.toml", {"recipes/torch-wheels.toml", k_wheels_file}},
    {"triton-ptxas.toml", {"recipes/triton-ptxas.toml", k_triton_file}},
    {"extensions.toml", {"recipes/extensions.toml", k_extensions_file}},
};
constexpr TableSchema k_any{"this file", k_any_file};

const TableSchema& schema_for(const std::string& file) {
  const std::string_view name = std::string_view(file).substr(file.rfind('/') + 1);
  const auto found = std::ranges::find(k_files, name, &FileSchema::file);
  return found == std::end(k_files) ? k_any : found->schema;
}

Expected<void> parse_gpu(const Row& r, Knowledge& k) {
  TF_TRY(cc, r.cc("cc"));
  TF_TRY(names, r.strings("names"));
  TF_TRY(source, r.source());
  k.gpus.push_back({cc, names, r.flag("tegra"), source});
  return {};
}

Expected<void> parse_driver_floor(const Row& r, Knowledge& k) {
  TF_TRY(cuda, r.version("cuda"));
  TF_TRY(linux_floor, r.version("linux"));
  TF_TRY(windows, r.optional_version("windows"));
  TF_TRY(source, r.source());
  k.driver_floors.push_back({cuda, linux_floor, windows, source});
  return {};
}

Expected<void> parse_minor_compat(const Row& r, Knowledge& k) {
  TF_TRY(major, r.integer("cuda_major"));
  TF_TRY(linux_floor, r.version("linux"));
  TF_TRY(windows, r.optional_version("windows"));
  TF_TRY(source, r.source());
  k.minor_compat.push_back({static_cast<int>(major), linux_floor, windows, source});
  return {};
}

Expected<void> parse_nvcc_arch(const Row& r, Knowledge& k) {
  TF_TRY(names, r.strings("archs"));
  NvccArchRange range;
  for (const std::string& name : names) {
    auto arch = Arch::parse(name);
    if (!arch) return std::unexpected(r.error(arch.error().message, "archs"));
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
}

std::optional<int> optional_int(const Row& r, std::string_view key) {
  if (auto v = r.optional_integer(key)) return static_cast<int>(*v);
  return std::nullopt;
}

Expected<void> parse_host_compiler(const Row& r, Knowledge& k) {
  TF_TRY(cuda_min, r.version("cuda_min"));
  TF_TRY(cuda_max, r.version("cuda_max"));
  TF_TRY(source, r.source());
  k.host_compilers.push_back(
      {cuda_min, cuda_max, optional_int(r, "gcc_below"), optional_int(r, "clang_below"), source});
  return {};
}

Expected<void> parse_compiler_package(const Row& r, Knowledge& k) {
  TF_TRY(os, r.strings("os"));
  TF_TRY(family, r.string("family"));
  TF_TRY(command, r.string("command"));
  TF_TRY(cxx, r.string("cxx"));
  TF_TRY(cc, r.string("cc"));
  TF_TRY(source, r.source());
  k.compiler_packages.push_back({os, family, command, cxx, cc, source});
  return {};
}

Expected<void> parse_wheel(const Row& r, Knowledge& k) {
  WheelVariant w;
  TF_TRY(min, r.version("min"));
  TF_TRY(max, r.version("max"));
  TF_TRY(variant, r.string("variant"));
  TF_TRY(arch_list, r.string("arch_list"));
  TF_TRY(confidence, r.string("confidence"));
  TF_TRY(source, r.source());
  auto cuda = variant.starts_with("cu") ? Version::parse(variant.substr(2)) : std::nullopt;
  if (!cuda || cuda->parts().size() != 1 || cuda->major() < 100) {
    return std::unexpected(r.error("variant '" + variant + "' is not a CUDA variant like cu128", "variant"));
  }
  auto images = images_from_arch_list(arch_list);
  if (!images) return std::unexpected(r.error(images.error().message, "arch_list"));
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
}

Expected<void> parse_extension(const Row& r, Knowledge& k) {
  TF_TRY(distribution, r.string("distribution"));
  TF_TRY(cc, r.cc("min_cc"));
  TF_TRY(source, r.source());
  k.extensions.push_back({distribution, cc, r.flag("torch_abi"), source});
  return {};
}

Expected<void> parse_extension_wheel(const Row& r, Knowledge& k) {
  TF_TRY(distribution, r.string("distribution"));
  TF_TRY(min, r.version("min"));
  TF_TRY(max, r.version("max"));
  TF_TRY(arch_list, r.string("arch_list"));
  TF_TRY(source, r.source());
  auto images = images_from_arch_list(arch_list);
  if (!images) return std::unexpected(r.error("arch_list: " + images.error().message, "arch_list"));
  k.extension_wheels.push_back({distribution, min, max, arch_list, *images, source});
  return {};
}

// The strings of the optional array `key` (empty when absent).
Expected<std::vector<std::string>> optional_strings(const Row& r, std::string_view key) {
  if (!r.has(key)) return std::vector<std::string>{};
  return r.strings(key);
}

// The page's torch placeholder: {torch} (major.minor) or an exact release.
bool names_torch(const std::string& page) {
  return page.contains("{torch}") || page.contains("{release}") || page.contains("{release_nodot}");
}

Expected<void> parse_project_index(const Row& r, Knowledge& k) {
  TF_TRY(distributions, r.strings("distributions"));
  TF_TRY(page, r.string("page"));
  TF_TRY(torch, r.version("torch"));
  TF_TRY(variants, r.strings("variants"));
  TF_TRY(pythons, optional_strings(r, "pythons"));
  TF_TRY(source, r.source());
  if (!page.starts_with("https://") || !names_torch(page) || !page.contains("{variant}")) {
    return std::unexpected(r.error(
        "page '" + page + "' is not an https URL with {variant} and {torch}, {release} or {release_nodot}", "page"));
  }
  ProjectIndexPage row{distributions, page, torch, variants, pythons, source};
  if (row.exact() && torch.parts().size() != 3) {
    return std::unexpected(r.error("torch '" + torch.str() + "' is no X.Y.Z release, which the page names", "torch"));
  }
  if (page.contains("{python_nodot}") == pythons.empty()) {
    return std::unexpected(r.error("pythons must be listed exactly where the page names {python_nodot}", "pythons"));
  }
  k.project_index.push_back(std::move(row));
  return {};
}

Expected<void> parse_project_source(const Row& r, Knowledge& k) {
  TF_TRY(distribution, r.string("distribution"));
  TF_TRY(repository, r.string("repository"));
  TF_TRY(tag_format, r.string("tag_format"));
  TF_TRY(odd_tags, optional_strings(r, "odd_tags"));
  TF_TRY(source, r.source());
  if (!repository.starts_with("https://") || !repository.ends_with(".git")) {
    return std::unexpected(r.error("repository '" + repository + "' is not an https git URL (...git)", "repository"));
  }
  if (!tag_format.contains("{version}")) {
    return std::unexpected(r.error("tag_format '" + tag_format + "' has no {version}", "tag_format"));
  }
  k.project_sources.push_back({distribution, repository, tag_format, odd_tags, source});
  return {};
}

Expected<void> parse_gpu_driver(const Row& r, Knowledge& k) {
  TF_TRY(generation, r.string("generation"));
  TF_TRY(cc_min, r.cc("cc_min"));
  TF_TRY(cc_max, r.cc("cc_max"));
  TF_TRY(linux_first, r.version("linux"));
  TF_TRY(windows, r.optional_version("windows"));
  TF_TRY(source, r.source());
  k.gpu_drivers.push_back({generation, cc_min, cc_max, linux_first, windows, optional_int(r, "last_branch"), source});
  return {};
}

Expected<void> parse_pypi_default(const Row& r, Knowledge& k) {
  TF_TRY(min, r.version("min"));
  TF_TRY(max, r.version("max"));
  TF_TRY(platform, r.string("platform"));
  TF_TRY(variant, r.string("variant"));
  TF_TRY(source, r.source());
  k.pypi_defaults.push_back({min, max, platform, variant, source});
  return {};
}

Expected<void> parse_torch_python(const Row& r, Knowledge& k) {
  TF_TRY(min, r.version("min"));
  TF_TRY(max, r.version("max"));
  TF_TRY(python_min, r.version("python_min"));
  TF_TRY(python_max, r.version("python_max"));
  TF_TRY(source, r.source());
  k.torch_pythons.push_back({min, max, python_min, python_max, source});
  return {};
}

Expected<void> parse_extension_pin(const Row& r, Knowledge& k) {
  TF_TRY(distribution, r.string("distribution"));
  TF_TRY(version, r.string("version"));
  TF_TRY(torch, r.version("torch"));
  TF_TRY(source, r.source());
  k.extension_pins.push_back({distribution, version, torch, source});
  return {};
}

Expected<void> parse_triton(const Row& r, Knowledge& k) {
  TF_TRY(min, r.version("min"));
  TF_TRY(max, r.version("max"));
  TF_TRY(ptxas, r.version("ptxas"));
  TF_TRY(blackwell, r.optional_version("ptxas_blackwell"));
  TF_TRY(source, r.source());
  k.triton.push_back({min, max, ptxas, blackwell, source});
  return {};
}

Expected<void> parse_l4t(const Row& r, Knowledge& k) {
  TF_TRY(release, r.version("release"));
  TF_TRY(jetpack, r.version("jetpack"));
  TF_TRY(cuda, r.version("cuda"));
  TF_TRY(driver, r.optional_version("driver"));
  TF_TRY(source, r.source());
  k.l4t.push_back({release, jetpack, cuda, driver, source});
  return {};
}

Expected<void> parse_driver_cuda(const Row& r, Knowledge& k) {
  TF_TRY(linux_first, r.version("linux"));
  TF_TRY(windows, r.optional_version("windows"));
  TF_TRY(cuda, r.version("cuda"));
  TF_TRY(source, r.source());
  k.driver_cudas.push_back({linux_first, windows, cuda, source});
  return {};
}

Expected<void> parse_driver_package(const Row& r, Knowledge& k) {
  TF_TRY(os, r.strings("os"));
  TF_TRY(command, r.string("command"));
  TF_TRY(source, r.source());
  k.driver_packages.push_back({os, command, source});
  return {};
}

// Which parser reads the rows of each array.
struct ArrayParser {
  std::string_view name;
  Expected<void> (*parse)(const Row&, Knowledge&);
};

constexpr ArrayParser k_parsers[] = {
    {"gpu", parse_gpu},
    {"driver_floor", parse_driver_floor},
    {"minor_compat", parse_minor_compat},
    {"nvcc_arch", parse_nvcc_arch},
    {"host_compiler", parse_host_compiler},
    {"compiler_package", parse_compiler_package},
    {"wheel", parse_wheel},
    {"extension", parse_extension},
    {"extension_wheel", parse_extension_wheel},
    {"project_index", parse_project_index},
    {"project_source", parse_project_source},
    {"gpu_driver", parse_gpu_driver},
    {"pypi_default", parse_pypi_default},
    {"torch_python", parse_torch_python},
    {"extension_pin", parse_extension_pin},
    {"triton", parse_triton},
    {"l4t", parse_l4t},
    {"driver_cuda", parse_driver_cuda},
    {"driver_package", parse_driver_package},
};

Expected<void> parse_file(const KnowledgeText& input, Knowledge& k) {
  TF_TRY(root, parse_checked_toml(input.text, input.file, schema_for(input.file)));
  for (const ArrayParser& parser : k_parsers) {
    auto parsed = for_each_toml_row(root, input.file, parser.name, [&](const Row& r) { return parser.parse(r, k); });
    if (!parsed) return parsed;
  }
  return {};
}

}  // namespace

Expected<std::vector<Arch>> images_from_arch_list(std::string_view list) {
  TF_TRY(parsed, parse_arch_list(list));
  return images(parsed);
}

Expected<Knowledge> parse_knowledge(const std::vector<KnowledgeText>& files) {
  Knowledge k;
  for (const KnowledgeText& file : files) {
    if (auto r = parse_file(file, k); !r) return std::unexpected(r.error());
  }
  return k;
}

}  // namespace torchfix
