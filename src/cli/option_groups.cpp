#include "cli/option_groups.hpp"

#include <algorithm>
#include <map>
#include <string_view>

namespace torchfix::cli {
namespace {

struct Group {
  const char* name;
  std::vector<std::string_view> options;  // long names without "--"
};

// In the order --help shows them; a subcommand not named keeps "Options".
const std::map<std::string_view, std::vector<Group>, std::less<>> k_groups = {
    {"doctor",
     {{"What is probed", {"python", "import", "no-binaries", "timeout", "snapshot"}},
      {"What-if", {"gpu", "driver", "torch", "platform", "with", "python-version", "container"}},
      {"Output", {"json", "markdown", "log", "save-snapshot"}},
      {"Actions", {"run", "check-index", "fix", "yes"}}}},
    {"build",
     {{"Target GPUs", {"arch", "ptx", "gpu", "snapshot", "keep-project-archs"}},
      {"Source", {"ref", "src", "repo", "work-dir", "python"}},
      {"Build", {"jobs", "cache", "dist", "dist-scheduler", "dist-token", "force"}},
      {"Output", {"dry-run", "json"}}}},
    {"env",
     {{"Output", {"shell", "for", "json"}},
      {"What-if", {"snapshot", "gpu"}},
      {"Rc file and guard", {"install", "rc", "uninstall", "guard", "python"}}}},
    {"arch", {{"Output", {"format", "ptx"}}, {"What-if", {"gpu", "snapshot"}}}},
    {"fleet",
     {{"Sources", {"snapshots", "slurm", "k8s-labels"}},
      {"Slurm", {"partition", "nodes", "time", "gres-gpu", "srun-arg", "torchfix", "save-snapshots"}},
      {"Kubernetes labels", {"output", "snapshot"}},
      {"Output", {"python", "json"}}}},
    {"inspect", {{"Verdict", {"gpu"}}, {"Output", {"json"}}}},
    {"recipes", {{"Output", {"json"}}}},
    {"version", {{"Output", {"json"}}}},
    {"fix",
     {{"Environment", {"python"}}, {"What-if", {"gpu", "driver"}}, {"Run", {"yes", "dry-run", "offline", "timeout"}}}},
    {"tune",
     {{"Measurement", {"quick", "gpu-index", "python", "timeout"}},
      {"Model", {"model", "batch-size", "steps", "no-batch-search"}},
      {"Output", {"json"}}}},
};

}  // namespace

void group_options(CLI::App& cmd) {
  auto found = k_groups.find(cmd.get_name());
  if (found == k_groups.end()) return;
  for (CLI::Option* option : cmd.get_options()) {
    if (option->get_lnames().empty()) continue;
    const std::string& name = option->get_lnames().front();
    for (const Group& g : found->second) {
      if (std::ranges::find(g.options, name) != g.options.end()) option->group(g.name);
    }
  }
}

std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> grouped_options(const CLI::App& cmd) {
  std::vector<std::pair<std::string, std::vector<const CLI::Option*>>> groups;
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->get_lnames().size() == 1 && option->get_lnames().front() == "help") continue;
    auto it =
        std::ranges::find(groups, option->get_group(), &std::pair<std::string, std::vector<const CLI::Option*>>::first);
    if (it == groups.end()) it = groups.insert(groups.end(), {option->get_group(), {}});
    it->second.push_back(option);
  }
  return groups;
}

}  // namespace torchfix::cli
