#include "core/diagnosis/ngc_findings.hpp"

#include <algorithm>

namespace torchfix {
namespace {

std::string env_value(const Snapshot& s, const char* name) {
  auto it = s.environment.find(name);
  return it == s.environment.end() ? std::string() : it->second;
}

// The upgrade `v` needs first, in the host's numbering: a newer JetPack on
// Tegra (its driver comes with L4T), else a driver.
enum class Phrase { sentence, clause };  // "Flash ..." or "after flashing ..."

std::string upgrade_text(const NgcVerdict& v, DriverNumbering numbering, Phrase phrase) {
  const bool lead = phrase == Phrase::sentence;
  if (numbering == DriverNumbering::tegra) {
    return (lead ? "Flash " : "after flashing ") +
           ngc_needs_text(v.driver_needed, v.jetpack_needed, numbering, v.release->cuda);
  }
  const std::string driver =
      v.driver_needed ? ngc_driver_text(v.driver_needed) : "a driver that supports CUDA " + v.release->cuda.str();
  return (lead ? "Upgrade the driver to " : "after a driver upgrade to ") + driver;
}

}  // namespace

Expected<Finding> container_finding(const Situation& x, const Knowledge& k, const NgcTable& t, const NgcImageRef& ref) {
  const NgcRelease* release = t.release(ref.tag);
  if (!release) {
    return fail("--container: tag " + ref.tag + " is not in recipes/ngc-pytorch.toml (it knows " +
                t.releases.front().tag + " to " + t.releases.back().tag + "); give one of those");
  }
  const NgcVerdict v = judge_ngc_image(x, k, t, *release, ref.platform);
  Finding f;
  f.id = "container.what-if";
  f.section = Section::gpus;
  f.package = "torch";
  const std::string image = "nvcr.io/nvidia/pytorch:" + ref.tag + "-py3" + (ref.platform == "igpu" ? "-igpu" : "");
  f.details.push_back(release->tag + ": torch " + release->torch + ", CUDA " +
                      (release->cuda_detail.empty() ? release->cuda.str() : release->cuda_detail) + " (" +
                      release->source + ")");
  for (const NgcGpuFit& g : v.gpus) f.details.push_back(g.why);
  for (const std::string& n : v.notes) f.details.push_back(n);
  if (x.snapshot->gpus.empty()) {
    f.severity = Severity::warning;
    f.title = image + ": no GPU here to judge it against; ask with --gpu NAME";
    return f;
  }
  if (v.runs) {
    // Minor-version compatibility is the torch check's warning too
    // (driver.minor-compat): both read the Situation's cuda_on_driver.
    const bool minor =
        std::ranges::any_of(v.gpus, [](const NgcGpuFit& g) { return g.driver == DriverPath::minor_compat; });
    f.severity = minor ? Severity::warning : Severity::ok;
    f.title = image + " runs on every GPU here with this driver" +
              (minor ? " only through minor-version compatibility (its CUDA " + release->cuda.major_minor() +
                           " is newer than the driver's)"
                     : "");
    f.fixes.push_back({"Start it as NVIDIA recommends", {v.run_line}});
    if (minor && x.numbering != DriverNumbering::tegra) {
      f.fixes.push_back({upgrade_text(v, x.numbering, Phrase::sentence) + " for full CUDA " +
                             release->cuda.major_minor() + " support",
                         {}});
    }
    return f;
  }
  f.severity = Severity::problem;
  const bool kernels = std::ranges::all_of(v.gpus, [](const NgcGpuFit& g) { return g.covered; });
  f.title =
      image + " will not run here: " +
      (kernels ? "the driver is too old for its CUDA " + release->cuda.str()
               : "torch in it has no kernels for " + std::string(v.gpus.size() == 1 ? "this GPU" : "every GPU here"));
  const NgcAdvice advice = choose_ngc_image(x, k, t);
  if (advice.image) {
    f.fixes.push_back({"Use " + advice.image->image + " (newest image that runs here)", {advice.image->run_line}});
  }
  if (advice.with_driver) {
    f.fixes.push_back(
        {"Or, " + upgrade_text(*advice.with_driver, x.numbering, Phrase::clause) + ": " + advice.with_driver->image,
         {advice.with_driver->run_line}});
  } else if (advice.oldest) {
    f.fixes.push_back({upgrade_text(*advice.oldest, x.numbering, Phrase::sentence) + " first: " + advice.oldest->image +
                           " is the oldest image that runs this GPU",
                       {advice.oldest->run_line}});
  }
  for (const std::string& r : advice.reasons) f.details.push_back(r);
  return f;
}

void add_inside_ngc_notes(Diagnosis& d, const Situation& x, const Knowledge& k, const NgcTable& t) {
  const Snapshot& s = *x.snapshot;
  const std::string version = env_value(s, "NVIDIA_PYTORCH_VERSION");
  if (version.empty()) return;
  Finding f;
  f.id = "container.ngc";
  f.severity = Severity::note;
  f.section = Section::python;
  const NgcRelease* release = t.release(version);
  f.title = "Running inside NVIDIA's PyTorch container " + version +
            (release ? " (torch " + release->torch + ", CUDA " + release->cuda.str() + ")" : "");
  const std::string constraint = env_value(s, "PIP_CONSTRAINT");
  f.details.push_back("its pip constraint file (" + (constraint.empty() ? "/etc/pip/constraint.txt" : constraint) +
                      ") pins torch: `pip install torch` fixes do not apply inside it; change the image instead");
  if (env_value(s, "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE") == "1") {
    f.details.push_back(
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (set by the image): fp32 matmuls run as TF32, unlike the pip wheels; "
        "export TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0 where full fp32 precision matters");
  }
  const NgcAdvice advice = choose_ngc_image(x, k, t);
  bool pip_fix = false;
  for (Finding& other : d.findings) {
    for (Fix& fix : other.fixes) {
      const bool pip_torch = std::ranges::any_of(fix.commands, [](const std::string& c) {
        return c.find("pip install") != std::string::npos && c.find("torch") != std::string::npos;
      });
      if (!pip_torch) continue;
      pip_fix = true;
      fix.summary += " (will not apply inside this NGC container: its pip constraint file pins torch)";
    }
  }
  if (advice.image && (!release || advice.image->release->tag_version > release->tag_version)) {
    f.fixes.push_back({std::string(pip_fix ? "Instead of pip, move" : "Move") +
                           " to a newer image that runs here: " + advice.image->image + " (on the host)",
                       {advice.image->run_line}});
  }
  d.findings.push_back(std::move(f));
}

}  // namespace torchfix
