#include "core/guard.hpp"

#include "core/fix_plan.hpp"

namespace torchfix {
namespace {

bool guarded(const std::string& name) {
  return name == "torch" || name == "torchvision" || name == "torchaudio" || name == "triton" ||
         name.starts_with("pytorch-triton") || name.starts_with("nvidia-");
}

}  // namespace

std::optional<std::string> guard_constraints(const std::map<std::string, std::string>& frozen,
                                             const std::string& interpreter) {
  if (!frozen.contains("torch")) return std::nullopt;
  std::string text = "# torchfix env --guard: the CUDA torch of " + interpreter +
                     " and its companions, as installed.\n"
                     "# pip and uv read it through PIP_CONSTRAINT / UV_CONSTRAINT and this environment's pip.conf.\n";
  for (const auto& [name, line] : frozen) {
    if (guarded(name)) text += line + "\n";
  }
  return text;
}

std::optional<Finding> guard_finding(const PythonEnv& env, std::string_view constraints, const std::string& file) {
  const auto pinned = parse_freeze(constraints);
  const auto torch = pinned.find("torch");
  if (torch == pinned.end()) return std::nullopt;
  const std::string want = torch->second.substr(
      torch->second.find("==") == std::string::npos ? torch->second.size() : torch->second.find("==") + 2);
  Finding f;
  f.section = Section::python;
  f.python = env.interpreter;
  f.package = "torch";
  f.details.push_back("constraints file: " + file);
  const std::string have = env.torch ? env.torch->version : std::string("no torch");
  if (have == want) {
    f.id = "guard.present";
    f.severity = Severity::ok;
    f.title = "a torchfix guard pins torch " + want + " here; pip and uv installs cannot replace it";
    return f;
  }
  f.id = "guard.bypassed";
  f.severity = Severity::warning;
  f.title = "the torchfix guard pins torch " + want + " but " + have +
            " is installed: something installed another torch around it (PIP_CONFIG_FILE=/dev/null, another "
            "installer, a copied wheel)";
  f.fixes.push_back(
      {"put the guarded torch back, or guard the new one",
       {env.interpreter + " -m pip install -c " + file + " torch", "torchfix env --guard --python " + env.interpreter},
       {}});
  return f;
}

}  // namespace torchfix
