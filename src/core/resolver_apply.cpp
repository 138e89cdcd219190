// The resolver's bridge to snapshots: constraints from a snapshot, a remedy
// applied to a snapshot, and a remedy spelled as commands.

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/arch_list.hpp"
#include "core/diagnosis.hpp"
#include "core/ngc.hpp"
#include "core/quote.hpp"
#include "core/recipe.hpp"
#include "core/resolver.hpp"
#include "core/resolver_internal.hpp"
#include "core/toolchain.hpp"

namespace torchfix {
namespace {

// The release tag (in the recipe's tag_format) of an installed or target
// `version` ("2.6.3+cu124" -> v2.6.3); "" for a version that names no
// release (a dev or git build).
std::string release_tag(const Recipe& rec, const std::string& version) {
  const std::string v = version.substr(0, version.find('+'));
  const auto post = v.find(".post");
  const std::string base = v.substr(0, post);
  if (base.empty() || base.find_first_not_of("0123456789.") != std::string::npos ||
      (post != std::string::npos && v.find_first_not_of("0123456789", post + 5) != std::string::npos)) {
    return "";
  }
  std::string tag = rec.tag_format;
  if (const auto at = tag.find("{version}"); at != std::string::npos) tag.replace(at, 9, v);
  return tag;
}

using detail::cc_list;
using detail::major_minor_of;

std::vector<std::string> driver_commands(const DriverChange& d, const Constraints& c) {
  const std::string floor =
      d.minimum.str() + (d.downgrade ? " of the " + d.branch + " branch" : " (" + d.branch + " or newer)");
  if (c.platform == PlatformKind::windows) {
    return {"# install NVIDIA driver >= " + floor + " from https://www.nvidia.com/Download/index.aspx, then restart"};
  }
  if (d.windows) {
    return {"# on Windows (not inside WSL): install NVIDIA driver >= " + floor +
                " from https://www.nvidia.com/Download/index.aspx",
            "wsl --shutdown   # in Windows, after the install, so WSL picks up the new driver"};
  }
  if (d.host) return {"# on the host (a container uses the host's driver): install NVIDIA driver >= " + floor};
  const std::string branch = d.branch.substr(1);
  if (c.os.find("Ubuntu") != std::string::npos)
    return {"sudo apt install nvidia-driver-" + branch + "   # Ubuntu's " + d.branch + " package; then reboot"};
  if (c.os.find("Debian") != std::string::npos)
    return {"sudo apt install nvidia-driver   # from NVIDIA's CUDA repository for " + d.branch + "; then reboot"};
  if (c.os.find("Fedora") != std::string::npos) return {"sudo dnf install akmod-nvidia   # RPM Fusion; then reboot"};
  return {"# install NVIDIA driver >= " + floor + " from https://www.nvidia.com/Download/index.aspx"};
}

// The variables that make pip build `package` from source for `archs`: its
// recipe's arch variable (the targets snapped as `torchfix build` snaps them,
// core/recipe snap_arch_for_recipe), the Tegra targets its switch cannot make
// SASS for also through extra_gencode_variable, and its fixed environment;
// TORCH_CUDA_ARCH_LIST without a recipe. `snapped` is null when the recipe
// cannot target an arch (then the GPUs' own list is passed: unsupported).
std::vector<std::pair<std::string, std::string>> build_env(const Recipe* r, const std::vector<ComputeCapability>& archs,
                                                           const RecipeArch* snapped) {
  const ArchList list = arch_list_for_gpus(archs, PtxPolicy::none);
  if (!r) return {{"TORCH_CUDA_ARCH_LIST", render(list, ArchFormat::torch)}};
  std::vector<std::pair<std::string, std::string>> out;
  if (!snapped) {
    out.emplace_back(r->arch_variable, render(list, r->arch_format));
  } else {
    out.emplace_back(r->arch_variable, render(snapped->all, r->arch_format));  // as build/plan_make.cpp sets it
    if (!snapped->extra.empty()) {
      out.emplace_back(r->extra_gencode_variable, render(snapped->extra, ArchFormat::gencode));
    }
  }
  for (const RecipeEnv& e : r->env) {
    if (e.value.find('{') == std::string::npos) out.emplace_back(e.name, e.value);
  }
  return out;
}

}  // namespace

std::vector<std::string> wheel_commands(const WheelChange& w, const std::string& interpreter,
                                        const std::vector<std::string>& companions, CommandShell shell) {
  const std::string pin = w.same_release ? "torch==" + w.release.str() : "torch==" + w.release.major_minor() + ".*";
  std::vector<std::string> tail = {pin};
  for (const std::string& companion : companions) tail.push_back(companion);
  tail.insert(tail.end(), {"--index-url", w.wheel->index_url()});
  std::vector<std::string> pip = {interpreter, "-m", "pip", "install", "--force-reinstall"};
  std::vector<std::string> uv = {"uv", "pip", "install", "--python", interpreter, "--reinstall"};
  pip.insert(pip.end(), tail.begin(), tail.end());
  uv.insert(uv.end(), tail.begin(), tail.end());
  return {command_line(shell, pip), command_line(shell, uv)};
}

Constraints constraints_for(const Situation& x, std::optional<std::size_t> python, const Knowledge& k,
                            const std::vector<std::string>& failing) {
  const Snapshot& s = *x.snapshot;
  Constraints c;
  c.gpus = x.gpus;
  c.forward_compat = !x.known_gpus.empty() &&
                     std::ranges::all_of(x.known_gpus, [](const Gpu* g) { return forward_compat_allowed(*g); });
  if (x.driver.version || x.driver.cuda) c.drivers.push_back(x.driver);
  c.platform = x.platform;
  c.container = s.platform.container;
  c.os = s.platform.os;
  if (x.current_toolkit && x.current_toolkit->version) c.toolkit = x.current_toolkit->version;
  c.toolkits = s.toolkits;
  c.compilers = s.compilers;
  if (!python || *python >= s.pythons.size()) return c;
  const PythonEnv& env = s.pythons[*python];
  const EnvFacts& facts = x.pythons[*python];
  if (!env.interpreter.empty()) c.interpreter = env.interpreter;
  if (env.python_version) c.python = Version::parse(*env.python_version);
  if (env.torch) {
    InstalledTorch t;
    t.release = facts.release.value_or(Version({0}));
    t.variant = facts.variant;
    t.cuda = facts.cuda;
    t.images = facts.images.images;
    c.torch = std::move(t);
  }
  for (const char* name : {"torchvision", "torchaudio"}) {
    if (env.distributions.contains(name)) c.companions.emplace_back(name);
  }
  auto add = [&](const std::string& name, const std::string& version) {
    if (std::ranges::any_of(c.packages, [&](const InstalledPackage& p) { return p.name == name; })) return;
    c.packages.push_back({name, version, std::ranges::find(failing, name) == failing.end(), {}});
  };
  for (const PackageKernels& p : env.kernels) {
    if (p.distribution != "torch" && !p.distribution.starts_with("nvidia-")) add(p.distribution, p.version);
    if (!c.packages.empty() && c.packages.back().name == p.distribution) {
      c.packages.back().editable_root = p.provenance.editable_root;
    }
  }
  for (const auto& [name, version] : env.distributions) {
    if (k.extension(name) ||
        std::ranges::any_of(k.extension_pins, [&](const ExtensionPin& e) { return e.distribution == name; })) {
      add(name, version);
    }
  }
  return c;
}

Snapshot apply_remedy(Snapshot s, std::optional<std::size_t> python, const Remedy& r, const Knowledge& k) {
  if (r.driver) {
    // The CUDA it supports is the tables' answer, looked up by situate().
    s.driver.version = r.driver->minimum;
    s.driver.cuda_version.reset();
    s.driver.source = "remedy";
  }
  if (!python || *python >= s.pythons.size()) return s;
  PythonEnv& env = s.pythons[*python];
  auto drop_kernels = [&](const std::string& name) {
    std::erase_if(env.kernels, [&](const PackageKernels& p) { return p.distribution == name; });
  };
  if (r.container) {
    // Inside the image: its torch and CUDA; its cuda-compat package makes
    // the host driver serve the image's CUDA where compatibility applies.
    const ContainerChange& image = *r.container;
    TorchBuild t;
    t.version = image.release->torch;
    t.cuda = image.release->cuda.major_minor();
    if (image.arch_list) t.arch_flags = image.arch_list->images;
    t.location = "(remedy: " + image.image + ")";
    env.torch = t;
    env.status = PythonStatus::ok;
    env.distributions["torch"] = t.version;
    drop_kernels("torch");
    // The host's nvcc is not inside the image; the image's own matches its
    // CUDA (docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes,
    // "Contents of the PyTorch container": NVIDIA CUDA x.y).
    s.toolkits = {{"/usr/local/cuda/bin/nvcc", t.location, image.release->cuda, k.nvcc_archs_for(image.release->cuda),
                   "table (recipes/toolkits.toml)"}};
    if (image.compat && (!s.driver.cuda_version || *s.driver.cuda_version < image.release->cuda)) {
      s.driver.cuda_version = image.release->cuda;
      s.driver.source = "remedy (the image's CUDA forward compatibility)";
    }
  }
  if (r.wheel) {
    const WheelVariant& w = *r.wheel->wheel;
    TorchBuild t;
    const std::string release = r.wheel->same_release ? r.wheel->release.str() : r.wheel->release.major_minor() + ".0";
    t.version = release + "+" + w.variant;
    t.cuda = w.cuda.major_minor();
    t.arch_flags = w.images;
    t.location = "(remedy)";
    env.torch = t;
    env.status = PythonStatus::ok;
    env.distributions["torch"] = t.version;
    drop_kernels("torch");
  }
  for (const PackageMove& m : r.moves) {
    if (!m.to.empty()) env.distributions[m.package] = m.to;
  }
  for (const PackageBuild& b : r.builds) {
    std::vector<Arch> built;
    for (ComputeCapability cc : b.archs) built.push_back({ImageKind::sass, cc, ArchVariant::generic});
    if (b.package == "pytorch") {
      TorchBuild t;
      t.version =
          (env.torch ? env.torch->version.substr(0, env.torch->version.find('+')) : std::string("2.0.0")) + "+src";
      if (b.nvcc_min) t.cuda = b.nvcc_min->major_minor();
      t.arch_flags = built;
      t.location = "(remedy)";
      env.torch = t;
      env.status = PythonStatus::ok;
      drop_kernels("torch");
      continue;
    }
    PackageKernels rebuilt;
    rebuilt.distribution = b.package;
    for (const PackageKernels& p : env.kernels) {
      if (p.distribution == b.package) rebuilt.version = p.version;
    }
    rebuilt.binaries.push_back({"(rebuilt by the remedy)", {{built, 1}}, {}, {}});
    drop_kernels(b.package);
    env.kernels.push_back(std::move(rebuilt));
  }
  return s;
}

Fix remedy_fix(const Remedy& r, const Constraints& c, const Knowledge& k) {
  Fix fix;
  std::vector<std::string> parts;
  const CommandShell shell = command_shell(c.platform);
  auto shell_word = [&](std::string_view word) { return quote_word(shell, word); };
  const std::string py = shell_word(c.interpreter);
  if (r.driver) {
    const std::string where =
        std::string(r.driver->windows ? " on Windows" : "") + (r.driver->host ? " on the host" : "");
    std::string text = r.driver->downgrade ? "install the " + r.driver->branch + " NVIDIA driver branch" + where +
                                                 " (the last that drives this GPU; >= " + r.driver->minimum.str() + ")"
                                           : "upgrade the NVIDIA driver" + where + " to >= " + r.driver->minimum.str() +
                                                 " (" + r.driver->branch + " or newer)";
    if (!r.driver->why.empty()) text += ": " + r.driver->why.back();
    parts.push_back(text);
    for (std::string& line : driver_commands(*r.driver, c)) {
      fix.steps.push_back({.kind = StepKind::driver, .command = line});
      fix.commands.push_back(std::move(line));
    }
  }
  if (r.wheel) {
    const WheelVariant& w = *r.wheel->wheel;
    std::string text = "install torch " + r.wheel->release.str() + (r.wheel->same_release ? "" : ".x") + " from the " +
                       w.variant + " index (arch list " + w.arch_list + ")";
    if (r.minor_compat) text += "; it runs on this driver through minor-version compatibility";
    if (c.drivers.empty() && !r.driver) {
      const DriverFloor* floor = k.driver_floor(w.cuda);
      const MinorCompat* compat = k.minor_compat_for(w.cuda.major());
      text += "; it needs a driver supporting CUDA " + w.cuda.str();
      const bool windows = windows_driver(c.platform);
      if (floor) text += " (>= " + (windows && floor->windows ? *floor->windows : floor->linux).str();
      if (floor && compat) {
        text += ", or any >= " + (windows && compat->windows ? *compat->windows : compat->linux).str() +
                " through minor-version compatibility";
      }
      if (floor) text += ")";
    }
    parts.push_back(text);
    std::vector<std::string> lines = wheel_commands(*r.wheel, c.interpreter, c.companions, shell);
    FixStep step{.requirements = {r.wheel->same_release ? "torch==" + r.wheel->release.str()
                                                        : "torch==" + r.wheel->release.major_minor() + ".*"},
                 .index_url = w.index_url(),
                 .variant = w.variant};
    step.requirements.insert(step.requirements.end(), c.companions.begin(), c.companions.end());
    step.command = lines.front();
    fix.steps.push_back(std::move(step));
    for (std::string& line : lines) fix.commands.push_back(std::move(line));
  }
  if (r.container) {
    const ContainerChange& image = *r.container;
    const std::string driver = image.driver_needed ? "host driver " + ngc_driver_text(image.driver_needed)
                                                   : "a host driver that supports CUDA " + image.release->cuda.str();
    std::string text =
        "run PyTorch in NVIDIA's container " + image.image + " (torch " + image.release->torch + ", CUDA " +
        image.release->cuda.str() + (image.arch_list ? ", built for " + image.arch_list->arch_list : std::string()) +
        ") instead of this environment" + (c.container ? ", started on the host" : "") + ": it needs " + driver;
    if (image.compat) {
      text += "; this driver runs it only through the image's CUDA compatibility package (data-centre GPUs and Jetson)";
    } else if (c.drivers.empty()) {
      text += " (the driver here is unknown)";
    }
    text += "; install your other packages inside it";
    for (const std::string& note : image.notes) text += "; " + note;
    parts.push_back(text);
    fix.steps.push_back({.kind = StepKind::container, .command = image.run_line});
    fix.commands.push_back(image.run_line);
  }
  // The CUDA of the torch extensions are built against once the remedy is
  // applied: the new wheel's, the source build's, else the installed one's.
  std::optional<Version> new_torch_cuda = c.torch ? c.torch->cuda : std::nullopt;
  if (r.wheel && r.wheel->wheel) new_torch_cuda = r.wheel->wheel->cuda;
  for (const PackageBuild& b : r.builds) {
    if (b.package == "pytorch" && b.nvcc_min) new_torch_cuda = b.nvcc_min;
  }
  // Adds the toolchain's precondition to `text` and the commands that build
  // `package` from source for `archs`: `torchfix build` where its recipe can
  // target them, then pip with the recipe's switches (`pin`: "==2.6.3" or "").
  auto source_build = [&](const std::string& package, const std::vector<ComputeCapability>& archs,
                          const std::string& pin, std::string& text, const std::string& release) {
    // An editable checkout is rebuilt where it is (its own source, already
    // on disk); a pinned release from its sdist, whose version has no local
    // part ("+cu121" names a wheel of a project index, never an sdist).
    std::string editable;
    for (const InstalledPackage& p : c.packages) {
      if (p.name == package) editable = p.editable_root;
    }
    const Recipe* rec = k.build_recipe(package);
    std::optional<RecipeArch> snapped;
    if (rec) {
      const ArchList arch = arch_list_for_gpus(archs, PtxPolicy::none);
      // A source build also needs an nvcc that cpp_extension accepts for the
      // torch it builds against, and a host compiler that nvcc accepts (F10's
      // kind): the one toolchain decision says whether this machine has them.
      ToolchainFacts facts;
      facts.gpus = archs;
      facts.toolkits = c.toolkits;
      facts.compilers = c.compilers;
      facts.os = c.os;
      // The driver the remedy leaves: its own upgrade, else the installed one
      // (the lowest where there are several nodes' drivers).
      if (r.driver) {
        facts.driver_cuda = cuda_of_driver(k, r.driver->minimum, DriverGiven::version, driver_numbering(c.platform));
      } else {
        for (const DriverState& d : c.drivers) {
          if (d.cuda && (!facts.driver_cuda || *d.cuda < *facts.driver_cuda)) facts.driver_cuda = d.cuda;
        }
      }
      if (rec->kind == RecipeKind::extension) facts.torch_cuda = new_torch_cuda;
      ToolchainRequest request;  // the GPUs' own list (arch), or SASS that runs on them
      request.recipe = rec;
      request.ptx = PtxPolicy::none;
      const Toolchain tc = decide_toolchain(facts, k, request);
      // (An extension without a torch CUDA to match has nothing to say yet.)
      if (!tc.toolkit && !tc.toolkit_reason.empty() && (rec->kind != RecipeKind::extension || facts.torch_cuda)) {
        text += "; first: " + tc.toolkit_reason;
      } else if (tc.toolkit && !tc.compiler && !tc.compiler_error.empty()) {
        text += "; first: " + tc.compiler_error;
      }
      // The same question `torchfix build` asks: print its line only where it
      // would build (vllm has no kernels for 6.1: build refuses, pip may try).
      std::vector<std::string> notes;
      if (auto planned = snap_arch_for_recipe(arch, *rec, notes)) {
        snapped = std::move(*planned);
        // Pinned to the release it rebuilds: the default branch may need a newer torch.
        const std::string tag = release_tag(*rec, release);
        if (editable.empty()) {
          fix.commands.push_back("torchfix build " + package + " --arch " + shell_word(cc_list(archs)) +
                                 (tag.empty() ? "" : " --ref " + shell_word(tag)));
          fix.steps.push_back({.kind = StepKind::build, .command = fix.commands.back()});
        }
      }
    }
    if (package == "pytorch") return;
    std::string prefix;
    FixStep step{.mode = InstallMode::source_build, .requirements = {package + pin.substr(0, pin.find('+'))}};
    for (const auto& [name, value] : build_env(rec, archs, snapped ? &*snapped : nullptr)) {
      step.env.emplace_back(name, value);
      if (shell != CommandShell::posix) {
        fix.commands.push_back(set_env_command(shell, name, value));
      } else {
        prefix += name + "=" + shell_word(value) + " ";
      }
    }
    if (!editable.empty()) {
      text += " (the editable checkout " + editable + ", rebuilt in place)";
      fix.commands.push_back("cd " + shell_word(editable) + " && " + prefix + py +
                             " -m pip install --no-build-isolation --no-deps -e .");
      step.mode = InstallMode::editable;
      step.requirements = {editable};
      step.command = fix.commands.back();
      fix.steps.push_back(std::move(step));
      return;
    }
    fix.commands.push_back(prefix + py + " -m pip install --no-build-isolation --no-binary " + package +
                           " --no-deps --force-reinstall " + shell_word(package + pin.substr(0, pin.find('+'))));
    step.command = fix.commands.back();
    fix.steps.push_back(std::move(step));
  };
  const std::vector<ComputeCapability> gpus = distinct_capabilities(c.gpus);
  // A new torch first, then what is rebuilt against it.
  const auto add_build = [&](const PackageBuild& b) {
    std::string text = "build " + b.package + " from source for " + cc_list(b.archs);
    if (b.nvcc_min && b.nvcc_max && *b.nvcc_min == *b.nvcc_max) {
      text += " with CUDA " + b.nvcc_min->str();
    } else if (b.nvcc_min || b.nvcc_max) {
      text += " with " + NvccWindow{b.nvcc_min, b.nvcc_max}.str();
    }
    if (!b.note.empty()) text += " (" + b.note + ")";
    if (b.package == "pytorch" && std::ranges::any_of(b.archs, is_tegra)) {
      text +=
          " (or install NVIDIA's PyTorch wheel for your JetPack, "
          "https://developer.download.nvidia.com/compute/redist/jp/)";
    }
    std::string version;
    for (const InstalledPackage& p : c.packages) {
      if (p.name == b.package && !p.version.empty()) version = "==" + p.version;
    }
    // torch is rebuilt at the installed release (its source build has no pip pin).
    const std::string release = b.package == "pytorch" && c.torch ? c.torch->release.str()
                                : version.empty()                 ? ""
                                                                  : version.substr(2);
    source_build(b.package, b.archs, version, text, release);
    parts.push_back(text);
  };
  for (const PackageBuild& b : r.builds) {
    if (b.package == "pytorch") add_build(b);
  }
  for (const PackageMove& m : r.moves) {
    if (!m.to.empty()) {
      parts.push_back(m.package + " " + m.from + " moves to " + m.to + ", the release for the new torch");
      fix.commands.push_back(py + " -m pip install --no-deps " + shell_word(m.package + "==" + m.to));
      fix.steps.push_back({.mode = InstallMode::pin_no_deps,
                           .requirements = {m.package + "==" + m.to},
                           .command = fix.commands.back()});
    } else {
      std::string text = m.package + " " + m.from + " is built against the old torch: rebuild it against the new one";
      source_build(m.package, gpus, "", text, m.from);
      parts.push_back(text);
    }
  }
  for (const PackageBuild& b : r.builds) {
    if (b.package != "pytorch") add_build(b);
  }
  std::string summary;
  for (const std::string& p : parts) summary += (summary.empty() ? "" : "; then ") + p;
  if (!summary.empty()) summary[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(summary[0])));
  fix.summary = summary;
  return fix;
}

}  // namespace torchfix
