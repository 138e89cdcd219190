// A remedy spelled as a fix: its summary and the commands that apply it
// (driver, wheel, container, source builds and moved extensions), in the
// platform's shell.

#include <algorithm>
#include <cctype>
#include <iterator>
#include <optional>

#include "core/arch/arch_list.hpp"
#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/facts/recipe.hpp"
#include "core/resolver/resolver.hpp"
#include "core/resolver/resolver_internal.hpp"
#include "core/situation/ngc.hpp"
#include "core/situation/toolchain.hpp"

namespace torchfix {
namespace {

using detail::build_env;
using detail::cc_list;
using detail::driver_commands;
using detail::index_pages_text;
using detail::major_minor_of;
using detail::release_tag;
using detail::release_to_build;

// Holds what remedy_fix writes: the fix, the parts of its summary, and how
// its commands are spelled for the platform's shell.
struct FixWriter {
  const Remedy& r;
  const Constraints& c;
  const Knowledge& k;
  CommandShell shell;
  std::string py;  // the interpreter, quoted
  Fix fix = {};
  std::vector<std::string> parts = {};

  std::string word(std::string_view w) const { return quote_word(shell, w); }
  // Adds `step` and its printed command.
  void push(FixStep step) {
    fix.commands.push_back(step.command);
    fix.steps.push_back(std::move(step));
  }
};

void add_driver(FixWriter& w) {
  const DriverChange& d = *w.r.driver;
  const std::string where = std::string(d.windows ? " on Windows" : "") + (d.host ? " on the host" : "");
  std::string text =
      d.downgrade ? "install the " + d.branch + " NVIDIA driver branch" + where +
                        " (the last that drives this GPU; >= " + d.minimum.str() + ")"
                  : "upgrade the NVIDIA driver" + where + " to >= " + d.minimum.str() + " (" + d.branch + " or newer)";
  if (!d.why.empty()) text += ": " + d.why.back();
  w.parts.push_back(text);
  for (std::string& line : driver_commands(d, w.c, w.k)) w.push({.kind = StepKind::driver, .command = std::move(line)});
}

// The driver a wheel needs, said where no driver is known: its CUDA's
// floor in the platform's numbering, and the minor-version floor.
std::string driver_needed_text(const WheelVariant& wheel, PlatformKind platform, const Knowledge& k) {
  const DriverFloor* floor = k.driver_floor(wheel.cuda);
  const MinorCompat* compat = k.minor_compat_for(wheel.cuda.major());
  std::string text = "; it needs a driver supporting CUDA " + wheel.cuda.str();
  // Jetson's driver comes with JetPack and carries no desktop number.
  if (platform == PlatformKind::tegra) return text + " (on Jetson: the JetPack that ships it)";
  const bool windows = windows_driver(platform);
  if (floor) {
    text += " (>= " + (!windows         ? floor->linux.str()
                       : floor->windows ? floor->windows->str()
                                        : floor->linux.str() + " on Linux; no Windows driver in the release notes");
  }
  if (floor && compat) {
    text += ", or any >= " + (windows && compat->windows ? *compat->windows : compat->linux).str() +
            " through minor-version compatibility";
  }
  if (floor) text += ")";
  return text;
}

// What installing `change` does, in words: the index, or NVIDIA's JetPack file.
std::string wheel_text(const WheelChange& change) {
  const WheelVariant& wheel = *change.wheel;
  if (!wheel.url.empty()) {
    return "install NVIDIA's torch " + wheel.torch + " wheel for JetPack " + wheel.jetpack + " (L4T R" +
           wheel.l4t.back() + ", Python " + (wheel.python ? wheel.python->str() : "") + ", CUDA " + wheel.cuda.str() +
           ", arch list " + wheel.arch_list + (wheel.confidence == "UNVERIFIED" ? ", not confirmed" : "") +
           "): PyPI's aarch64 wheels hold no Jetson arch";
  }
  return "install torch " + change.release.str() + (change.same_release || change.exact ? "" : ".x") + " from the " +
         wheel.variant + " index (arch list " + wheel.arch_list + ")";
}

// What reinstalling the installed torch with its companions does, in words.
std::string companions_text(const Remedy& r, const Constraints& c) {
  std::string names;
  for (const std::string& name : r.companions_rebuilt_elsewhere) names += (names.empty() ? "" : ", ") + name;
  const WheelChange& change = *r.wheel;
  const std::string verb = r.companions_rebuilt_elsewhere.size() == 1 ? " does" : " do";
  if (change.nightly) {
    return names + verb + " not match the installed nightly torch " + (c.torch ? c.torch->version : "") +
           ": reinstall torch with its companions from the nightly " + change.wheel->variant +
           " channel, whose companions are built for its torch of the same day (torch moves to the newest nightly "
           "there: the channel keeps recent builds only)";
  }
  return names + verb + " not match the installed torch " + change.release.str() + "+" + change.wheel->variant +
         ": reinstall torch " + change.release.str() + " with its companions from the " + change.wheel->variant +
         " index, which holds the releases built for it";
}

void add_wheel(FixWriter& w) {
  const WheelChange& change = *w.r.wheel;
  const WheelVariant& wheel = *change.wheel;
  std::string text = w.r.companions_rebuilt_elsewhere.empty() ? wheel_text(change) : companions_text(w.r, w.c);
  if (!w.r.built_for.empty()) text += ": " + w.r.built_for;
  if (w.r.minor_compat) text += "; it runs on this driver through minor-version compatibility";
  if (!w.r.held_by.empty()) {
    // The tables this fix's moves come from: a pinned release, a project's page.
    const bool pins = std::ranges::any_of(w.r.moves, [](const PackageMove& m) { return !m.to.empty(); });
    const bool pages = std::ranges::any_of(w.r.moves, [](const PackageMove& m) { return !m.page.empty(); });
    text += "; not a newer torch: " + w.r.held_by + " (" +
            (pins || !pages ? std::string("recipes/torch-wheels.toml [[extension_pin]]") : "") +
            (pins && pages ? ", " : "") + (pages ? "recipes/extensions.toml [[project_index]]" : "") + ")";
  }
  if (w.c.drivers.empty() && !w.r.driver) text += driver_needed_text(wheel, w.c.platform, w.k);
  w.parts.push_back(text);
  std::vector<std::string> lines = wheel_commands(change, w.c.interpreter, w.c.companions, w.shell);
  // A nightly step names no variant: a mirror of the release index does not serve it.
  FixStep step{.mode = change.nightly ? InstallMode::nightly : InstallMode::reinstall,
               .requirements = {wheel_requirement(change)},
               .index_url = wheel_index_url(change),
               .variant = wheel.url.empty() && !change.nightly ? wheel.variant : ""};
  if (wheel.url.empty())
    step.requirements.insert(step.requirements.end(), w.c.companions.begin(), w.c.companions.end());
  step.command = lines.front();
  w.fix.steps.push_back(std::move(step));
  for (std::string& line : lines) w.fix.commands.push_back(std::move(line));  // pip, then uv: one step
}

void add_container(FixWriter& w) {
  const ContainerChange& image = *w.r.container;
  const bool tegra = w.c.platform == PlatformKind::tegra;
  const std::string driver =
      tegra ? ngc_needs_text(std::nullopt, image.jetpack_needed, DriverNumbering::tegra, image.release->cuda)
      : image.driver_needed ? "host driver " + ngc_driver_text(image.driver_needed)
                            : "a host driver that supports CUDA " + image.release->cuda.str();
  std::string text =
      "run PyTorch in NVIDIA's container " + image.image + " (torch " + image.release->torch + ", CUDA " +
      image.release->cuda.str() + (image.arch_list ? ", built for " + image.arch_list->arch_list : std::string()) +
      ") instead of this environment" + (w.c.container ? ", started on the host" : "") + ": it needs " + driver;
  if (image.compat) {
    text +=
        tegra
            ? "; this JetPack runs it through the image's CUDA compatibility package (Jetson forward compatibility)"
            : "; this driver runs it only through the image's CUDA compatibility package (data-centre GPUs and Jetson)";
  } else if (w.c.drivers.empty()) {
    text += " (the driver here is unknown)";
  }
  text += "; install your other packages inside it";
  for (const std::string& note : image.notes) text += "; " + note;
  w.parts.push_back(text);
  w.push({.kind = StepKind::container, .command = image.run_line});
}

// The CUDA extensions are built against once the remedy is applied: the
// new wheel's, the source build's, else the installed torch's.
std::optional<Version> torch_cuda_after(const Remedy& r, const Constraints& c) {
  std::optional<Version> cuda = c.torch ? c.torch->cuda : std::nullopt;
  if (r.wheel && r.wheel->wheel) cuda = r.wheel->wheel->cuda;
  for (const PackageBuild& b : r.builds) {
    if (b.package == "pytorch" && b.nvcc_min) cuda = b.nvcc_min;
  }
  return cuda;
}

// What must come first for a source build of `rec` for `archs` (an nvcc
// cpp_extension accepts for the torch it builds against, a host compiler
// nvcc accepts), from the one toolchain decision: "; first: ..." or "".
std::string toolchain_first(const FixWriter& w, const Recipe& rec, const std::vector<ComputeCapability>& archs,
                            const std::optional<Version>& torch_cuda) {
  ToolchainFacts facts;
  facts.gpus = archs;
  facts.toolkits = w.c.toolkits;
  facts.compilers = w.c.compilers;
  facts.os = w.c.os;
  facts.nvcc_search = nvcc_search(w.c.platform);
  // The driver the remedy leaves: its own upgrade, else the installed one
  // (the lowest where there are several nodes' drivers).
  if (w.r.driver) {
    facts.driver_cuda = cuda_of_driver(w.k, w.r.driver->minimum, DriverGiven::version, driver_numbering(w.c.platform));
  } else {
    for (const DriverState& d : w.c.drivers) {
      if (d.cuda && (!facts.driver_cuda || *d.cuda < *facts.driver_cuda)) facts.driver_cuda = d.cuda;
    }
  }
  if (rec.kind == RecipeKind::extension) facts.torch_cuda = torch_cuda;
  ToolchainRequest request;  // the GPUs' own list (arch), or SASS that runs on them
  request.recipe = &rec;
  request.ptx = PtxPolicy::none;
  const Toolchain tc = decide_toolchain(facts, w.k, request);
  // (An extension without a torch CUDA to match has nothing to say yet.)
  if (!tc.toolkit && !tc.toolkit_reason.empty() && (rec.kind != RecipeKind::extension || facts.torch_cuda)) {
    return "; first: " + tc.toolkit_reason;
  }
  if (tc.toolkit && !tc.compiler && !tc.compiler_error.empty()) return "; first: " + tc.compiler_error;
  return "";
}

// The editable checkout `package` is installed from; "" when it is not.
std::string editable_root(const Constraints& c, const std::string& package) {
  std::string root;
  for (const InstalledPackage& p : c.packages) {
    if (p.name == package) root = p.editable_root;
  }
  return root;
}

// The variable that makes nvcc itself build `archs` where the checkout of
// `package` passes its own arch flags (cpp_extension then leaves
// TORCH_CUDA_ARCH_LIST out): NVCC_APPEND_FLAGS, which nvcc appends to every
// command line (CUDA Compiler Driver docs, "NVCC Environment Variables";
// nvcc 13.0.88 here keeps the checkout's -gencode, -arch=sm_80 or
// -arch/-code flags and adds each appended SASS). Empty where none is needed.
std::vector<std::pair<std::string, std::string>> appended_archs(const Constraints& c, const std::string& package,
                                                                const std::vector<ComputeCapability>& archs) {
  for (const InstalledPackage& p : c.packages) {
    if (p.name == package && p.sets_arch) {
      return {{"NVCC_APPEND_FLAGS", render(arch_list_for_gpus(archs, PtxPolicy::none), ArchFormat::gencode)}};
    }
  }
  return {};
}

// Sets a source build's variables on `step` and returns what goes before
// its command on the same line (env_prefix: one line in every shell).
std::string set_build_env(FixWriter& w, FixStep& step, const std::vector<std::pair<std::string, std::string>>& env) {
  step.env.insert(step.env.end(), env.begin(), env.end());
  return env_prefix(w.shell, env);
}

// Adds the pip command that builds `package` (pinned by `pin`, "==2.6.3" or
// "") from source with the recipe's variables, or rebuilds its editable
// checkout in place.
void add_pip_build(FixWriter& w, const std::string& package, const std::vector<ComputeCapability>& archs,
                   const std::string& pin, const std::optional<RecipeArch>& snapped, std::string& text) {
  const Recipe* rec = w.k.build_recipe(package);
  const std::string editable = editable_root(w.c, package);
  // A pinned release builds from its sdist, whose version has no local part
  // ("+cu121" names a wheel of a project index, never an sdist).
  FixStep step{.mode = InstallMode::source_build, .requirements = {package + pin.substr(0, pin.find('+'))}};
  auto env = build_env(rec, archs, snapped ? &*snapped : nullptr);
  if (!editable.empty()) std::ranges::move(appended_archs(w.c, package, archs), std::back_inserter(env));
  const std::string prefix = set_build_env(w, step, env);
  if (!editable.empty()) {
    text += " (the editable checkout " + editable + ", rebuilt in place)";
    // PowerShell 5.1 has no `&&`: there pip is given the checkout's path.
    step.command =
        w.shell == CommandShell::posix
            ? "cd " + w.word(editable) + " && " + prefix + w.py + " -m pip install --no-build-isolation --no-deps -e ."
            : prefix + w.py + " -m pip install --no-build-isolation --no-deps -e " + w.word(editable);
    step.mode = InstallMode::editable;
    step.requirements = {editable};
  } else {
    step.command = prefix + w.py + " -m pip install --no-build-isolation --no-binary " + package +
                   " --no-deps --force-reinstall " + w.word(package + pin.substr(0, pin.find('+')));
  }
  w.push(std::move(step));
}

// Adds the toolchain's precondition to `text` and the commands that build
// `package` from source for `archs`: `torchfix build` where its recipe can
// target them (pinned to `release`'s tag: the default branch may need a
// newer torch), then pip with the recipe's switches (`pin`: "==2.6.3" or "").
void add_source_build(FixWriter& w, const std::string& package, const std::vector<ComputeCapability>& archs,
                      const std::string& pin, std::string& text, const std::string& release,
                      const std::optional<Version>& torch_cuda) {
  std::optional<RecipeArch> snapped;
  if (const Recipe* rec = w.k.build_recipe(package)) {
    text += toolchain_first(w, *rec, archs, torch_cuda);
    // The same question `torchfix build` asks: print its line only where it
    // would build (vllm has no kernels for 6.1: build refuses, pip may try).
    std::vector<std::string> notes;
    if (auto planned = snap_arch_for_recipe(arch_list_for_gpus(archs, PtxPolicy::none), *rec, notes)) {
      snapped = std::move(*planned);
    }
    const std::string tag = release_tag(*rec, release);
    // On native Windows the pip build alone: torchfix build has no MSVC plan there (docs/windows.md).
    if (snapped && editable_root(w.c, package).empty() && w.c.platform != PlatformKind::windows) {
      w.push({.kind = StepKind::build,
              .command = "torchfix build " + package + " --arch " + w.word(cc_list(archs)) +
                         (tag.empty() ? "" : " --ref " + w.word(tag))});
    }
  }
  if (package != "pytorch") add_pip_build(w, package, archs, pin, snapped, text);
}

// What a build does, in words: its package, archs, CUDA window and notes.
std::string build_text(const PackageBuild& b) {
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
  return text;
}

void add_build(FixWriter& w, const PackageBuild& b, const std::optional<Version>& torch_cuda) {
  std::string text = build_text(b);
  std::string version;
  for (const InstalledPackage& p : w.c.packages) {
    if (p.name == b.package && !p.version.empty()) version = "==" + p.version;
  }
  // torch is rebuilt at the installed release (its source build has no pip pin).
  const std::string release = b.package == "pytorch" && w.c.torch ? w.c.torch->release.str()
                              : version.empty()                   ? ""
                                                                  : version.substr(2);
  add_source_build(w, b.package, b.archs, version, text, release, torch_cuda);
  w.parts.push_back(text);
}

void add_git_build(FixWriter& w, const ProjectSource& src, const PackageMove& m, std::string& text,
                   const std::optional<Version>& torch_cuda) {
  const std::vector<ComputeCapability> archs = distinct_capabilities(w.c.gpus);
  const std::optional<std::string> release = release_to_build(w.k, w.r, w.c, m, text);
  if (!release) return;
  const std::string tag = src.tag(*release);
  text += ": build it from " + src.repository + " at tag " + tag + " against the " + (w.r.wheel ? "new" : "installed") +
          " torch";
  if (const Recipe* rec = w.k.build_recipe("cuda-extension")) text += toolchain_first(w, *rec, archs, torch_cuda);
  if (w.c.platform != PlatformKind::windows) {
    w.push({.kind = StepKind::build,
            .command = "torchfix build --repo " + w.word(src.repository) + " --ref " + w.word(tag) + " --arch " +
                       w.word(cc_list(archs))});
  }
  FixStep step{.mode = InstallMode::source_build, .requirements = {m.package + " @ git+" + src.repository + "@" + tag}};
  const std::string prefix = set_build_env(w, step, build_env(nullptr, archs, nullptr));
  step.command = prefix + w.py + " -m pip install --no-build-isolation --no-binary " + m.package +
                 " --no-deps --force-reinstall " + w.word(step.requirements.front());
  w.push(std::move(step));
}

// Adds the move of `m` to the wheel on its project's index page for the
// torch the fix leaves (recipes/extensions.toml [[project_index]]): the new
// wheel, or the installed torch where it stays; false when no index lists the
// package or torch is built from source. Where the
// index has no page for that torch and variant, says so and rebuilds the
// release from its sdist, or from its repository at the release tag where
// [[project_source]] names one.
bool add_index_move(FixWriter& w, const PackageMove& m, const std::optional<Version>& torch_cuda) {
  if (w.k.project_rows(m.package).empty()) return false;
  // The torch the fix leaves: the new wheel, else the installed one where torch stays.
  const bool torch_builds =
      std::ranges::any_of(w.r.builds, [](const PackageBuild& b) { return b.package == "pytorch"; });
  if (!w.r.wheel && (torch_builds || !w.c.torch)) return false;
  const Version release = major_minor_of(w.r.wheel ? w.r.wheel->release : w.c.torch->release);
  const std::string& variant = w.r.wheel ? w.r.wheel->wheel->variant : w.c.torch->variant;
  if (!m.page.empty()) {
    w.parts.push_back(m.package + " " + m.from + " moves to its wheel for torch " + release.str() + "+" + variant +
                      " from " + m.page);
    const bool page_only = m.page_install == PageInstall::no_index;
    w.push({.mode = page_only ? InstallMode::project_page_only : InstallMode::project_index,
            .requirements = {m.package},
            .index_url = m.page,
            .command = w.py + " -m pip install --force-reinstall --no-deps " +
                       (page_only ? "--no-index " : "--only-binary " + w.word(m.package) + " ") + w.word(m.package) +
                       " -f " + w.word(m.page)});
    return true;
  }
  // Before the table's first torch the index may have a page the table does not list.
  const bool before_table = release < major_minor_of(w.k.project_rows(m.package).front()->torch);
  std::string text = m.package + " " + m.from + " has no wheel for torch " + release.str() + "+" + variant +
                     (before_table ? " known to torchfix (" : " (none exists: ") +
                     "recipes/extensions.toml [[project_index]] has pages of its index " +
                     index_pages_text(w.k, m.package, release) + ")";
  if (const ProjectSource* src = w.k.project_source(m.package)) {
    add_git_build(w, *src, m, text, torch_cuda);
  } else {
    text += std::string(": build it from its sdist against the ") + (w.r.wheel ? "new" : "installed") + " torch";
    add_source_build(w, m.package, distinct_capabilities(w.c.gpus), "==" + m.from, text, m.from, torch_cuda);
  }
  w.parts.push_back(text);
  return true;
}

// Adds each extension tied to the old torch: moved to its release for the
// new torch where one is known, else rebuilt against the new torch.
void add_moves(FixWriter& w, const std::optional<Version>& torch_cuda) {
  const std::vector<ComputeCapability> gpus = distinct_capabilities(w.c.gpus);
  // Torch stays where only an extension's pin is wrong: it moves to the installed torch.
  const bool torch_stays =
      !w.r.wheel && std::ranges::none_of(w.r.builds, [](const PackageBuild& b) { return b.package == "pytorch"; });
  const std::string against = torch_stays && w.c.torch ? "the installed torch " + w.c.torch->release.str() : "";
  for (const PackageMove& m : w.r.moves) {
    if (!m.variant_index.empty()) {
      const std::string spec = m.package + "==" + m.to;
      w.parts.push_back("install " + m.package + " " + m.to + "'s build for the " + m.variant + " torch from " +
                        m.package + "'s own index " + m.variant_index + " (" + m.source + ")");
      w.push({.mode = InstallMode::variant_index,
              .requirements = {spec},
              .index_url = m.variant_index,
              .command = w.py + " -m pip install --force-reinstall --no-deps " + w.word(spec) + " --extra-index-url " +
                         w.word(m.variant_index)});
    } else if (!m.to.empty()) {
      w.parts.push_back(m.fixed ? "install " + m.package + " " + m.to + " in place of " + m.from +
                                      ", the first release that runs on every GPU here"
                        : !against.empty()
                            ? "install " + m.package + " " + m.to + " in place of " + m.from +
                                  ": the release built for " + against
                            : m.package + " " + m.from + " moves to " + m.to + ", the release for the new torch");
      w.push({.mode = InstallMode::pin_no_deps,
              .requirements = {m.package + "==" + m.to},
              .command = w.py + " -m pip install --no-deps " + w.word(m.package + "==" + m.to)});
    } else if (editable_root(w.c, m.package).empty() && add_index_move(w, m, torch_cuda)) {
      continue;
    } else if (m.detected && editable_root(w.c, m.package).empty() && !w.k.build_recipe(m.package)) {
      // Known only by the libc10/libtorch it links, with no recipe naming its
      // repository: a PyPI rebuild under its name could fetch someone else's
      // project, so the step is shown, not run.
      const std::string torch = against.empty() ? "the new torch" : against;
      w.parts.push_back(m.package + " " + m.from +
                        (against.empty() ? " links the old torch's C++ libraries" : " was built for another torch") +
                        ": rebuild it from its own source against " + torch);
      w.push({.kind = StepKind::build,
              .command = "# rebuild " + m.package + " " + m.from + " from its own source against " + torch +
                         " (torchfix does not know where it came from)"});
    } else {
      std::string text =
          against.empty()
              ? m.package + " " + m.from + " is built against the old torch: rebuild it against the new one"
              : m.package + " " + m.from + " was built for another torch: rebuild it " + "against " + against;
      // Torch stays: the installed release is rebuilt (its sdist, its tag).
      add_source_build(w, m.package, gpus, against.empty() ? "" : "==" + m.from, text, m.from, torch_cuda);
      w.parts.push_back(text);
    }
  }
}

}  // namespace

Fix remedy_fix(const Remedy& r, const Constraints& c, const Knowledge& k) {
  const CommandShell shell = command_shell(c.platform);
  FixWriter w{r, c, k, shell, quote_word(shell, c.interpreter)};
  if (r.driver) add_driver(w);
  if (r.wheel) add_wheel(w);
  if (r.container) add_container(w);
  const std::optional<Version> torch_cuda = torch_cuda_after(r, c);
  // A new torch first, then what is moved or rebuilt against it.
  for (const PackageBuild& b : r.builds) {
    if (b.package == "pytorch") add_build(w, b, torch_cuda);
  }
  add_moves(w, torch_cuda);
  for (const PackageBuild& b : r.builds) {
    if (b.package != "pytorch") add_build(w, b, torch_cuda);
  }
  std::string summary;
  for (const std::string& p : w.parts) summary += (summary.empty() ? "" : "; then ") + p;
  // A sentence starts with a capital, unless it starts with a package's own name ("torchvision 0.22.0 ...").
  const auto names_package = [&](std::string_view name) { return summary.starts_with(std::string(name) + " "); };
  const bool package_first =
      std::ranges::any_of(c.packages, [&](const InstalledPackage& p) { return names_package(p.name); }) ||
      std::ranges::any_of(c.companions, names_package);
  if (!summary.empty() && !package_first) {
    summary[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(summary[0])));
  }
  w.fix.summary = summary;
  return std::move(w.fix);
}

}  // namespace torchfix
