#include "core/situation/snapshot.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/enum_names.hpp"
#include "core/base/json_field.hpp"
#include "core/base/json_text.hpp"
#include "core/base/snapshot_bounds.hpp"

namespace torchfix {
namespace {

using nlohmann::json;

// Optional fields are written as null and read back from null or absence, so
// that snapshots written by older versions (fewer fields) still load.
template <typename T, typename F>
json opt(const std::optional<T>& value, F&& convert) {
  return value ? convert(*value) : json(nullptr);
}

json arch_names(const std::vector<Arch>& archs) {
  json out = json::array();
  for (const Arch& a : archs) out.push_back(a.name());
  return out;
}

std::vector<Arch> archs_from(const json& j, const char* field) {
  std::vector<Arch> out;
  if (!j.contains(field) || j.at(field).is_null()) return out;
  for (const auto& name : j.at(field)) {
    auto arch = Arch::parse(name.get<std::string>());
    if (!arch) throw std::invalid_argument(std::string(field) + ": " + arch.error().message);
    out.push_back(*arch);
  }
  return out;
}

std::optional<std::string> opt_string(const json& j, const char* field) {
  if (!j.contains(field) || j.at(field).is_null()) return std::nullopt;
  return j.at(field).get<std::string>();
}

std::optional<Version> opt_version(const json& j, const char* field) {
  auto text = opt_string(j, field);
  if (!text) return std::nullopt;
  auto v = Version::parse(*text);
  if (!v) throw std::invalid_argument(std::string(field) + ": '" + *text + "' is not a version");
  return v;
}

template <typename T>
std::optional<T> opt_number(const json& j, const char* field) {
  if (!j.contains(field) || j.at(field).is_null()) return std::nullopt;
  return j.at(field).get<T>();
}

std::string str_or(const json& j, const char* field, std::string fallback = {}) {
  return j.contains(field) && j.at(field).is_string() ? j.at(field).get<std::string>() : fallback;
}

json libcuda_link_json(const LibcudaLink& l) {
  const auto path = [](const std::optional<std::string>& p) { return p ? json(*p) : json(nullptr); };
  return {{"triton_dirs", l.triton_dirs},
          {"linker_dirs", l.linker_dirs},
          {"libcuda_so", path(l.libcuda_so)},
          {"libcuda_so_1", path(l.libcuda_so_1)}};
}

json mounts_json(const std::vector<Mount>& mounts) {
  json out = json::array();
  for (const Mount& m : mounts) {
    out.push_back({{"point", m.point}, {"root", m.root}, {"fs_type", m.fs_type}, {"source", m.source}});
  }
  return out;
}

json version_json(const Version& v) {
  return v.str();
}

constexpr EnumName<CompilerFamily> k_families[] = {{CompilerFamily::gcc, "gcc"},
                                                   {CompilerFamily::clang, "clang"},
                                                   {CompilerFamily::other, "other"},
                                                   {CompilerFamily::msvc, "msvc"}};
static_assert(in_order(k_families));
constexpr EnumName<PythonStatus> k_statuses[] = {{PythonStatus::ok, "ok"},
                                                 {PythonStatus::no_torch, "no_torch"},
                                                 {PythonStatus::import_failed, "import_failed"},
                                                 {PythonStatus::crashed, "crashed"},
                                                 {PythonStatus::timed_out, "timed_out"},
                                                 {PythonStatus::not_runnable, "not_runnable"}};
static_assert(in_order(k_statuses));
constexpr EnumName<IndexAnswer> k_answers[] = {
    {IndexAnswer::listed, "listed"}, {IndexAnswer::absent, "absent"}, {IndexAnswer::unreachable, "unreachable"}};
static_assert(in_order(k_answers));

template <typename Enum, std::size_t N>
Enum enum_from(const json& j, const char* field, const EnumName<Enum> (&names)[N], Enum fallback) {
  if (!j.contains(field)) return fallback;
  const auto text = j.at(field).get<std::string>();
  if (auto value = value_in(names, text)) return *value;
  throw std::invalid_argument(std::string(field) + ": unknown value '" + text + "'");
}

json index_pages_json(const std::vector<IndexPage>& pages) {
  json out = json::array();
  for (const IndexPage& p : pages) {
    out.push_back({{"upstream", p.upstream},
                   {"url", p.url},
                   {"answer", to_string(p.answer)},
                   {"format", p.format},
                   {"cached", p.cached},
                   {"error", p.error},
                   {"files", p.files}});
  }
  return out;
}

std::vector<IndexPage> index_pages_from(const json& j) {
  std::vector<IndexPage> out;
  for (const json& p : j.value("index_pages", json::array())) {
    IndexPage page;
    page.upstream = p.at("upstream").get<std::string>();
    page.url = p.at("url").get<std::string>();
    page.answer = enum_from(p, "answer", k_answers, IndexAnswer::unreachable);
    page.format = str_or(p, "format");
    page.cached = p.value("cached", false);
    page.error = str_or(p, "error");
    page.files = p.value("files", std::vector<std::string>{});
    out.push_back(std::move(page));
  }
  return out;
}

json kernels_json(const PackageKernels& p) {
  json binaries = json::array();
  for (const BinaryKernels& b : p.binaries) {
    json groups = json::array();
    for (const ModuleGroup& g : b.groups) {
      groups.push_back({{"images", arch_names(g.images)}, {"modules", g.modules}});
    }
    json entry = {{"path", b.path}, {"groups", groups}};
    if (!b.error.empty()) entry["error"] = b.error;
    if (b.cudart_major) entry["cudart_major"] = *b.cudart_major;
    if (b.links_torch) entry["links_torch"] = true;
    if (b.zstd_fatbins) entry["zstd_fatbins"] = true;
    if (const auto& t = b.torch_symbols) {
      entry["torch_symbols"] = {
          {"torch", t->torch}, {"needed", t->needed}, {"missing", t->missing}, {"examples", t->examples}};
    }
    binaries.push_back(entry);
  }
  const Provenance& o = p.provenance;
  json provenance = json::object();
  for (const auto& [key, value] : {std::pair{"installer", &o.installer},
                                   {"url", &o.url},
                                   {"editable_root", &o.editable_root},
                                   {"conda_channel", &o.conda_channel},
                                   {"conda_build", &o.conda_build},
                                   {"local_version", &o.local_version}}) {
    if (!value->empty()) provenance[key] = *value;
  }
  if (!o.torch_pins.empty()) provenance["torch_pins"] = o.torch_pins;
  if (!o.triton_pins.empty()) provenance["triton_pins"] = o.triton_pins;
  if (o.cuda_major) provenance["cuda_major"] = *o.cuda_major;
  if (!o.owns.empty()) provenance["owns"] = o.owns;
  if (!o.arch_flags.empty()) provenance["arch_flags"] = o.arch_flags;
  return {{"distribution", p.distribution},
          {"version", p.version},
          {"cuda", opt(p.cuda, [](const std::string& s) { return json(s); })},
          {"provenance", provenance},
          {"binaries", binaries}};
}

Provenance provenance_from(const json& j) {
  Provenance o;
  if (!j.is_object()) return o;
  o.installer = str_or(j, "installer");
  o.url = str_or(j, "url");
  o.editable_root = str_or(j, "editable_root");
  o.conda_channel = str_or(j, "conda_channel");
  o.conda_build = str_or(j, "conda_build");
  o.local_version = str_or(j, "local_version");
  o.torch_pins = j.value("torch_pins", std::vector<std::string>{});
  o.triton_pins = j.value("triton_pins", std::vector<std::string>{});
  if (j.contains("cuda_major")) o.cuda_major = j.at("cuda_major").get<int>();
  o.owns = j.value("owns", std::vector<std::string>{});
  o.arch_flags = j.value("arch_flags", std::vector<std::string>{});
  return o;
}

PackageKernels kernels_from(const json& j) {
  PackageKernels p;
  p.distribution = j.at("distribution").get<std::string>();
  p.version = str_or(j, "version");
  p.cuda = opt_string(j, "cuda");
  if (j.contains("provenance")) p.provenance = provenance_from(j.at("provenance"));
  for (const auto& b : j.value("binaries", json::array())) {
    BinaryKernels binary;
    binary.path = b.at("path").get<std::string>();
    binary.error = str_or(b, "error");
    if (b.contains("cudart_major")) binary.cudart_major = b.at("cudart_major").get<int>();
    binary.links_torch = b.value("links_torch", false);
    binary.zstd_fatbins = b.value("zstd_fatbins", false);
    if (const auto t = b.find("torch_symbols"); t != b.end()) {
      binary.torch_symbols = TorchSymbols{t->at("torch").get<std::string>(), t->value("needed", 0),
                                          t->value("missing", 0), t->value("examples", std::vector<std::string>{})};
    }
    for (const auto& g : b.value("groups", json::array())) {
      binary.groups.push_back({archs_from(g, "images"), g.at("modules").get<int>()});
    }
    p.binaries.push_back(std::move(binary));
  }
  return p;
}

// The JSON of one Python environment: its torch, kernels and what the fix
// probes asked (index pages, a failed DLL, editable URLs) where present.
json python_json(const PythonEnv& p) {
  json torch = nullptr;
  if (p.torch) {
    const TorchBuild& t = *p.torch;
    auto as_string = [](const std::string& v) { return json(v); };
    torch = {{"version", t.version},
             {"cuda", opt(t.cuda, as_string)},
             {"hip", opt(t.hip, as_string)},
             {"arch_flags", arch_names(t.arch_flags)},
             {"cudnn", opt(t.cudnn, [](int v) { return json(v); })},
             {"location", t.location},
             {"installed_at", opt(t.installed_at, [](auto v) { return json(v); })}};
  }
  json kernels = json::array();
  for (const PackageKernels& k : p.kernels) kernels.push_back(kernels_json(k));
  auto as_string = [](const std::string& v) { return json(v); };
  json out = {{"interpreter", p.interpreter},
              {"origin", p.origin},
              {"status", to_string(p.status)},
              {"error", p.error},
              {"python_version", opt(p.python_version, as_string)},
              {"site_packages", opt(p.site_packages, as_string)},
              {"torch", torch},
              {"distributions", p.distributions},
              {"kernels", kernels}};
  // Only asked for by `torchfix fix`: a snapshot without it reads as before.
  if (!p.index_pages.empty()) out["index_pages"] = index_pages_json(p.index_pages);
  if (const auto& d = p.failed_dll) {
    out["failed_dll"] = {{"path", d->path},
                         {"imports", d->imports},
                         {"missing", d->missing},
                         {"searched", d->searched},
                         {"error", d->error}};
  }
  if (!p.editable_urls.empty()) out["editable_urls"] = p.editable_urls;
  return out;
}

// The JSON of the platform probe: machine, OS, WSL2, container, limits.
json platform_json(const Platform& pl) {
  return {{"machine", pl.machine},
          {"os", pl.os},
          {"wsl2", pl.wsl2},
          {"wsl_dxg", opt(pl.wsl_dxg, [](auto v) { return json(v); })},
          {"wsl_libcuda", opt(pl.wsl_libcuda, [](auto v) { return json(v); })},
          {"wsl_linux_driver", pl.wsl_linux_driver.empty() ? json(nullptr)
                                                           : json{{"files", pl.wsl_linux_driver},
                                                                  {"packages", pl.wsl_linux_driver_packages},
                                                                  {"uninstaller", pl.wsl_linux_driver_uninstaller}}},
          {"container", pl.container},
          {"nvidia_device_nodes", pl.nvidia_device_nodes},
          {"libcuda_loadable", pl.libcuda_loadable},
          {"libcuda_link", opt(pl.libcuda_link, libcuda_link_json)},
          {"cuda_visible_devices", opt(pl.cuda_visible_devices, [](auto v) { return json(v); })},
          {"cpus", pl.cpus},
          {"memory_available_bytes", opt(pl.memory_available_bytes, [](auto v) { return json(v); })},
          {"cpu_quota", opt(pl.cpu_quota, [](auto v) { return json(v); })},
          {"cpu_quota_source", pl.cpu_quota_source},
          {"memory_limit_bytes", opt(pl.memory_limit_bytes, [](auto v) { return json(v); })},
          {"memory_limit_source", pl.memory_limit_source},
          {"windows", pl.windows},
          {"l4t", opt(pl.l4t, [](auto v) { return json(v); })},
          {"mounts", opt(pl.mounts, mounts_json)},
          {"container_created", opt(pl.container_created, [](auto v) { return json(v); })}};
}

}  // namespace

std::string_view to_string(CompilerFamily family) {
  return name_in(k_families, family);
}

std::string_view to_string(PythonStatus status) {
  return name_in(k_statuses, status);
}

std::string_view to_string(IndexAnswer answer) {
  return name_in(k_answers, answer);
}

std::vector<Arch> parse_arch_flags(std::string_view flags) {
  std::vector<Arch> out;
  std::string text(flags);
  for (char& c : text) {
    if (c == ',' || c == '=' || c == '[' || c == ']' || c == ';') c = ' ';
  }
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    if (auto arch = Arch::parse(word); arch && std::ranges::find(out, *arch) == out.end()) {
      out.push_back(*arch);
    }
  }
  return out;
}

nlohmann::json to_json(const Snapshot& s) {
  json gpus = json::array();
  for (const Gpu& g : s.gpus) {
    gpus.push_back({{"index", g.index},
                    {"name", g.name},
                    {"compute_capability", opt(g.cc, [](auto cc) { return json(cc.str()); })},
                    {"memory_bytes", opt(g.memory_bytes, [](auto b) { return json(b); })},
                    {"source", g.source}});
  }
  json toolkits = json::array();
  for (const Toolkit& t : s.toolkits) {
    toolkits.push_back({{"nvcc", t.nvcc},
                        {"origin", t.origin},
                        {"version", opt(t.version, version_json)},
                        {"archs", arch_names(t.archs)},
                        {"archs_source", t.archs_source}});
  }
  json compilers = json::array();
  for (const HostCompiler& c : s.compilers) {
    compilers.push_back({{"path", c.path},
                         {"origin", c.origin},
                         {"family", to_string(c.family)},
                         {"version", opt(c.version, version_json)}});
  }
  json pythons = json::array();
  for (const PythonEnv& p : s.pythons) pythons.push_back(python_json(p));
  json notes = json::array();
  for (const ProbeNote& n : s.notes) notes.push_back({{"probe", n.probe}, {"message", n.message}});
  return {
      {"schema_version", Snapshot::k_schema_version},
      {"torchfix_version", s.torchfix_version},
      {"what_if", s.what_if},
      {"platform", platform_json(s.platform)},
      {"driver",
       {{"version", opt(s.driver.version, version_json)},
        {"cuda_version", opt(s.driver.cuda_version, version_json)},
        {"source", s.driver.source}}},
      {"gpus", gpus},
      {"toolkits", toolkits},
      {"compilers", compilers},
      {"pythons", pythons},
      {"environment", s.environment},
      {"notes", notes},
  };
}

namespace {

// Reads the "libcuda_link" object of a snapshot's platform; throws nlohmann's exceptions.
std::optional<LibcudaLink> libcuda_link_from(const json& p) {
  const auto l = p.find("libcuda_link");
  if (l == p.end() || !l->is_object()) return std::nullopt;
  return LibcudaLink{l->value("triton_dirs", std::vector<std::string>{}),
                     l->value("linker_dirs", std::vector<std::string>{}), opt_string(*l, "libcuda_so"),
                     opt_string(*l, "libcuda_so_1")};
}

// Reads the "platform" object of a snapshot; throws nlohmann's exceptions.
Platform platform_from(const json& p) {
  Platform platform;
  platform.machine = str_or(p, "machine");
  platform.os = str_or(p, "os");
  platform.wsl2 = p.value("wsl2", false);
  platform.wsl_dxg = opt_number<bool>(p, "wsl_dxg");
  platform.wsl_libcuda = opt_number<bool>(p, "wsl_libcuda");
  if (const auto d = p.find("wsl_linux_driver"); d != p.end() && d->is_object()) {
    platform.wsl_linux_driver = d->value("files", std::vector<std::string>{});
    platform.wsl_linux_driver_packages = d->value("packages", std::vector<std::string>{});
    platform.wsl_linux_driver_uninstaller = d->value("uninstaller", false);
  }
  platform.container = p.value("container", false);
  platform.nvidia_device_nodes = p.value("nvidia_device_nodes", false);
  platform.libcuda_loadable = p.value("libcuda_loadable", false);
  platform.libcuda_link = libcuda_link_from(p);
  platform.cuda_visible_devices = opt_string(p, "cuda_visible_devices");
  platform.cpus = p.value("cpus", 0);
  platform.memory_available_bytes = opt_number<std::uint64_t>(p, "memory_available_bytes");
  platform.cpu_quota = opt_number<double>(p, "cpu_quota");
  platform.cpu_quota_source = str_or(p, "cpu_quota_source");
  platform.memory_limit_bytes = opt_number<std::uint64_t>(p, "memory_limit_bytes");
  platform.memory_limit_source = str_or(p, "memory_limit_source");
  platform.windows = p.value("windows", false);
  platform.l4t = opt_string(p, "l4t");
  platform.container_created = opt_number<std::int64_t>(p, "container_created");
  if (const auto m = p.find("mounts"); m != p.end() && m->is_array()) {
    platform.mounts.emplace();
    for (const json& one : *m) {
      platform.mounts->push_back(
          {str_or(one, "point"), str_or(one, "root"), str_or(one, "fs_type"), str_or(one, "source")});
    }
  }
  return platform;
}

// Reads one entry of a snapshot's "pythons"; throws nlohmann's exceptions.
PythonEnv python_from(const json& p) {
  PythonEnv env;
  env.interpreter = p.at("interpreter").get<std::string>();
  env.origin = str_or(p, "origin");
  env.status = enum_from(p, "status", k_statuses, PythonStatus::ok);
  env.error = str_or(p, "error");
  env.python_version = opt_string(p, "python_version");
  env.site_packages = opt_string(p, "site_packages");
  if (p.contains("torch") && !p.at("torch").is_null()) {
    const json& t = p.at("torch");
    TorchBuild torch;
    torch.version = t.at("version").get<std::string>();
    torch.cuda = opt_string(t, "cuda");
    torch.hip = opt_string(t, "hip");
    torch.arch_flags = archs_from(t, "arch_flags");
    torch.cudnn = opt_number<int>(t, "cudnn");
    torch.location = str_or(t, "location");
    torch.installed_at = opt_number<std::int64_t>(t, "installed_at");
    env.torch = std::move(torch);
  }
  if (p.contains("distributions")) {
    env.distributions = p.at("distributions").get<std::map<std::string, std::string>>();
  }
  if (p.contains("editable_urls")) {
    env.editable_urls = p.at("editable_urls").get<std::map<std::string, std::string>>();
  }
  for (const json& k : p.value("kernels", json::array())) env.kernels.push_back(kernels_from(k));
  env.index_pages = index_pages_from(p);
  if (const auto d = p.find("failed_dll"); d != p.end() && d->is_object()) {
    env.failed_dll = FailedDll{str_or(*d, "path"), d->value("imports", std::vector<std::string>{}),
                               d->value("missing", std::vector<std::string>{}),
                               d->value("searched", std::vector<std::string>{}), str_or(*d, "error")};
  }
  return env;
}

// Reads `j` as snapshot_from_json does, but throws nlohmann's exceptions
// (a value of the wrong type) for the caller to name the field.
Expected<Snapshot> read_snapshot(const nlohmann::json& j) {
  if (!j.is_object()) return fail("a snapshot must be a JSON object");
  if (auto bounded = check_snapshot_bounds(j); !bounded) return fail("snapshot " + bounded.error().message);
  const int schema = j.at("schema_version").get<int>();
  if (schema != Snapshot::k_schema_version) {
    return fail("snapshot schema_version " + std::to_string(schema) + " is not supported (this torchfix reads " +
                std::to_string(Snapshot::k_schema_version) + "); save the snapshot again with this version");
  }
  Snapshot s;
  s.torchfix_version = str_or(j, "torchfix_version");
  s.what_if = j.value("what_if", false);
  if (j.contains("platform")) s.platform = platform_from(j.at("platform"));
  if (j.contains("driver")) {
    const json& d = j.at("driver");
    s.driver.version = opt_version(d, "version");
    s.driver.cuda_version = opt_version(d, "cuda_version");
    s.driver.source = str_or(d, "source");
  }
  for (const json& g : j.value("gpus", json::array())) {
    Gpu gpu;
    gpu.index = g.value("index", 0);
    gpu.name = str_or(g, "name");
    if (auto cc = opt_string(g, "compute_capability")) {
      auto parsed = ComputeCapability::parse(*cc);
      if (!parsed) return fail("gpus[" + std::to_string(gpu.index) + "].compute_capability: " + parsed.error().message);
      gpu.cc = *parsed;
    }
    gpu.memory_bytes = opt_number<std::uint64_t>(g, "memory_bytes");
    gpu.source = str_or(g, "source");
    s.gpus.push_back(std::move(gpu));
  }
  for (const json& t : j.value("toolkits", json::array())) {
    s.toolkits.push_back({t.at("nvcc").get<std::string>(), str_or(t, "origin"), opt_version(t, "version"),
                          archs_from(t, "archs"), str_or(t, "archs_source")});
  }
  for (const json& c : j.value("compilers", json::array())) {
    HostCompiler compiler{c.at("path").get<std::string>(), str_or(c, "origin"),
                          enum_from(c, "family", k_families, CompilerFamily::other), opt_version(c, "version")};
    s.compilers.push_back(std::move(compiler));
  }
  for (const json& p : j.value("pythons", json::array())) s.pythons.push_back(python_from(p));
  if (j.contains("environment")) {
    s.environment = j.at("environment").get<std::map<std::string, std::string>>();
  }
  for (const json& n : j.value("notes", json::array())) {
    s.notes.push_back({str_or(n, "probe"), str_or(n, "message")});
  }
  return s;
}

// Returns the error read_snapshot gives for `j`, "" when it reads.
std::string snapshot_error(const nlohmann::json& j) {
  try {
    auto read = read_snapshot(j);
    return read ? std::string() : read.error().message;
  } catch (const nlohmann::json::exception& e) {
    return json_error_text(e);
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

Expected<Snapshot> snapshot_from_json(const nlohmann::json& j) {
  try {
    return read_snapshot(j);
  } catch (const std::exception& e) {
    const std::string error = snapshot_error(j);
    const std::string field = find_offending_field(j, error, snapshot_error);
    return fail("the snapshot JSON does not match the schema in docs/json-schema.md: " +
                (field.empty() ? "" : field + ": ") + error);
  }
}

}  // namespace torchfix
