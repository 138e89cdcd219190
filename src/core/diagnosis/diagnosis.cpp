#include "core/diagnosis/diagnosis.hpp"

#include <algorithm>
#include <cstdio>

#include "core/arch/arch_list.hpp"
#include "core/base/enum_names.hpp"
#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis_internal.hpp"
#include "core/situation/toolchain.hpp"

namespace torchfix {
namespace detail {

std::string gpu_label(const Gpu& gpu) {
  std::string inner = gpu.name;
  if (gpu.cc) inner += (inner.empty() ? "" : ", ") + gpu.cc->str();
  return "GPU " + std::to_string(gpu.index) + (inner.empty() ? "" : " (" + inner + ")");
}

std::string join_archs(const std::vector<Arch>& archs) {
  if (archs.empty()) return "none";
  std::string out;
  for (const Arch& a : archs) out += (out.empty() ? "" : ", ") + a.name();
  return out;
}

void about_gpus(Finding& f, const GpuGroup& group) {
  f.gpu = group.indices.front();
  f.gpus = group.indices;
}

bool toolkit_targets(const Toolkit& toolkit, ComputeCapability cc) {
  return std::ranges::any_of(toolkit.archs, [&](const Arch& a) { return sass_runs_on(a, cc) || a.cc == cc; });
}

std::string version_or(const std::optional<Version>& v) {
  return v ? v->str() : std::string("(version unknown)");
}

Finding finding(std::string id, Severity severity, Section section, std::string title) {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.section = section;
  f.title = std::move(title);
  return f;
}

}  // namespace detail

namespace {

using detail::gpu_label;

std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

using detail::finding;

void diagnose_gpus(const Situation& x, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  const Platform& p = s.platform;
  // A WSL2 without its GPU pieces explains a missing GPU by itself.
  const bool linux_driver = detail::diagnose_wsl_linux_driver(x, out);
  const bool wsl_gap = detail::diagnose_wsl_gpu_support(x, out) || linux_driver;
  if (s.gpus.empty() && !wsl_gap) detail::diagnose_no_gpu(x, out);
  for (const Gpu& gpu : s.gpus) {
    if (gpu.cc) continue;
    Finding f = finding("gpu.capability-unknown", Severity::warning, Section::gpus,
                        gpu_label(gpu) + ": compute capability unknown");
    f.details.push_back("no probe reported it; give it with --gpu X.Y to diagnose against it");
    f.gpu = gpu.index;
    f.gpus = {gpu.index};
    out.push_back(std::move(f));
  }
  for (const GpuGroup& group : x.gpu_groups) {
    const Gpu& gpu = *group.first;
    const std::string name = gpu.name.empty() ? "NVIDIA GPU" : gpu.name;
    const std::size_t n = group.indices.size();
    std::string title =
        n == 1 ? "GPU " + std::to_string(gpu.index) + ": " + name
               : group.label().substr(0, group.label().find(" (")) + ": " + std::to_string(n) + "x " + name;
    title += " (compute capability " + gpu.cc->str();
    if (gpu.memory_bytes) title += ", " + gib(*gpu.memory_bytes) + (n == 1 ? "" : " each");
    title += ")";
    Finding f = finding("gpu.found", Severity::ok, Section::gpus, title);
    detail::about_gpus(f, group);
    f.details.push_back("source: " + gpu.source);
    if (is_tegra(*gpu.cc))
      f.details.push_back("integrated (Tegra) part: needs SASS built for exactly " + gpu.cc->str());
    out.push_back(std::move(f));
  }
  if (p.cuda_visible_devices) {
    const std::string& v = *p.cuda_visible_devices;
    const bool hides_all = v.empty() || v == "-1" || v == "NoDevFiles" || v == "none";
    Finding f =
        finding("gpu.visible-devices", hides_all && !s.gpus.empty() ? Severity::problem : Severity::note, Section::gpus,
                hides_all ? "CUDA_VISIBLE_DEVICES='" + v + "' hides every GPU from CUDA"
                          : "CUDA_VISIBLE_DEVICES=" + v + ": CUDA sees only these GPUs, renumbered from 0");
    if (hides_all && !s.gpus.empty()) f.fixes.push_back({"Unset it", {"unset CUDA_VISIBLE_DEVICES"}});
    out.push_back(std::move(f));
  }
  if (s.gpus.empty()) return;
  const DriverState& d = x.driver;
  if (!d.version && !d.cuda) {
    Finding f = finding("driver.unknown", Severity::warning, Section::gpus, "NVIDIA driver version unknown");
    out.push_back(std::move(f));
    return;
  }
  std::string title = "NVIDIA driver " + (!d.version                       ? std::string("(version unknown)")
                                          : d.given == DriverGiven::branch ? "R" + d.version->str()
                                                                           : d.version->str());
  if (d.cuda) title += ", supports CUDA " + d.cuda->major_minor();
  if (x.platform == PlatformKind::windows || x.platform == PlatformKind::tegra) {
    title += " (" + std::string(x.platform == PlatformKind::windows ? "Windows" : "Tegra") + " numbering)";
  }
  Finding f = finding("driver.found", Severity::ok, Section::gpus, title);
  f.details.push_back("source: " + s.driver.source);
  if (d.cuda && !d.cuda_source.empty()) f.details.push_back("CUDA " + d.cuda->major_minor() + " from " + d.cuda_source);
  if (x.l4t) {
    f.details.push_back("Jetson Linux R" + x.l4t->release.str() + " (JetPack " + x.l4t->jetpack.str() + ", CUDA " +
                        x.l4t->cuda.str() + ")");
  }
  if (p.container) f.details.push_back("in a container: the driver is the host's and cannot be changed from inside");
  out.push_back(std::move(f));
}

// Turns the finding of a tool whose version could not be read into a
// warning: an nvcc or compiler that hangs, crashes or prints nothing on
// --version does not build anything. The probe's note (`probe`) says how it failed.
void mark_broken(Finding& f, const Snapshot& s, const std::string& probe) {
  f.severity = Severity::warning;
  f.title += ": does not work";
  for (const ProbeNote& n : s.notes) {
    if (n.probe == probe) f.details.push_back(n.message);
  }
  f.fixes.push_back({"Repair or reinstall it, or take it off PATH (and out of CC/CXX/CUDAHOSTCXX/CUDA_HOME)", {}});
}

// Appends a warning for each GPU group that nvcc `t` cannot compile for,
// naming the toolkits that can (recipes/toolkits.toml).
void toolkit_arch_gaps(const Situation& x, const Knowledge& k, const Toolkit& t, const std::string& version,
                       std::vector<Finding>& out) {
  for (const GpuGroup& group : x.gpu_groups) {
    const Gpu* gpu = group.first;
    if (t.archs.empty() || detail::toolkit_targets(t, *gpu->cc)) continue;
    Finding g = finding("toolkit.arch", Severity::warning, Section::toolkits,
                        "nvcc " + version + " cannot compile for " + group.label());
    detail::about_gpus(g, group);
    if (auto window = k.nvcc_window_for(*gpu->cc)) {
      // Name the toolkit by the window: old archs end (sm_61: CUDA <= 12.9),
      // new ones start (sm_120: CUDA >= 12.8). The folder is a convention,
      // so it is said, not exported.
      const Version pick = window->last ? *window->last : *window->first;
      g.details.push_back("SASS for " + gpu->cc->str() + " needs " + window->str() +
                          " (recipes/toolkits.toml); wheels are unaffected, extension builds fail");
      g.fixes.push_back({"Install CUDA toolkit " + pick.str() + (window->last ? "" : " or newer") +
                             " and point CUDA_HOME at it (" + window->str() + " targets " + gpu->cc->str() + ")",
                         {}});
    } else {
      g.details.push_back("no nvcc in recipes/toolkits.toml compiles for " + gpu->cc->str());
    }
    out.push_back(std::move(g));
  }
}

// Appends a warning when nvcc `t` is of a newer CUDA major than the driver runs.
void toolkit_newer_than_driver(const Situation& x, const Knowledge& k, const Toolkit& t, const std::string& version,
                               std::vector<Finding>& out) {
  if (t.version && x.driver.cuda && t.version->major() > x.driver.cuda->major()) {
    Finding g =
        finding("toolkit.newer-than-driver", Severity::warning, Section::toolkits,
                "nvcc " + version + " builds code this driver (CUDA " + x.driver.cuda->major_minor() + ") cannot load");
    if (const DriverFloor* floor = k.driver_floor(*t.version); floor && x.platform != PlatformKind::tegra) {
      // Without a Windows number the Linux one is said as such, never as Windows's.
      const bool windows = windows_driver(x.platform);
      const std::string needed = !windows ? floor->linux.str()
                                 : floor->windows
                                     ? floor->windows->str()
                                     : floor->linux.str() + " on Linux; the release notes give no Windows driver";
      g.details.push_back("CUDA " + floor->cuda.str() + " needs driver >= " + needed + " (" + floor->source + ")");
    }
    out.push_back(std::move(g));
  }
}

// Appends a warning when CUDA_HOME and PATH name different toolkits, or
// CUDA_HOME has no nvcc: builds pick headers from one and nvcc from the other.
void check_cuda_home(const Situation& x, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  const Toolkit* on_path = nullptr;
  const Toolkit* home = nullptr;
  for (const Toolkit& t : s.toolkits) {
    if (t.origin == "PATH") on_path = &t;
    if (t.origin == "CUDA_HOME") home = &t;
  }
  if (auto it = s.environment.find("CUDA_HOME"); it != s.environment.end()) {
    if (on_path && home) {
      Finding f = finding("toolkit.cuda-home-path", Severity::warning, Section::toolkits,
                          "CUDA_HOME and PATH name different toolkits");
      f.details.push_back("CUDA_HOME: " + home->nvcc + "; PATH: " + on_path->nvcc);
      f.details.push_back("torch.utils.cpp_extension uses CUDA_HOME, CMake and shells use PATH: builds mix them");
      f.fixes.push_back({"Put CUDA_HOME's nvcc first on PATH",
                         {x.shell == CommandShell::powershell ? "$env:PATH = \"$env:CUDA_HOME\\bin;$env:PATH\""
                                                              : "export PATH=\"$CUDA_HOME/bin:$PATH\""}});
      out.push_back(std::move(f));
    } else if (!home && std::ranges::none_of(s.toolkits, [&](const Toolkit& t) {
                 return t.nvcc.starts_with(it->second + "/") || t.nvcc.starts_with(it->second + "bin/");
               })) {
      Finding f = finding("toolkit.cuda-home-empty", Severity::warning, Section::toolkits,
                          "CUDA_HOME=" + it->second + " has no bin/nvcc");
      if (const Toolkit* t = x.current_toolkit) {
        const std::string dir = t->nvcc.substr(0, t->nvcc.rfind("/bin/nvcc"));
        f.fixes.push_back({"Point CUDA_HOME at an installed toolkit", {set_env_command(x.shell, "CUDA_HOME", dir)}});
      }
      out.push_back(std::move(f));
    }
  }
}

void diagnose_toolkits(const Situation& x, const Knowledge& k, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  if (s.toolkits.empty()) {
    Finding f = finding("toolkit.none", Severity::note, Section::toolkits,
                        "No CUDA toolkit (nvcc) found: not needed for wheels, needed to build extensions");
    out.push_back(std::move(f));
    return;
  }
  for (const Toolkit& t : s.toolkits) {
    const std::string version = t.version ? t.version->str() : std::string("(version unknown)");
    Finding f = finding(
        "toolkit.found", Severity::ok, Section::toolkits,
        "nvcc " + version + " at " + t.nvcc + " (" + t.origin + "): " + detail::join_archs(toolkit_archs(t, &k)));
    f.details.push_back("SASS targets from " + (t.archs.empty()
                                                    ? std::string("the CUDA toolkit table (recipes/toolkits.toml)")
                                                    : t.archs_source));
    if (!t.version) mark_broken(f, s, "nvcc:" + t.nvcc);
    out.push_back(std::move(f));
    toolkit_arch_gaps(x, k, t, version, out);
    toolkit_newer_than_driver(x, k, t, version, out);
  }
  check_cuda_home(x, out);
}

// TORCH_CUDA_ARCH_LIST in the environment steers every extension build: a
// list copied from a guide for another GPU builds kernels this one cannot
// run. It changes nothing for installed wheels.
void diagnose_arch_list_variable(const Situation& x, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  auto it = s.environment.find("TORCH_CUDA_ARCH_LIST");
  if (it == s.environment.end()) return;
  // The list the one toolchain decision builds for (what `torchfix env`
  // exports and the "Builds here" line shows), never a second derivation.
  const std::string wanted = x.toolchain.arch.empty() ? std::string{} : render(x.toolchain.arch, ArchFormat::torch);
  auto fix_to = [&](std::string summary) {
    return Fix{std::move(summary), {set_env_command(x.shell, "TORCH_CUDA_ARCH_LIST", wanted)}};
  };
  auto list = parse_arch_list(it->second);
  if (!list) {
    Finding f = finding("env.arch-list-invalid", Severity::warning, Section::toolkits,
                        "TORCH_CUDA_ARCH_LIST='" + it->second + "' is not a valid arch list");
    f.details.push_back(list.error().message);
    if (!wanted.empty()) f.fixes.push_back(fix_to("Set it for this machine's GPUs"));
    out.push_back(std::move(f));
    return;
  }
  const std::vector<Arch> built = images(*list);
  std::vector<const GpuGroup*> missed;
  for (const GpuGroup& g : x.gpu_groups) {
    if (best_reach(built, g.cc) == Reach::none) missed.push_back(&g);
  }
  if (missed.empty()) {
    Finding f = finding("env.arch-list", Severity::ok, Section::toolkits,
                        "TORCH_CUDA_ARCH_LIST='" + it->second + "' (for extension builds)" +
                            (x.gpu_groups.empty() ? std::string{} : ": covers every GPU"));
    out.push_back(std::move(f));
    return;
  }
  std::string names;
  for (const GpuGroup* g : missed) names += (names.empty() ? "" : ", ") + g->label();
  Finding f = finding("env.arch-list", Severity::warning, Section::toolkits,
                      "TORCH_CUDA_ARCH_LIST='" + it->second + "' builds no kernels for " + names);
  f.details.push_back("extensions built here get only " + detail::join_archs(built) +
                      "; it does not change installed wheels");
  if (!wanted.empty()) {
    if (!x.toolchain.arch_reason.empty()) f.details.push_back("the toolchain's arch list: " + x.toolchain.arch_reason);
    f.fixes.push_back(fix_to("Build for this machine's GPUs"));
  }
  out.push_back(std::move(f));
}

std::optional<int> bound_for(const HostCompilerBounds& b, CompilerFamily family) {
  if (family == CompilerFamily::gcc) return b.gcc_below;
  if (family == CompilerFamily::clang) return b.clang_below;
  return std::nullopt;
}

// Appends a warning when the compiler a build would pick up without torchfix
// is rejected by nvcc, with the compiler to build with instead.
void report_compiler_bounds(const Situation& x, const Knowledge& k, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  const Toolchain& tc = x.toolchain;
  if (!tc.current || !tc.current_outside_bounds) return;
  const HostCompiler& host = *tc.current;
  const HostCompilerBounds* bounds = k.host_bounds_for(*tc.toolkit->version);
  if (!bounds) return;
  if (host.family == CompilerFamily::msvc) {
    out.push_back(detail::msvc_outside_bounds(tc, *bounds, k));
    return;
  }
  const auto below = bound_for(*bounds, host.family);
  if (!below) return;
  const std::string family(to_string(host.family));
  Finding w =
      finding("compiler.outside-nvcc-bounds", Severity::warning, Section::compilers,
              family + " " + host.version->str() + " (" + host.origin + "=" + host.path + ") is too new for nvcc " +
                  tc.toolkit->version->str() + " (needs " + family + " < " + std::to_string(*below) + ")");
  w.details.push_back("extension builds stop with: #error -- unsupported " +
                      std::string(host.family == CompilerFamily::gcc ? "GNU" : "clang") + " version!");
  w.details.push_back("source: " + bounds->source);
  if (tc.compiler) {
    const HostCompilerChoice& c = *tc.compiler;
    std::vector<std::string> commands = {set_env_command(x.shell, "CUDAHOSTCXX", c.cxx.path),
                                         set_env_command(x.shell, "CXX", c.cxx.path)};
    if (!c.cc.empty()) commands.push_back(set_env_command(x.shell, "CC", c.cc));
    w.fixes.push_back({"Build with " + c.cxx.path + " (" + std::string(to_string(c.cxx.family)) + " " +
                           detail::version_or(c.cxx.version) + ", inside the bounds; torchfix env exports it)",
                       commands});
  } else {
    const CompilerInstall install = compiler_install(&k, s.platform.os, host.family, *below - 1);
    w.fixes.push_back({"Install an older compiler and build with it",
                       {install.command, set_env_command(x.shell, "CUDAHOSTCXX", install.cxx),
                        set_env_command(x.shell, "CXX", install.cxx), set_env_command(x.shell, "CC", install.cc)}});
  }
  for (const HostCompilerBounds& b : k.host_compilers) {
    if (auto newer = bound_for(b, host.family); newer && host.version->major() < *newer) {
      w.fixes.push_back({"Or use CUDA " + b.cuda_min.str() + " or newer, which accepts " + family + " " +
                             std::to_string(host.version->major()),
                         {}});
      break;
    }
  }
  out.push_back(std::move(w));
}

// The toolchain a build here uses: the one decision (core/situation/toolchain.hpp)
// that `torchfix env` exports and `torchfix build` plans with.
void report_toolchain(const Situation& x, const Knowledge& k, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  const Toolchain& tc = x.toolchain;
  if (!tc.toolkit) {
    if (!s.toolkits.empty() && !tc.arch.empty()) {
      Finding f = finding("toolchain.no-toolkit", Severity::note, Section::compilers,
                          "No installed nvcc fits a build for this machine's GPUs");
      f.details.push_back(tc.toolkit_reason);
      out.push_back(std::move(f));
    }
    return;
  }
  std::string title = "Builds here: nvcc " + detail::version_or(tc.toolkit->version);
  if (tc.compiler) {
    title += ", CXX=" + tc.compiler->cxx.path;
    if (!tc.compiler->cc.empty()) title += ", CC=" + tc.compiler->cc;
  }
  title +=
      ", TORCH_CUDA_ARCH_LIST=" + render(tc.arch, ArchFormat::torch) + ", MAX_JOBS=" + std::to_string(tc.jobs.jobs);
  Finding f = finding("toolchain.decision", tc.compiler ? Severity::ok : Severity::warning, Section::compilers, title);
  f.details.push_back("nvcc " + tc.toolkit->nvcc + ": " + tc.toolkit_reason);
  if (tc.compiler) {
    f.details.push_back("host compiler: " + tc.compiler->reason);
  } else {
    f.details.push_back(tc.compiler_error);
  }
  f.details.push_back("arch list: " + tc.arch_reason);
  f.details.push_back("MAX_JOBS: " + tc.jobs.reason);
  f.details.push_back("torchfix env exports these; torchfix build uses them");
  out.push_back(std::move(f));
  report_compiler_bounds(x, k, out);
}

void diagnose_compilers(const Situation& x, const Knowledge& k, std::vector<Finding>& out) {
  const Snapshot& s = *x.snapshot;
  if (s.compilers.empty()) {
    out.push_back(finding("compiler.none", Severity::note, Section::compilers,
                          "No host C++ compiler found: needed only to build extensions"));
  }
  for (const HostCompiler& c : s.compilers) {
    Finding f = finding("compiler.found", Severity::ok, Section::compilers,
                        std::string(to_string(c.family)) + " " + detail::version_or(c.version) + " at " + c.path +
                            " (" + c.origin + ")");
    if (!c.version) mark_broken(f, s, "compiler:" + c.path);
    out.push_back(std::move(f));
  }
  if (!k.build_recipe(k_generic_recipe)) return;
  report_toolchain(x, k, out);
}

}  // namespace

int Diagnosis::count(Severity severity) const {
  return static_cast<int>(std::ranges::count_if(findings, [&](const Finding& f) { return f.severity == severity; }));
}

std::vector<const Finding*> Diagnosis::unchecked() const {
  std::vector<const Finding*> out;
  for (const Finding& f : findings) {
    if (f.unchecked) out.push_back(&f);
  }
  return out;
}

int Diagnosis::exit_code() const {
  return count(Severity::problem) > 0 ? 1 : 0;
}

namespace {

constexpr EnumName<Severity> k_severities[] = {
    {Severity::ok, "ok"}, {Severity::note, "note"}, {Severity::warning, "warning"}, {Severity::problem, "problem"}};
static_assert(in_order(k_severities));
constexpr EnumName<Section> k_sections[] = {{Section::gpus, "gpus"},
                                            {Section::toolkits, "toolkits"},
                                            {Section::compilers, "compilers"},
                                            {Section::python, "python"}};
static_assert(in_order(k_sections));

}  // namespace

std::string_view to_string(Severity severity) {
  return name_in(k_severities, severity);
}

std::string_view to_string(Section section) {
  return name_in(k_sections, section);
}

namespace detail {

Diagnosis diagnose_verdicts(const Situation& x, const Knowledge& knowledge) {
  Diagnosis d;
  diagnose_gpus(x, d.findings);
  diagnose_gpu_drivers(x, knowledge, d.findings);
  diagnose_toolkits(x, knowledge, d.findings);
  diagnose_arch_list_variable(x, d.findings);
  diagnose_compilers(x, knowledge, d.findings);
  diagnose_pythons(x, knowledge, d.findings);
  return d;
}

Diagnosis diagnose_verdicts(const Snapshot& snapshot, const Knowledge& knowledge) {
  return diagnose_verdicts(situate(snapshot, knowledge), knowledge);
}

}  // namespace detail

Diagnosis diagnose(const Snapshot& snapshot, const Knowledge& knowledge) {
  return diagnose(situate(snapshot, knowledge), knowledge);
}

Diagnosis diagnose(const Situation& situation, const Knowledge& knowledge) {
  Diagnosis d = detail::diagnose_verdicts(situation, knowledge);
  detail::attach_remedies(situation, knowledge, d);
  return d;
}

}  // namespace torchfix
