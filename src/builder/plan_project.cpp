#include "builder/plan_project.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/arch/nvcc_args.hpp"
#include "core/base/json_text.hpp"

namespace torchfix {
namespace {

std::string files_text(const std::vector<std::string>& files) {
  std::string out;
  for (const std::string& f : files) out += (out.empty() ? "" : ", ") + f;
  return out;
}

std::string images_text(const std::vector<Arch>& images) {
  std::string out;
  for (const Arch& a : images) out += (out.empty() ? "" : " + ") + a.name();
  return out;
}

bool runs_setuptools(const BuildPlan& plan) {
  return std::ranges::any_of(plan.steps, [](const PlanStep& s) {
    return std::ranges::any_of(s.argv, [](const std::string& a) { return a == "pip" || a.ends_with("setup.py"); });
  });
}

// The SASS images of a list (what a project's list is read as), else all of it.
std::vector<std::string> sass_of(const std::vector<std::string>& images) {
  std::vector<std::string> sass;
  for (const std::string& i : images) {
    if (i.starts_with("sm_")) sass.push_back(i);
  }
  return sass.empty() ? images : sass;
}

}  // namespace

std::optional<NvccWrap> plan_nvcc_wrap(const BuildInputs& in, const BuildPlan& plan, const std::string& key,
                                       std::vector<std::string>& warnings) {
  const ProjectScan& scan = in.project;
  if (scan.arch_files.empty()) return std::nullopt;
  const std::string asks =
      files_text(scan.arch_files) + " hard-codes " +
      (scan.asked.empty() ? std::string("its own arch flags") : summarise_images(sass_of(scan.asked)));
  if (in.request.project_archs == ProjectArchs::keep) {
    warnings.push_back(asks + "; --keep-project-archs: those are built as well as " +
                       images_text(plan.expected_images) + " (a longer build)");
    return std::nullopt;
  }
  if (in.wrapper_program.empty()) return std::nullopt;
  NvccWrap w;
  w.cuda_home = in.request.work_dir / ("nvcc-" + key);
  w.real_nvcc = plan.toolkit.nvcc;
  w.real_cuda_home = std::filesystem::path(plan.toolkit.nvcc).parent_path().parent_path();
  w.program = in.wrapper_program;
  w.targets = gencode_args(plan.arch);
  w.asked = scan.asked;
  w.summary = (scan.asked.empty() ? files_text(scan.arch_files) + " hard-codes its own arch flags"
                                  : "project asks for " + summarise_images(sass_of(scan.asked)) + " (" +
                                        files_text(scan.arch_files) + ")") +
              "; building " + images_text(plan.expected_images) +
              ": torchfix stands in for nvcc and rewrites each compile's arch flags (--keep-project-archs "
              "turns this off)";
  return w;
}

PlanFile nvcc_wrap_file(const NvccWrap& wrap, const std::filesystem::path& log_path) {
  const nlohmann::json j = {{"real", wrap.real_nvcc}, {"targets", wrap.targets}, {"log", log_path.string()}};
  PlanFile f{wrap.cuda_home / "bin" / "torchfix-nvcc.json", json_text(j), {}};
  f.content_template = f.content;
  return f;
}

std::optional<PlanFile> plan_parallel_extensions(const BuildInputs& in, BuildPlan& plan, const std::string& key) {
  const ProjectScan& scan = in.project;
  if (scan.ninja_off.empty() || !runs_setuptools(plan)) return std::nullopt;
  const std::string sources = std::to_string(scan.sources) + " source files";
  if (scan.extensions <= 1 && !scan.extension_loop && scan.sources > 1) {
    plan.parallel_note = "can only compile serially: ninja is off (" + scan.ninja_off +
                         ") and setup.py declares one extension, so its " + sources +
                         " compile one after another; a build with ninja and " + std::to_string(plan.jobs) +
                         " jobs would be up to " + std::to_string(std::min(plan.jobs, scan.sources)) + "x faster";
    return std::nullopt;
  }
  PlanFile f{in.request.work_dir / "logs" / (key + ".distutils.cfg"), "", "[build_ext]\nparallel = {jobs}\n"};
  f.content = "[build_ext]\nparallel = " + std::to_string(plan.jobs) + "\n";
  plan.parallel_note =
      "ninja is off (" + scan.ninja_off +
      "): each extension compiles its files one at a time, so its extensions are built " + std::to_string(plan.jobs) +
      " at a time (build_ext parallel, from DIST_EXTRA_CONFIG; jobs as for " + plan.jobs_variable + ")";
  return f;
}

}  // namespace torchfix
