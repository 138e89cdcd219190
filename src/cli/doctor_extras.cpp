#include "cli/doctor_extras.hpp"

#include <algorithm>

#include "cli/measure_child.hpp"
#include "core/kernel_check.hpp"
#include "core/ngc_findings.hpp"
#include "probe/data_dir.hpp"

namespace torchfix::cli {

Expected<void> add_doctor_extras(Diagnosis& diagnosis, const Snapshot& snapshot, const Knowledge& knowledge,
                                 const DoctorExtras& extras, Context& ctx) {
  // The container as a fix is the resolver's (a CandidateKind::container
  // remedy, already in the diagnosis); these are the what-if and the notes.
  add_inside_ngc_notes(diagnosis, snapshot, knowledge, knowledge.ngc);
  if (!extras.container.empty()) {
    TF_TRY(ref, parse_ngc_image(extras.container));
    TF_TRY(finding, container_finding(snapshot, knowledge, knowledge.ngc, ref));
    diagnosis.findings.push_back(std::move(finding));
  }
  if (!extras.run) return {};
  if (snapshot.what_if)
    return fail("--run launches kernels on this machine; it cannot be combined with what-if options");
  const auto env = std::ranges::find_if(
      snapshot.pythons, [](const PythonEnv& p) { return p.status == PythonStatus::ok && p.torch && p.torch->cuda; });
  Finding f;
  f.id = "run.skipped";
  f.severity = Severity::warning;
  f.section = Section::python;
  if (snapshot.gpus.empty() || env == snapshot.pythons.end()) {
    f.title = "--run: nothing to launch (" +
              std::string(snapshot.gpus.empty() ? "no GPU" : "no Python environment with a CUDA build of torch") + ")";
    diagnosis.findings.push_back(std::move(f));
    return {};
  }
  TF_TRY(data_dir, find_data_dir(ctx.env));
  ChildRequest request;
  request.python = env->interpreter;
  request.mode = ChildMode::run;
  request.packages = packages_to_launch(env->distributions);
  request.timeout = std::chrono::milliseconds(static_cast<long>(
      1000 * (std::max(extras.timeout_s * 6, 60.0) + 15.0 * static_cast<double>(snapshot.gpus.size()))));
  TF_TRY(report, run_measure_child(request, data_dir, ctx, "torchfix doctor --run"));
  if (report.status != TuneStatus::ok) {
    f.title = "--run: " + report.message + " (" + env->interpreter + ")";
    diagnosis.findings.push_back(std::move(f));
    return {};
  }
  for (Finding& launched : kernel_run_findings(diagnosis, report)) {
    launched.python = env->interpreter;
    diagnosis.findings.push_back(std::move(launched));
  }
  return {};
}

}  // namespace torchfix::cli
