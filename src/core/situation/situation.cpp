// The one derivation of the facts decisions read (core/situation/situation.hpp).

#include "core/situation/situation.hpp"

#include <algorithm>
#include <set>

#include "core/base/enum_names.hpp"

namespace torchfix {
namespace {

constexpr EnumName<PlatformKind> k_platforms[] = {{PlatformKind::linux_x86_64, "linux-x86_64"},
                                                  {PlatformKind::linux_aarch64, "linux-aarch64"},
                                                  {PlatformKind::tegra, "tegra"},
                                                  {PlatformKind::wsl2, "wsl2"},
                                                  {PlatformKind::windows, "windows"}};
static_assert(in_order(k_platforms));

// The wheel variant named in a local version label: "2.6.0+cu126" -> "cu126".
std::string variant_of(const std::string& version) {
  auto plus = version.find('+');
  return plus == std::string::npos ? std::string{} : version.substr(plus + 1);
}

// The newest driver of a branch, for a driver given only as its branch.
Version branch_newest(int branch) {
  return Version({branch, 9999, 9999});
}

TorchImages torch_images(const PythonEnv& env, const Knowledge& k, std::string_view platform) {
  TorchImages out;
  for (const PackageKernels& p : env.kernels) {
    if (p.distribution == "torch" && !p.binaries.empty()) {
      out.binaries = &p;
      std::set<Arch> all;
      for (const BinaryKernels& b : p.binaries) {
        for (const ModuleGroup& g : b.groups) all.insert(g.images.begin(), g.images.end());
      }
      out.images.assign(all.begin(), all.end());
      out.source = "read from torch's binaries";
      return out;
    }
  }
  if (!env.torch->arch_flags.empty()) {
    out.images = env.torch->arch_flags;
    out.source = "torch._C._cuda_getArchFlags()";
    return out;
  }
  const std::string variant = variant_of(env.torch->version);
  if (auto release = Version::parse(env.torch->version)) {
    for (const WheelVariant& w : k.wheels) {
      if (w.variant == variant && w.platform == platform && w.covers_release(*release)) {
        out.images = w.images;
        out.source = "official " + variant + " wheel arch list " + w.arch_list + " (recipes/torch-wheels.toml, " +
                     std::string(w.how_known()) + ")";
        return out;
      }
    }
  }
  return out;
}

// What a build uses now: CUDA_HOME's nvcc, else CUDA_PATH's, PATH's, /usr/local/cuda's.
const Toolkit* current_toolkit(const Snapshot& snapshot) {
  for (const char* origin : {"CUDA_HOME", "CUDA_PATH", "PATH", "/usr/local/cuda"}) {
    for (const Toolkit& t : snapshot.toolkits) {
      if (t.origin == origin) return &t;
    }
  }
  return snapshot.toolkits.empty() ? nullptr : &snapshot.toolkits.front();
}

std::vector<GpuGroup> group_gpus(const std::vector<const Gpu*>& gpus) {
  std::vector<GpuGroup> out;
  for (const Gpu* g : gpus) {
    auto same = std::ranges::find_if(out, [&](const GpuGroup& x) { return x.name == g->name && x.cc == *g->cc; });
    if (same == out.end()) {
      out.push_back({g->name, *g->cc, {g->index}, g});
    } else {
      same->indices.push_back(g->index);
    }
  }
  for (GpuGroup& group : out) {
    std::ranges::sort(group.indices);
    for (const Gpu* g : gpus) {
      if (g->index == group.indices.front() && g->name == group.name && *g->cc == group.cc) group.first = g;
    }
  }
  return out;
}

DriverState driver_state(const Snapshot& s, const Knowledge& k, DriverNumbering numbering) {
  DriverState d;
  d.version = s.driver.version;
  d.given = d.version && d.version->parts().size() == 1 ? DriverGiven::branch : DriverGiven::version;
  if (s.driver.cuda_version) {
    d.cuda = s.driver.cuda_version;
    d.cuda_source = s.driver.source.empty() ? std::string("the snapshot") : s.driver.source;
  } else if (d.version) {
    d.cuda = cuda_of_driver(k, *d.version, d.given, numbering, &d.cuda_source);
  }
  return d;
}

}  // namespace

std::string_view to_string(PlatformKind platform) {
  return name_in(k_platforms, platform);
}

std::string_view wheel_platform(PlatformKind platform) {
  switch (platform) {
    case PlatformKind::linux_aarch64:
    case PlatformKind::tegra:
      return "aarch64";
    case PlatformKind::windows:
      return "windows";
    case PlatformKind::linux_x86_64:
    case PlatformKind::wsl2:
      return "x86_64";
  }
  return "x86_64";
}

DriverNumbering driver_numbering(PlatformKind platform) {
  switch (platform) {
    case PlatformKind::windows:
    case PlatformKind::wsl2:
      return DriverNumbering::windows;
    case PlatformKind::tegra:
      return DriverNumbering::tegra;
    case PlatformKind::linux_x86_64:
    case PlatformKind::linux_aarch64:
      return DriverNumbering::linux;
  }
  return DriverNumbering::linux;
}

bool windows_driver(PlatformKind platform) {
  return driver_numbering(platform) == DriverNumbering::windows;
}

NvccSearch nvcc_search(PlatformKind platform) {
  return platform == PlatformKind::windows ? NvccSearch::windows : NvccSearch::linux;
}

CommandShell command_shell(PlatformKind platform) {
  return platform == PlatformKind::windows ? CommandShell::powershell : CommandShell::posix;
}

PlatformKind platform_kind(const Platform& p, const std::vector<Gpu>& gpus) {
  if (p.windows || p.machine == "windows" || p.os.starts_with("Windows")) return PlatformKind::windows;
  if (p.wsl2) return PlatformKind::wsl2;
  const bool tegra_gpu = std::ranges::any_of(gpus, [](const Gpu& g) { return g.cc && is_tegra(*g.cc); });
  if (p.l4t || tegra_gpu) return PlatformKind::tegra;
  if (p.machine == "aarch64" || p.machine == "arm64") return PlatformKind::linux_aarch64;
  return PlatformKind::linux_x86_64;
}

std::optional<int> DriverState::branch() const {
  if (!version) return std::nullopt;
  return version->major();
}

bool DriverState::meets(const Version& floor) const {
  if (!version) return false;
  if (given == DriverGiven::branch) return version->major() >= floor.major();
  return *version >= floor;
}

std::string DriverState::text() const {
  if (version && given == DriverGiven::branch) return "driver R" + std::to_string(version->major());
  if (version) return "driver " + version->str() + " (R" + std::to_string(version->major()) + ")";
  if (cuda) return "a driver supporting CUDA " + cuda->major_minor();
  return "an unknown driver";
}

const L4tRelease* l4t_of_driver(const Knowledge& k, const Version& driver, DriverGiven given) {
  // L4T's driver has its own numbers: the row of the same branch and minor.
  for (const L4tRelease& row : k.l4t) {
    if (!row.driver || row.driver->major() != driver.major()) continue;
    if (given == DriverGiven::version && row.driver->minor() != driver.minor()) continue;
    return &row;
  }
  return nullptr;
}

std::optional<Version> cuda_of_driver(const Knowledge& k, const Version& driver, DriverGiven given,
                                      DriverNumbering numbering, std::string* source) {
  auto said = [&](std::string text) {
    if (source) *source = std::move(text);
  };
  if (numbering == DriverNumbering::tegra) {
    const L4tRelease* row = l4t_of_driver(k, driver, given);
    if (!row) return std::nullopt;
    said("recipes/drivers.toml [[l4t]] R" + row->release.str() + " (JetPack " + row->jetpack.str() +
         "): " + row->source);
    return row->cuda;
  }
  const Version v = given == DriverGiven::branch ? branch_newest(driver.major()) : driver;
  const bool windows = numbering == DriverNumbering::windows;
  std::optional<Version> best = k.cuda_for_driver(v, windows);
  std::string from =
      std::string("recipes/toolkits.toml [[driver_floor]] (") + (windows ? "Windows" : "Linux") + " numbering)";
  for (const DriverCuda& row : k.driver_cudas) {
    const Version& needed = windows && row.windows ? *row.windows : row.linux;
    if (needed <= v && (!best || row.cuda > *best)) {
      best = row.cuda;
      from = "recipes/drivers.toml [[driver_cuda]]: " + row.source;
    }
  }
  if (best) said(from);
  return best;
}

CudaOnDriver cuda_on_driver(const Knowledge& k, const DriverState& driver, DriverNumbering numbering,
                            const Version& cuda) {
  std::optional<Version> supports = driver.cuda;
  if (!supports && driver.version) supports = cuda_of_driver(k, *driver.version, driver.given, numbering);
  if (!supports) return driver.version ? CudaOnDriver::too_old : CudaOnDriver::unknown;
  if (*supports >= Version({cuda.major(), cuda.minor()})) return CudaOnDriver::native;
  if (supports->major() != cuda.major()) return CudaOnDriver::too_old;
  const MinorCompat* floor = k.minor_compat_for(cuda.major());
  if (floor && driver.version && numbering != DriverNumbering::tegra) {
    const Version& needed = numbering == DriverNumbering::windows && floor->windows ? *floor->windows : floor->linux;
    if (!driver.meets(needed)) return CudaOnDriver::too_old;
  }
  return CudaOnDriver::minor_compat;
}

std::vector<ComputeCapability> distinct_capabilities(std::vector<ComputeCapability> ccs) {
  std::ranges::sort(ccs);
  ccs.erase(std::ranges::unique(ccs).begin(), ccs.end());
  return ccs;
}

std::string GpuGroup::label() const {
  const std::string inner = (name.empty() ? std::string() : name + ", ") + cc.str();
  if (indices.size() == 1) return "GPU " + std::to_string(indices.front()) + " (" + inner + ")";
  const bool run = indices.back() - indices.front() + 1 == static_cast<int>(indices.size());
  std::string list;
  if (run) {
    list = std::to_string(indices.front()) + "-" + std::to_string(indices.back());
  } else {
    for (int i : indices) list += (list.empty() ? "" : ",") + std::to_string(i);
  }
  return "GPUs " + list + " (" + std::to_string(indices.size()) + "x " + inner + ")";
}

ToolchainFacts Situation::toolchain_facts() const {
  ToolchainFacts f;
  f.gpus = gpus;
  if (snapshot) {
    f.toolkits = snapshot->toolkits;
    f.compilers = snapshot->compilers;
    f.os = snapshot->platform.os;
  }
  f.resources = resources;
  f.driver_cuda = driver.cuda;
  f.torch_cuda = torch_cuda;
  f.nvcc_search = nvcc_search(platform);
  return f;
}

const GpuGroup* Situation::group_of(int index) const {
  for (const GpuGroup& g : gpu_groups) {
    if (std::ranges::find(g.indices, index) != g.indices.end()) return &g;
  }
  return nullptr;
}

Situation situate(const Snapshot& s, const Knowledge& k) {
  Situation x;
  x.snapshot = &s;
  x.platform = platform_kind(s.platform, s.gpus);
  x.numbering = driver_numbering(x.platform);
  x.wheel_platform = torchfix::wheel_platform(x.platform);
  x.shell = command_shell(x.platform);
  if (s.platform.l4t) {
    if (auto release = Version::parse(*s.platform.l4t)) {
      x.l4t_release = *release;
      x.l4t = k.l4t_release(*release);
    }
  }
  x.driver = driver_state(s, k, x.numbering);
  // No /etc/nv_tegra_release read: the driver, whose number is L4T's own, names the release.
  if (x.numbering == DriverNumbering::tegra && !x.l4t_release && x.driver.version) {
    x.l4t = l4t_of_driver(k, *x.driver.version, x.driver.given);
    if (x.l4t) x.l4t_release = x.l4t->release;
  }
  if (x.l4t && !x.driver.cuda) {
    x.driver.cuda = x.l4t->cuda;
    x.driver.cuda_source = "recipes/drivers.toml [[l4t]] R" + x.l4t->release.str() + ": " + x.l4t->source;
  }
  for (const Gpu& gpu : s.gpus) {
    if (gpu.cc) x.known_gpus.push_back(&gpu);
  }
  std::set<ComputeCapability> distinct;
  for (const Gpu* g : x.known_gpus) distinct.insert(*g->cc);
  x.gpus.assign(distinct.begin(), distinct.end());
  x.gpu_groups = group_gpus(x.known_gpus);
  x.current_toolkit = current_toolkit(s);
  x.current_compiler = current_host_compiler(s.compilers);
  x.resources = resources_of(s.platform);
  for (const PythonEnv& env : s.pythons) {
    EnvFacts e;
    e.env = &env;
    if (env.torch) {
      e.release = Version::parse(env.torch->version);
      e.variant = variant_of(env.torch->version);
      // PEP 440 dev releases: the nightly channel's ("2.12.0.dev20260417").
      e.nightly = env.torch->version.substr(0, env.torch->version.find('+')).find(".dev") != std::string::npos;
      if (env.torch->cuda && !env.torch->hip) e.cuda = Version::parse(*env.torch->cuda);
      e.images = torch_images(env, k, x.wheel_platform);
      if (!x.torch_cuda && e.cuda) x.torch_cuda = e.cuda;
    }
    const std::string where =
        env.torch && !env.torch->location.empty() ? env.torch->location : env.site_packages.value_or("");
    e.home = package_home(s.platform, where, env.torch ? env.torch->installed_at : std::nullopt, &e.home_mount);
    x.pythons.push_back(std::move(e));
  }
  if (const Recipe* generic = k.build_recipe(k_generic_recipe)) {
    ToolchainRequest request;
    request.recipe = generic;
    x.toolchain = decide_toolchain(x.toolchain_facts(), k, request);
  }
  return x;
}

PackageHome package_home(const Platform& platform, const std::string& path, std::optional<std::int64_t> written,
                         std::string* mount) {
  if (!platform.container) return PackageHome::host;
  if (!platform.mounts || path.empty()) return PackageHome::unknown;
  const Mount* best = nullptr;
  for (const Mount& m : *platform.mounts) {
    const bool holds = m.point == "/" || path == m.point || path.starts_with(m.point + "/");
    if (holds && (!best || m.point.size() >= best->point.size())) best = &m;
  }
  if (!best) return PackageHome::unknown;
  if (mount) *mount = best->point;
  if (best->point != "/") return PackageHome::volume;
  if (!written || !platform.container_created) return PackageHome::unknown;
  return *written < *platform.container_created ? PackageHome::image : PackageHome::layer;
}

}  // namespace torchfix
