// The schema of each knowledge table (recipes/gpus.toml, toolkits.toml,
// drivers.toml, torch-wheels.toml, triton-ptxas.toml, extensions.toml) and the
// reading of their rows into Knowledge. Each array is declared once, as
// columns (core/facts/table_columns.hpp): a key beside the member it fills,
// which gives both the schema and the row reader. A file is checked whole
// against its schema before a row is read (core/facts/toml_text.hpp): an
// unknown array or key, a wrong type or an unknown word is an error naming
// the file and line. docs/knowledge.md describes every table for people
// adding rows.

#include <algorithm>

#include "core/arch/arch_list.hpp"
#include "core/facts/knowledge.hpp"
#include "core/facts/table_columns.hpp"
#include "core/facts/toml_text.hpp"

namespace torchfix {
namespace {

using enum FieldType;
constexpr Need opt = Need::optional;

// Platform words of [[wheel]] and [[pypi_default]]: the wheel tags torchfix
// tells apart (manylinux x86_64, manylinux aarch64, win_amd64).
constexpr std::string_view k_wheel_platforms[] = {"x86_64", "aarch64", "windows"};
// How a wheel row's arch list is known: read in the build script, said by a
// maintainer, measured from the binary (wins over the others), quoted from
// torch.cuda.get_arch_list() in user reports, or not verified.
constexpr std::string_view k_confidence[] = {"build script", "maintainer", "measured", "reports", "UNVERIFIED"};
// How a fix installs from a [[project_index]] page (PageInstall).
constexpr std::string_view k_page_installs[] = {"find-links", "no-index"};
constexpr std::string_view k_triton_distributions[] = {"triton", "triton-windows"};

// What completes a row after its columns: checks across keys, and members
// that follow from others.

// A wheel row's variant names its CUDA (cu128: 12.8) and its arch list the
// images it holds; rows without a platform are x86_64 ones.
Expected<void> finish_wheel(const Row& r, WheelVariant& w) {
  const auto cuda = Version::from_cuda_variant(w.variant);
  if (!cuda || w.variant.size() != 5) {
    return std::unexpected(r.error("variant '" + w.variant + "' is not a CUDA variant like cu128", "variant"));
  }
  auto images = images_from_arch_list(w.arch_list);
  if (!images) return std::unexpected(r.error(images.error().message, "arch_list"));
  w.cuda = *cuda;
  if (w.platform.empty()) w.platform = "x86_64";
  w.images = *images;
  return {};
}

// A JetPack wheel is one file: its release range is its torch's major.minor,
// its variant the JetPack directory's name (6.1: jp61, as in .../jp/v61/).
Expected<void> finish_jetpack_wheel(const Row& r, WheelVariant& w) {
  const auto torch = Version::parse(w.torch.substr(0, w.torch.find_first_not_of("0123456789.")));
  if (!torch || torch->parts().size() < 2) {
    return std::unexpected(r.error("torch '" + w.torch + "' does not start with a release like 2.5.0", "torch"));
  }
  if (!w.url.starts_with("https://") || !w.url.ends_with(".whl")) {
    return std::unexpected(r.error("url '" + w.url + "' is not an https URL of a .whl file", "url"));
  }
  auto images = images_from_arch_list(w.arch_list);
  if (!images) return std::unexpected(r.error(images.error().message, "arch_list"));
  w.min = w.max = Version({torch->major(), torch->minor()});
  w.variant = "jp";
  for (char c : w.jetpack) {
    if (c != '.') w.variant += c;
  }
  w.platform = "jetpack";
  w.images = *images;
  return {};
}

Expected<void> finish_extension_wheel(const Row& r, ExtensionWheel& w) {
  auto images = images_from_arch_list(w.arch_list);
  if (!images) return std::unexpected(r.error("arch_list: " + images.error().message, "arch_list"));
  w.images = *images;
  return {};
}

// The page's torch placeholder: {torch} (major.minor) or an exact release.
bool names_torch(const std::string& page) {
  return page.contains("{torch}") || page.contains("{release}") || page.contains("{release_nodot}");
}

Expected<void> finish_project_index(const Row& r, ProjectIndexPage& p) {
  if (!p.page.starts_with("https://") || !names_torch(p.page) || !p.page.contains("{variant}")) {
    return std::unexpected(r.error(
        "page '" + p.page + "' is not an https URL with {variant} and {torch}, {release} or {release_nodot}", "page"));
  }
  if (p.exact() && p.torch.parts().size() != 3) {
    return std::unexpected(r.error("torch '" + p.torch.str() + "' is no X.Y.Z release, which the page names", "torch"));
  }
  if (p.page.contains("{python_nodot}") == p.pythons.empty()) {
    return std::unexpected(r.error("pythons must be listed exactly where the page names {python_nodot}", "pythons"));
  }
  if (!p.install.empty() && p.install_source.empty()) {
    return std::unexpected(
        r.error("install '" + p.install + "' needs install_source: where the project says so", "install"));
  }
  p.how = p.install == "no-index" ? PageInstall::no_index : PageInstall::find_links;
  return {};
}

Expected<void> finish_project_source(const Row& r, ProjectSource& p) {
  if (!p.repository.starts_with("https://") || !p.repository.ends_with(".git")) {
    return std::unexpected(r.error("repository '" + p.repository + "' is not an https git URL (...git)", "repository"));
  }
  if (!p.tag_format.contains("{version}")) {
    return std::unexpected(r.error("tag_format '" + p.tag_format + "' has no {version}", "tag_format"));
  }
  return {};
}

// The [[key]] entry of a file's schema for `array`.
template <typename S>
constexpr Field rows_of(const ArrayOf<S>& array) {
  return Field{array.key(), tables, opt, {}, &array.schema};
}

// Each array as its columns (a key, the member it fills, the words it
// allows), file by file; every array also has `source` (array_of).
// recipes/gpus.toml:
constexpr Column<GpuProduct> k_gpu_columns[] = {column("cc", &GpuProduct::cc), column("names", &GpuProduct::names),
                                                column("tegra", &GpuProduct::tegra)};

// recipes/toolkits.toml: driver floors of each toolkit, the archs and host
// compilers each nvcc accepts, how distributions install a compiler.
constexpr Column<DriverFloor> k_driver_floor_columns[] = {
    column("cuda", &DriverFloor::cuda), column("linux", &DriverFloor::linux), column("windows", &DriverFloor::windows)};
constexpr Column<MinorCompat> k_minor_compat_columns[] = {column("cuda_major", &MinorCompat::cuda_major),
                                                          column("linux", &MinorCompat::linux),
                                                          column("windows", &MinorCompat::windows)};
constexpr Column<NvccArchRange> k_nvcc_arch_columns[] = {column("archs", &NvccArchRange::archs),
                                                         column("first", &NvccArchRange::first),
                                                         column("last", &NvccArchRange::last)};
constexpr Column<HostCompilerBounds> k_host_compiler_columns[] = {
    column("cuda_min", &HostCompilerBounds::cuda_min),   column("cuda_max", &HostCompilerBounds::cuda_max),
    column("gcc_below", &HostCompilerBounds::gcc_below), column("clang_below", &HostCompilerBounds::clang_below),
    column("msvc_min", &HostCompilerBounds::msvc_min),   column("msvc_below", &HostCompilerBounds::msvc_below)};
// The compiler families a [[compiler_package]] row installs.
constexpr std::string_view k_compiler_families[] = {"gcc", "clang"};
constexpr Column<CompilerPackage> k_compiler_package_columns[] = {
    column("os", &CompilerPackage::os), column("family", &CompilerPackage::family, k_compiler_families),
    column("command", &CompilerPackage::command), column("cxx", &CompilerPackage::cxx),
    column("cc", &CompilerPackage::cc)};

// recipes/drivers.toml: the drivers of each GPU generation, Jetson Linux
// releases and the CUDA a driver branch reports between toolkit releases
// (read by the platform-aware driver decision), driver install commands.
constexpr Column<GpuDriverSupport> k_gpu_driver_columns[] = {
    column("generation", &GpuDriverSupport::generation), column("cc_min", &GpuDriverSupport::cc_min),
    column("cc_max", &GpuDriverSupport::cc_max),         column("linux", &GpuDriverSupport::linux),
    column("windows", &GpuDriverSupport::windows),       column("last_branch", &GpuDriverSupport::last_branch)};
constexpr Column<L4tRelease> k_l4t_columns[] = {
    column("release", &L4tRelease::release), column("jetpack", &L4tRelease::jetpack), column("cuda", &L4tRelease::cuda),
    column("driver", &L4tRelease::driver)};
constexpr Column<DriverCuda> k_driver_cuda_columns[] = {
    column("linux", &DriverCuda::linux), column("windows", &DriverCuda::windows), column("cuda", &DriverCuda::cuda)};
constexpr Column<DriverPackage> k_driver_package_columns[] = {column("os", &DriverPackage::os),
                                                              column("command", &DriverPackage::command)};

// recipes/torch-wheels.toml. A [[wheel]] row's `platform` may go without
// (the rows before aarch64 wheels are x86_64 ones); its `cuda` and `images`
// follow from `variant` and `arch_list` (finish_wheel).
constexpr Column<WheelVariant> k_wheel_columns[] = {column("min", &WheelVariant::min),
                                                    column("max", &WheelVariant::max),
                                                    column("variant", &WheelVariant::variant),
                                                    column("platform", &WheelVariant::platform, opt, k_wheel_platforms),
                                                    column("arch_list", &WheelVariant::arch_list),
                                                    column("confidence", &WheelVariant::confidence, k_confidence)};
// NVIDIA's torch wheels for Jetson: `cuda` is the CUDA of the JetPack they
// are built on (recipes/drivers.toml [[l4t]]).
constexpr Column<WheelVariant> k_jetpack_wheel_columns[] = {
    column("torch", &WheelVariant::torch), column("jetpack", &WheelVariant::jetpack),
    column("l4t", &WheelVariant::l4t),     column("python", &WheelVariant::python, Need::required),
    column("cuda", &WheelVariant::cuda),   column("arch_list", &WheelVariant::arch_list),
    column("url", &WheelVariant::url),     column("confidence", &WheelVariant::confidence, k_confidence)};
constexpr Column<PypiDefault> k_pypi_default_columns[] = {
    column("min", &PypiDefault::min), column("max", &PypiDefault::max),
    column("platform", &PypiDefault::platform, k_wheel_platforms), column("variant", &PypiDefault::variant)};
constexpr Column<TorchPython> k_torch_python_columns[] = {
    column("min", &TorchPython::min), column("max", &TorchPython::max), column("python_min", &TorchPython::python_min),
    column("python_max", &TorchPython::python_max)};
constexpr Column<ExtensionPin> k_extension_pin_columns[] = {
    column("distribution", &ExtensionPin::distribution), column("version", &ExtensionPin::version),
    column("torch", &ExtensionPin::torch), column("built_against", &ExtensionPin::built_against, Need::optional)};

// recipes/triton-ptxas.toml.
constexpr Column<TritonPtxas> k_triton_columns[] = {
    column("min", &TritonPtxas::min),
    column("max", &TritonPtxas::max),
    column("ptxas", &TritonPtxas::ptxas),
    column("ptxas_blackwell", &TritonPtxas::ptxas_blackwell),
    column("blackwell_variable", &TritonPtxas::blackwell_variable, Need::optional),
    column("ptxas_cuda_max", &TritonPtxas::ptxas_cuda_max),
    column("torch", &TritonPtxas::torch)};
constexpr Column<TorchTriton> k_torch_triton_columns[] = {
    column("torch", &TorchTriton::torch), column("distribution", &TorchTriton::distribution, k_triton_distributions),
    column("triton", &TorchTriton::triton)};

// recipes/extensions.toml. An [[extension_wheel]] row's `images` follow
// from its `arch_list` (finish_extension_wheel).
constexpr Column<ExtensionWheel> k_extension_wheel_columns[] = {
    column("distribution", &ExtensionWheel::distribution), column("min", &ExtensionWheel::min),
    column("max", &ExtensionWheel::max), column("arch_list", &ExtensionWheel::arch_list)};
constexpr Column<ProjectIndexPage> k_project_index_columns[] = {
    column("distributions", &ProjectIndexPage::distributions),
    column("page", &ProjectIndexPage::page),
    column("torch", &ProjectIndexPage::torch),
    column("variants", &ProjectIndexPage::variants),
    column("pythons", &ProjectIndexPage::pythons, Need::optional),
    column("install", &ProjectIndexPage::install, Need::optional, k_page_installs),
    column("install_source", &ProjectIndexPage::install_source, Need::optional)};
constexpr Column<ProjectSource> k_project_source_columns[] = {
    column("distribution", &ProjectSource::distribution), column("repository", &ProjectSource::repository),
    column("tag_format", &ProjectSource::tag_format), column("odd_tags", &ProjectSource::odd_tags, Need::optional)};
constexpr Column<CondaTorchChannel> k_conda_torch_columns[] = {
    column("channel", &CondaTorchChannel::channel), column("cuda_builds", &CondaTorchChannel::cuda_builds),
    column("cuda_pin", &CondaTorchChannel::cuda_pin, Need::optional), column("last", &CondaTorchChannel::last)};
constexpr Column<SourceTorchCap> k_source_torch_cap_columns[] = {
    column("distribution", &SourceTorchCap::distribution), column("release", &SourceTorchCap::release),
    column("torch_min", &SourceTorchCap::torch_min), column("torch_max", &SourceTorchCap::torch_max)};
constexpr Column<CudaLibrary> k_cuda_library_columns[] = {
    column("distribution", &CudaLibrary::distribution), column("prefix", &CudaLibrary::prefix),
    column("cuda", &CudaLibrary::cuda), column("first", &CudaLibrary::first),
    column("override_variable", &CudaLibrary::override_variable, Need::optional)};
constexpr Column<RuntimeDll> k_runtime_dll_columns[] = {
    column("dlls", &RuntimeDll::dlls), column("installer", &RuntimeDll::installer), column("url", &RuntimeDll::url),
    column("arguments", &RuntimeDll::arguments)};
constexpr Column<UncompressedRelease> k_uncompressed_release_columns[] = {
    column("distribution", &UncompressedRelease::distribution), column("min", &UncompressedRelease::min),
    column("max", &UncompressedRelease::max), column("release", &UncompressedRelease::release)};
constexpr Column<BrokenRelease> k_broken_release_columns[] = {column("distribution", &BrokenRelease::distribution),
                                                              column("min", &BrokenRelease::min),
                                                              column("max", &BrokenRelease::max),
                                                              column("min_cc", &BrokenRelease::min_cc),
                                                              column("max_cc", &BrokenRelease::max_cc),
                                                              column("fixed", &BrokenRelease::fixed),
                                                              column("what", &BrokenRelease::what)};
constexpr Column<VariantIndex> k_variant_index_columns[] = {
    column("distribution", &VariantIndex::distribution), column("version", &VariantIndex::version),
    column("variant", &VariantIndex::variant), column("index", &VariantIndex::index)};
constexpr Column<CompanionOps> k_companion_ops_columns[] = {column("distribution", &CompanionOps::distribution),
                                                            column("library", &CompanionOps::library)};
constexpr Column<RuntimeBuild> k_runtime_build_columns[] = {column("distribution", &RuntimeBuild::distribution),
                                                            column("refusal", &RuntimeBuild::refusal),
                                                            column("unless_prebuilt", &RuntimeBuild::unless_prebuilt)};
constexpr Column<FatbinCompression> k_fatbin_compression_columns[] = {
    column("cuda_major", &FatbinCompression::cuda_major), column("driver_cuda", &FatbinCompression::driver_cuda),
    column("torch_wheels", &FatbinCompression::torch_wheels, Need::optional)};
constexpr Column<ExtensionSupport> k_extension_columns[] = {column("distribution", &ExtensionSupport::distribution),
                                                            column("min_cc", &ExtensionSupport::min_cc),
                                                            column("torch_abi", &ExtensionSupport::torch_abi)};

constexpr auto k_gpu = array_of<k_gpu_columns>("[[gpu]]");
constexpr auto k_driver_floor = array_of<k_driver_floor_columns>("[[driver_floor]]");
constexpr auto k_minor_compat = array_of<k_minor_compat_columns>("[[minor_compat]]");
constexpr auto k_nvcc_arch = array_of<k_nvcc_arch_columns>("[[nvcc_arch]]");
constexpr auto k_host_compiler = array_of<k_host_compiler_columns>("[[host_compiler]]");
constexpr auto k_compiler_package = array_of<k_compiler_package_columns>("[[compiler_package]]");
constexpr auto k_gpu_driver = array_of<k_gpu_driver_columns>("[[gpu_driver]]");
constexpr auto k_l4t = array_of<k_l4t_columns>("[[l4t]]");
constexpr auto k_driver_cuda = array_of<k_driver_cuda_columns>("[[driver_cuda]]");
constexpr auto k_driver_package = array_of<k_driver_package_columns>("[[driver_package]]");
constexpr auto k_wheel = array_of<k_wheel_columns>("[[wheel]]", finish_wheel);
constexpr auto k_jetpack_wheel = array_of<k_jetpack_wheel_columns>("[[jetpack_wheel]]", finish_jetpack_wheel);
constexpr auto k_pypi_default = array_of<k_pypi_default_columns>("[[pypi_default]]");
constexpr auto k_torch_python = array_of<k_torch_python_columns>("[[torch_python]]");
constexpr auto k_extension_pin = array_of<k_extension_pin_columns>("[[extension_pin]]");
constexpr auto k_triton = array_of<k_triton_columns>("[[triton]]");
constexpr auto k_torch_triton = array_of<k_torch_triton_columns>("[[torch_triton]]");
constexpr auto k_extension_wheel = array_of<k_extension_wheel_columns>("[[extension_wheel]]", finish_extension_wheel);
constexpr auto k_extension = array_of<k_extension_columns>("[[extension]]");
constexpr auto k_cuda_library = array_of<k_cuda_library_columns>("[[cuda_library]]");
constexpr auto k_runtime_dll = array_of<k_runtime_dll_columns>("[[runtime_dll]]");
constexpr auto k_uncompressed_release = array_of<k_uncompressed_release_columns>("[[uncompressed_release]]");
constexpr auto k_broken_release = array_of<k_broken_release_columns>("[[broken_release]]");
constexpr auto k_variant_index = array_of<k_variant_index_columns>("[[variant_index]]");
constexpr auto k_companion_ops = array_of<k_companion_ops_columns>("[[companion_ops]]");
constexpr auto k_runtime_build = array_of<k_runtime_build_columns>("[[runtime_build]]");
constexpr auto k_fatbin_compression = array_of<k_fatbin_compression_columns>("[[fatbin_compression]]");
constexpr auto k_project_index = array_of<k_project_index_columns>("[[project_index]]", finish_project_index);
constexpr auto k_conda_torch = array_of<k_conda_torch_columns>("[[conda_torch]]");
constexpr auto k_project_source = array_of<k_project_source_columns>("[[project_source]]", finish_project_source);
constexpr auto k_source_torch_cap = array_of<k_source_torch_cap_columns>("[[source_torch_cap]]");

constexpr Field k_gpus_file[] = {rows_of(k_gpu)};
constexpr Field k_toolkits_file[] = {rows_of(k_driver_floor),     rows_of(k_minor_compat),
                                     rows_of(k_nvcc_arch),        rows_of(k_host_compiler),
                                     rows_of(k_compiler_package), rows_of(k_fatbin_compression)};
constexpr Field k_drivers_file[] = {rows_of(k_gpu_driver),         rows_of(k_l4t),
                                    rows_of(k_driver_cuda),        rows_of(k_driver_package),
                                    rows_of(k_cuda_library),       rows_of(k_uncompressed_release),
                                    rows_of(k_fatbin_compression), rows_of(k_runtime_dll)};
constexpr Field k_wheels_file[] = {rows_of(k_wheel),        rows_of(k_jetpack_wheel), rows_of(k_pypi_default),
                                   rows_of(k_torch_python), rows_of(k_extension_pin), rows_of(k_conda_torch)};
constexpr Field k_triton_file[] = {rows_of(k_triton), rows_of(k_torch_triton)};
constexpr Field k_extensions_file[] = {
    rows_of(k_extension_wheel),  rows_of(k_extension),     rows_of(k_project_index),        rows_of(k_project_source),
    rows_of(k_source_torch_cap), rows_of(k_cuda_library),  rows_of(k_uncompressed_release), rows_of(k_broken_release),
    rows_of(k_variant_index),    rows_of(k_companion_ops), rows_of(k_runtime_build)};

// A file of another name (a test's text) may hold any of the arrays.
constexpr Field k_any_file[] = {rows_of(k_gpu),
                                rows_of(k_driver_floor),
                                rows_of(k_minor_compat),
                                rows_of(k_nvcc_arch),
                                rows_of(k_host_compiler),
                                rows_of(k_compiler_package),
                                rows_of(k_gpu_driver),
                                rows_of(k_wheel),
                                rows_of(k_jetpack_wheel),
                                rows_of(k_pypi_default),
                                rows_of(k_torch_python),
                                rows_of(k_extension_pin),
                                rows_of(k_conda_torch),
                                rows_of(k_extension),
                                rows_of(k_extension_wheel),
                                rows_of(k_project_index),
                                rows_of(k_project_source),
                                rows_of(k_source_torch_cap),
                                rows_of(k_triton),
                                rows_of(k_torch_triton),
                                rows_of(k_l4t),
                                rows_of(k_driver_cuda),
                                rows_of(k_driver_package),
                                rows_of(k_cuda_library),
                                rows_of(k_runtime_dll),
                                rows_of(k_uncompressed_release),
                                rows_of(k_broken_release),
                                rows_of(k_variant_index),
                                rows_of(k_companion_ops),
                                rows_of(k_runtime_build),
                                rows_of(k_fatbin_compression)};

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

Expected<void> parse_file(const KnowledgeText& input, Knowledge& k) {
  const std::string& file = input.file;
  TF_TRY(root, parse_checked_toml(input.text, file, schema_for(file)));
  Expected<void> read = read_rows(root, file, k_gpu, k.gpus);
  if (read) read = read_rows(root, file, k_driver_floor, k.driver_floors);
  if (read) read = read_rows(root, file, k_minor_compat, k.minor_compat);
  if (read) read = read_rows(root, file, k_nvcc_arch, k.nvcc_archs);
  if (read) read = read_rows(root, file, k_host_compiler, k.host_compilers);
  if (read) read = read_rows(root, file, k_compiler_package, k.compiler_packages);
  if (read) read = read_rows(root, file, k_wheel, k.wheels);
  if (read) read = read_rows(root, file, k_jetpack_wheel, k.jetpack_wheels);
  if (read) read = read_rows(root, file, k_extension, k.extensions);
  if (read) read = read_rows(root, file, k_extension_wheel, k.extension_wheels);
  if (read) read = read_rows(root, file, k_project_index, k.project_index);
  if (read) read = read_rows(root, file, k_project_source, k.project_sources);
  if (read) read = read_rows(root, file, k_source_torch_cap, k.source_torch_caps);
  if (read) read = read_rows(root, file, k_gpu_driver, k.gpu_drivers);
  if (read) read = read_rows(root, file, k_pypi_default, k.pypi_defaults);
  if (read) read = read_rows(root, file, k_torch_python, k.torch_pythons);
  if (read) read = read_rows(root, file, k_extension_pin, k.extension_pins);
  if (read) read = read_rows(root, file, k_conda_torch, k.conda_torch);
  if (read) read = read_rows(root, file, k_triton, k.triton);
  if (read) read = read_rows(root, file, k_torch_triton, k.torch_tritons);
  if (read) read = read_rows(root, file, k_l4t, k.l4t);
  if (read) read = read_rows(root, file, k_driver_cuda, k.driver_cudas);
  if (read) read = read_rows(root, file, k_driver_package, k.driver_packages);
  if (read) read = read_rows(root, file, k_cuda_library, k.cuda_libraries);
  if (read) read = read_rows(root, file, k_runtime_dll, k.runtime_dlls);
  if (read) read = read_rows(root, file, k_uncompressed_release, k.uncompressed_releases);
  if (read) read = read_rows(root, file, k_broken_release, k.broken_releases);
  if (read) read = read_rows(root, file, k_variant_index, k.variant_indexes);
  if (read) read = read_rows(root, file, k_fatbin_compression, k.fatbin_compression);
  if (read) read = read_rows(root, file, k_companion_ops, k.companion_ops);
  if (read) read = read_rows(root, file, k_runtime_build, k.runtime_builds);
  return read;
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
