#include "core/tune/kernel_check.hpp"

#include <algorithm>
#include <cctype>

#include "core/base/text.hpp"

namespace torchfix {
namespace {

// The static verdict on `package` for GPU `gpu`: the kernel finding, if any.
const Finding* verdict(const Diagnosis& d, const std::string& package, int gpu) {
  for (const Finding& f : d.findings) {
    if ((f.id == "torch.arch" || f.id == "package.arch") && f.gpu == gpu &&
        normalise_distribution(f.package) == normalise_distribution(package))
      return &f;
  }
  return nullptr;
}

Finding make(std::string id, Severity severity, std::string title, int gpu, std::string package) {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.section = Section::python;
  f.title = std::move(title);
  f.gpu = gpu;
  f.package = std::move(package);
  return f;
}

// What a run did, in the words of a finding's title.
struct Ran {
  bool ok = false;
  bool loaded_only = false;  // its CUDA modules were loaded, not a kernel launched
  std::string what;          // the op, or the modules loaded
  std::string error;
  std::string verb() const {
    if (loaded_only) return ok ? " loaded its kernels on " : " has no kernel image it can load on ";
    return ok ? " launched a kernel on " : " failed to launch on ";
  }
};

void judge(const Diagnosis& d, const GpuRun& gpu, const std::string& package, const Ran& run,
           std::vector<Finding>& out) {
  const bool ran = run.ok;
  const std::string& what = run.what;
  const std::string& error = run.error;
  const std::string where = "GPU " + std::to_string(gpu.index) + " (" + gpu.name + ")";
  const Finding* v = verdict(d, package, gpu.index);
  const bool predicted_runs = v && v->reach != Reach::none && v->severity != Severity::problem;
  if (!v) {
    Finding f =
        make("run.launch", ran ? Severity::ok : Severity::problem, package + run.verb() + where, gpu.index, package);
    f.details.push_back("ran: " + what);
    if (!ran) f.details.push_back("error: " + error);
    f.details.push_back("no static verdict to compare with (its binaries were not read)");
    out.push_back(std::move(f));
    return;
  }
  if (ran == predicted_runs) {
    Finding f = make("run.agrees", ran ? Severity::ok : Severity::problem,
                     package + run.verb() + where + ", as the static check said", gpu.index, package);
    f.details.push_back("ran: " + what);
    if (!ran) f.details.push_back("error: " + error);
    f.details.push_back("static verdict: " + v->title);
    out.push_back(std::move(f));
    return;
  }
  Finding f = make("run.disagrees", Severity::problem,
                   "TORCHFIX RULE BUG: " + package + run.verb() + where + " but the static check said it " +
                       (predicted_runs ? "runs" : "cannot run"),
                   gpu.index, package);
  f.details.push_back("ran: " + what);
  if (!ran) f.details.push_back("error: " + error);
  f.details.push_back("static verdict: " + v->title);
  f.fixes.push_back({"Report it: torchfix's rules are wrong for this case (attach the log)",
                     {"torchfix doctor --run --log torchfix-run.json"}});
  out.push_back(std::move(f));
}

}  // namespace

std::vector<Finding> kernel_run_findings(const Diagnosis& d, const TuneReport& run) {
  std::vector<Finding> out;
  for (const GpuRun& gpu : run.gpus) {
    judge(d, gpu, "torch",
          {.ok = gpu.smoke_ok,
           .what = "x.mul(2).sum() on " + std::to_string(1 << 16) + " floats",
           .error = gpu.smoke_error},
          out);
    for (const ExtensionRun& e : gpu.extensions) {
      if (!e.imported) {
        Finding f = make("run.import", Severity::warning, e.distribution + " could not be imported (" + e.module + ")",
                         gpu.index, e.distribution);
        f.details.push_back("error: " + e.error);
        out.push_back(std::move(f));
        continue;
      }
      if (!e.launched) continue;  // import only: no simple public op known
      judge(d, gpu, e.distribution, {.ok = *e.launched, .loaded_only = e.loaded_only, .what = e.op, .error = e.error},
            out);
    }
  }
  return out;
}

}  // namespace torchfix
