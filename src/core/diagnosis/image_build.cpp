#include "core/diagnosis/image_build.hpp"

#include <algorithm>
#include <map>

#include "core/diagnosis/app_images.hpp"
#include "core/diagnosis/extension_checks.hpp"

namespace torchfix {
namespace {

// A fix that builds from source (torch or an extension, an editable
// checkout, or a rebuild torchfix can only describe): never run inside a
// running container, whose image lacks the toolkit and would lose it.
bool builds(const Fix& fix) {
  const bool step = std::ranges::any_of(fix.steps, [](const FixStep& s) {
    return s.kind == StepKind::build || s.mode == InstallMode::source_build || s.mode == InstallMode::editable;
  });
  return step || std::ranges::any_of(fix.commands, [](const std::string& c) {
           return c.starts_with("torchfix build") || c.starts_with("#");
         });
}

// A fix made of wheel installs alone: what an image's build can do too.
bool installs(const Fix& fix) {
  return !fix.steps.empty() && !builds(fix) &&
         std::ranges::all_of(fix.steps, [](const FixStep& s) { return s.kind == StepKind::install; });
}

// The installed packages (not torch's companions) whose exact torch pin the
// installed torch `release` meets: "xformers==0.0.29.post2". Where torch cannot
// run and one that does exists, such a pin is what made pip install this torch.
std::vector<std::string> pins_on(const PythonEnv& env, const Version& release, const Knowledge& k) {
  std::map<std::string, std::string> installed = env.distributions;
  for (const PackageKernels& p : env.kernels) installed.emplace(p.distribution, p.version);
  std::vector<std::string> out;
  for (const auto& [name, version] : installed) {
    if (name == "torch" || std::ranges::find(k_torch_companions, name) != std::end(k_torch_companions)) continue;
    const auto p = std::ranges::find(env.kernels, name, &PackageKernels::distribution);
    const auto pin = p == env.kernels.end() ? std::nullopt : detail::metadata_torch_pin(p->provenance);
    const auto wanted = detail::required_torch(k, name, version, pin);
    if (!wanted || wanted->series || wanted->built_against() || !wanted->admits(release)) continue;
    out.push_back(name + "==" + version);
  }
  return out;
}

// "a and b", "a, b and c".
std::string and_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  }
  return out;
}

// What the build changes, in words: torch's release and index, and each
// extension's new release or page.
std::string changes_text(const Remedy& r) {
  std::vector<std::string> parts;
  if (r.wheel) {
    parts.push_back("take torch " + r.wheel->release.str() + (r.wheel->same_release ? "" : ".x") + " from the " +
                    r.wheel->wheel->variant + " index");
  }
  for (const PackageMove& m : r.moves) {
    if (!m.to.empty()) parts.push_back("replace " + m.package + "==" + m.from + " by " + m.package + "==" + m.to);
    if (m.to.empty() && !m.page.empty()) parts.push_back("take " + m.package + " from " + m.page);
  }
  return and_list(parts);
}

// The first fix: the verified install `fix` of `r` as RUN lines of the
// image's Dockerfile, with the pins that put this torch in the image.
Fix image_fix(const Fix& fix, const Remedy& r, const EnvFacts& e, const Knowledge& k) {
  const PythonEnv& env = *e.env;
  std::string why;
  if (r.wheel && e.release) {
    const std::vector<std::string> pins = pins_on(env, *e.release, k);
    if (!pins.empty()) {
      why = and_list(pins) + (pins.size() == 1 ? " requires" : " require") + " torch==" + e.release->str() +
            ": that pin is what put torch " + env.torch->version + " into the image. ";
    }
  }
  Fix out;
  out.summary = "Change the image's build: torch is in the image (" + env.torch->location +
                " is on the container's root filesystem, not on a mounted volume), so what pip installs in this "
                "container is lost when it is recreated. " +
                why + "In the Dockerfile (or requirements) the image is built from, " + changes_text(r) +
                ": add these lines after its own installs, then rebuild the image and recreate the container";
  out.file = "Dockerfile";
  for (const FixStep& step : fix.steps) out.file_lines.push_back("RUN " + step.command);
  return out;
}

// The first install fix of the environment's remedies and the winner it
// came from; nullptr when none is a wheel install alone.
std::pair<const Fix*, const Remedy*> install_fix(const Diagnosis& d, std::size_t python) {
  for (const RemedyReport& report : d.remedies) {
    if (report.python != python) continue;
    for (std::size_t i = 0; i < report.fixes.size() && i < report.resolution.winners.size(); ++i) {
      const Remedy& r = report.resolution.winners[i];
      if (!r.driver && !r.container && r.builds.empty() && installs(report.fixes[i])) return {&report.fixes[i], &r};
    }
  }
  return {nullptr, nullptr};
}

// Labels the fixes of `f`: pip installs as a test in this container, source
// builds as words only.
void label_fixes(Finding& f) {
  for (Fix& fix : f.fixes) {
    if (builds(fix)) {
      keep_fix_as_words(f, fix, "not run in a running container",
                        " (never in a running container: build it in the image's build instead)");
    } else if (installs(fix)) {
      fix.summary = "Only to test it in this running container (lost when it is recreated): " + fix.summary;
    }
  }
}

}  // namespace

void add_image_build_fixes(Diagnosis& d, const Situation& x, const Knowledge& k) {
  const Snapshot& s = *x.snapshot;
  if (s.environment.contains("NVIDIA_PYTORCH_VERSION") || inside_app_image(s, k)) return;
  for (std::size_t i = 0; i < x.pythons.size(); ++i) {
    const EnvFacts& e = x.pythons[i];
    if (e.home != PackageHome::image || !e.env->torch) continue;
    const auto [fix, remedy] = install_fix(d, i);
    std::optional<Fix> first;
    if (fix) first = image_fix(*fix, *remedy, e, k);
    for (Finding& f : d.findings) {
      if (f.python != e.env->interpreter || f.severity != Severity::problem) continue;
      const bool fixed_by =
          fix && std::ranges::any_of(f.fixes, [&](const Fix& g) { return g.commands == fix->commands; });
      label_fixes(f);
      if (fixed_by) f.fixes.insert(f.fixes.begin(), *first);
    }
  }
}

}  // namespace torchfix
