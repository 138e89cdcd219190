#include "cli/doctor_extras.hpp"

#include <algorithm>

#include "cli/measure_child.hpp"
#include "core/diagnosis/app_images.hpp"
#include "core/diagnosis/guard.hpp"
#include "core/diagnosis/image_build.hpp"
#include "core/diagnosis/ngc_findings.hpp"
#include "core/tune/kernel_check.hpp"
#include "probe/data_dir.hpp"
#include "shellenv/rc_edit.hpp"
#include "util/file.hpp"

namespace torchfix::cli {

namespace {

// A guard written by `torchfix env --guard` (cli/guard.cpp) in each environment.
void add_guard_findings(Diagnosis& diagnosis, const Snapshot& snapshot) {
  for (const PythonEnv& env : snapshot.pythons) {
    if (env.status != PythonStatus::ok) continue;
    const auto file =
        std::filesystem::path(env.interpreter).parent_path().parent_path() / ".torchfix" / "constraints.txt";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) continue;
    auto text = util::read_file_bytes(file);
    if (!text) continue;
    auto f = guard_finding(env, *text, file.string());
    if (!f) continue;
    // The uv project's part of the guard (PROJECT/.venv beside PROJECT/pyproject.toml).
    const auto pyproject = file.parent_path().parent_path().parent_path() / "pyproject.toml";
    if (auto project = util::read_file_bytes(pyproject)) {
      auto body = shellenv::block_body(*project);
      if (body && *body && (*body)->find("[tool.uv.sources.torch]") != std::string::npos)
        f->details.push_back("uv project: " + pyproject.string() + " takes torch from the index torchfix wrote there");
    }
    diagnosis.findings.push_back(std::move(*f));
  }
}

}  // namespace

Expected<void> add_doctor_extras(Diagnosis& diagnosis, const Situation& situation, const Knowledge& knowledge,
                                 const DoctorExtras& extras, Context& ctx) {
  const Snapshot& snapshot = *situation.snapshot;
  // The container as a fix is the resolver's (a CandidateKind::container
  // remedy, already in the diagnosis); these are the what-if and the notes.
  add_inside_ngc_notes(diagnosis, situation, knowledge, knowledge.ngc);
  add_inside_app_image_notes(diagnosis, situation, knowledge);
  add_image_build_fixes(diagnosis, situation, knowledge);
  add_guard_findings(diagnosis, snapshot);
  if (!extras.container.empty()) {
    TF_TRY(ref, parse_ngc_image(extras.container));
    TF_TRY(finding, container_finding(situation, knowledge, knowledge.ngc, ref));
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
  TF_TRY(data, find_data(ctx.env));
  ChildRequest request;
  request.python = env->interpreter;
  request.mode = ChildMode::run;
  request.packages = packages_to_launch(*env);
  request.timeout = std::chrono::milliseconds(static_cast<long>(
      1000 * (std::max(extras.timeout_s * 6, 60.0) + 15.0 * static_cast<double>(snapshot.gpus.size()))));
  TF_TRY(report, run_measure_child(request, data, ctx, "torchfix doctor --run"));
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
