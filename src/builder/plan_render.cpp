// Text and JSON forms of a BuildPlan (--dry-run, --dry-run --json).
#include <nlohmann/json.hpp>
#include <sstream>

#include "builder/plan.hpp"
#include "core/base/json_text.hpp"

namespace torchfix {
namespace {

// Quotes an argument for display only (the runner never uses a shell): a
// user can paste the line into bash.
std::string shell_quote(const std::string& arg) {
  if (!arg.empty() &&
      arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=/.,:@%") ==
          std::string::npos) {
    return arg;
  }
  std::string out = "'";
  for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string_view origin_text(EnvOrigin o) {
  switch (o) {
    case EnvOrigin::set:
      return "set";
    case EnvOrigin::overrides:
      return "overrides";
    case EnvOrigin::inherited:
      return "inherited";
  }
  return "set";
}

std::string images_text(const std::vector<Arch>& images) {
  std::string out;
  for (const Arch& a : images) out += (out.empty() ? "" : " ") + a.name();
  return out;
}

}  // namespace

std::string render_plan_text(const BuildPlan& p) {
  std::ostringstream o;
  o << "Build plan: " << p.recipe << " (front-end " << p.front_end << ": " << p.front_end_source << ")\n";
  o << "\nSource\n";
  o << "  folder      " << p.src_dir.string() << "\n";
  o << "  fetch       " << to_string(p.fetch.action);
  if (p.fetch.action != FetchAction::use_as_is || !p.fetch.url.empty()) o << " " << p.fetch.url << " @ " << p.fetch.ref;
  o << (p.fetch.submodules && p.fetch.action != FetchAction::use_as_is ? " (+ submodules, recursive, URLs synced)" : "")
    << "\n";
  o << "              " << p.fetch.reason << "\n";
  o << "\nTargets\n";
  o << "  arch list   " << p.arch_variable << "=" << p.arch_value << "\n";
  o << "              from " << p.arch_reason << "\n";
  o << "  images      " << images_text(p.expected_images) << "\n";
  if (p.nvcc_wrap) {
    o << "  project     " << p.nvcc_wrap->summary << "\n";
    o << "              nvcc " << p.nvcc_wrap->cuda_home.string() << "/bin/nvcc -> " << p.nvcc_wrap->real_nvcc
      << "; every rewrite is logged; verify fails on any image outside the plan\n";
  }
  o << "\nTools\n";
  o << "  nvcc        " << (p.toolkit.version ? p.toolkit.version->str() : "?") << " " << p.toolkit.nvcc << "\n";
  o << "              " << p.toolkit_reason << "\n";
  o << "  host C++    " << to_string(p.compiler.family) << " " << (p.compiler.version ? p.compiler.version->str() : "?")
    << " " << p.compiler.path << " (CC " << p.c_compiler << ")\n";
  o << "              " << p.compiler_reason << "\n";
  o << "  launcher    " << (p.launcher ? *p.launcher : "none (no ccache or sccache on PATH)") << "\n";
  o << "\nResources\n";
  o << "  jobs        " << p.jobs_variable << "=" << p.jobs << ", nvcc threads " << p.nvcc_threads << ", "
    << format_bytes(p.job_memory_bytes) << " per job slot\n";
  o << "              " << p.jobs_reason << "\n";
  if (!p.parallel_note.empty()) o << "  parallel    " << p.parallel_note << "\n";
  o << "  disk        needs " << format_bytes(p.disk_need_bytes) << ", free "
    << (p.disk_free_bytes ? format_bytes(*p.disk_free_bytes) : std::string("unknown")) << "\n";
  o << "\nEnvironment (everything torchfix sets, and what it inherits that steers the build)\n";
  for (const PlanEnvVar& v : p.env) {
    o << "  " << v.name << "=" << shell_quote(v.value) << "\n";
    o << "      [" << origin_text(v.origin) << "] " << v.why << "\n";
  }
  o << "\nSteps (in " << p.src_dir.string() << ", log " << p.log_path.string() << ")\n";
  int n = 1;
  for (const PlanStep& s : p.steps) {
    o << "  " << n++ << ". " << s.name << (s.compiles ? " [compiles; OOM retry halves jobs, at most 3 times]" : "")
      << "\n     ";
    for (std::size_t i = 0; i < s.argv.size(); ++i) o << (i ? " " : "") << shell_quote(s.argv[i]);
    o << "\n";
  }
  o << "  " << n << ". verify: every CUDA library holds " << images_text(p.expected_images) << "\n";
  if (!p.artefacts.empty()) {
    o << "\nArtefacts\n";
    for (const Artefact& a : p.artefacts) {
      o << "  " << (a.kind == ArtefactKind::wheel ? "wheel   " : "library ") << a.glob << "\n";
    }
  }
  for (const std::string& w : p.warnings) o << "\nwarning: " << w;
  for (const std::string& b : p.blockers) o << "\nblocked: " << b;
  if (!p.warnings.empty() || !p.blockers.empty()) o << "\n";
  return o.str();
}

std::string render_plan_json(const BuildPlan& p) {
  using nlohmann::json;
  json env = json::array();
  for (const PlanEnvVar& v : p.env) {
    env.push_back({{"name", v.name}, {"value", v.value}, {"origin", origin_text(v.origin)}, {"why", v.why}});
  }
  json steps = json::array();
  for (const PlanStep& s : p.steps) {
    steps.push_back({{"name", s.name}, {"argv", s.argv}, {"cwd", s.cwd.string()}, {"compiles", s.compiles}});
  }
  json images = json::array();
  for (const Arch& a : p.expected_images) images.push_back(a.name());
  json artefacts = json::array();
  for (const Artefact& a : p.artefacts) {
    artefacts.push_back({{"glob", a.glob}, {"kind", a.kind == ArtefactKind::wheel ? "wheel" : "cuda_library"}});
  }
  json out = {
      {"schema_version", 1},
      {"recipe", p.recipe},
      {"front_end", {{"name", p.front_end}, {"source", p.front_end_source}}},
      {"source",
       {{"dir", p.src_dir.string()},
        {"action", to_string(p.fetch.action)},
        {"url", p.fetch.url},
        {"ref", p.fetch.ref},
        {"submodules", p.fetch.submodules},
        {"reason", p.fetch.reason}}},
      {"arch",
       {{"variable", p.arch_variable},
        {"value", p.arch_value},
        {"torch", render(p.arch, ArchFormat::torch)},
        {"reason", p.arch_reason},
        {"images", images}}},
      {"toolkit",
       {{"nvcc", p.toolkit.nvcc},
        {"version", p.toolkit.version ? p.toolkit.version->str() : ""},
        {"reason", p.toolkit_reason}}},
      {"host_compiler",
       {{"cxx", p.compiler.path},
        {"cc", p.c_compiler},
        {"family", to_string(p.compiler.family)},
        {"version", p.compiler.version ? p.compiler.version->str() : ""},
        {"reason", p.compiler_reason}}},
      {"jobs",
       {{"variable", p.jobs_variable},
        {"value", p.jobs},
        {"nvcc_threads", p.nvcc_threads},
        {"job_memory_bytes", p.job_memory_bytes},
        {"reason", p.jobs_reason}}},
      {"launcher", p.launcher ? json(*p.launcher) : json(nullptr)},
      {"nvcc_wrap", p.nvcc_wrap ? json{{"cuda_home", p.nvcc_wrap->cuda_home.string()},
                                       {"real_nvcc", p.nvcc_wrap->real_nvcc},
                                       {"targets", p.nvcc_wrap->targets},
                                       {"project_asks", p.nvcc_wrap->asked},
                                       {"summary", p.nvcc_wrap->summary}}
                                : json(nullptr)},
      {"parallel", p.parallel_note},
      {"disk",
       {{"need_bytes", p.disk_need_bytes},
        {"free_bytes", p.disk_free_bytes ? json(*p.disk_free_bytes) : json(nullptr)}}},
      {"env", env},
      {"steps", steps},
      {"log", p.log_path.string()},
      {"wheel_dir", p.wheel_dir.string()},
      {"artefacts", artefacts},
      {"warnings", p.warnings},
      {"blockers", p.blockers},
  };
  return json_text(out);
}

}  // namespace torchfix
