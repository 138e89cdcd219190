#include "core/diagnosis/conda_plan.hpp"

#include <algorithm>
#include <cctype>

#include "core/base/quote.hpp"
#include "core/base/text.hpp"
#include "core/base/version.hpp"

namespace torchfix {
namespace {

constexpr std::string_view k_upstream_channels = "https://conda.anaconda.org/";

// A YAML scalar without its quotes and trailing comment.
std::string scalar(std::string_view text) {
  std::string value = trim(text);
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
    return value.substr(1, value.size() - 2);
  if (const auto hash = value.find(" #"); hash != std::string::npos) value = trim(value.substr(0, hash));
  return value;
}

std::string without_slash(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

void add_channel(CondaChannels& out, std::string entry, const std::string& origin) {
  entry = without_slash(std::move(entry));
  if (entry.empty()) return;
  for (const auto& [known, from] : out.channels) {
    if (known == entry) return;
  }
  out.channels.emplace_back(std::move(entry), origin);
}

// A flow list "[a, b]" or one scalar.
std::vector<std::string> flow_items(std::string_view value) {
  std::string text = trim(value);
  if (text.empty()) return {};
  if (text.front() != '[') return {scalar(text)};
  text = text.substr(1, text.find(']') == std::string::npos ? std::string::npos : text.find(']') - 1);
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    if (std::string item = scalar(text.substr(start, comma - start)); !item.empty()) out.push_back(std::move(item));
    start = comma + 1;
  }
  return out;
}

bool is_platform_folder(std::string_view segment) {
  static constexpr std::string_view k_platforms[] = {"noarch",   "linux-64",     "linux-aarch64", "linux-ppc64le",
                                                     "linux-32", "linux-armv7l", "osx-64",        "osx-arm64",
                                                     "win-64",   "win-32",       "win-arm64",     "emscripten-wasm32"};
  return std::ranges::find(k_platforms, segment) != std::end(k_platforms);
}

// "pytorch >=2.7.1" from a step's "torch==2.7.1" or "torch==2.7.*".
std::string release_floor(const std::string& requirement) {
  const auto eq = requirement.find("==");
  if (eq == std::string::npos) return {};
  std::string release = requirement.substr(eq + 2);
  if (release.ends_with(".*")) release.resize(release.size() - 2);
  return release;
}

// Whether `text` matches `glob` (only '*' is special, as in conda build strings).
bool glob_match(std::string_view glob, std::string_view text) {
  if (glob.empty()) return text.empty();
  if (glob.front() == '*') {
    for (std::size_t i = 0; i <= text.size(); ++i) {
      if (glob_match(glob.substr(1), text.substr(i))) return true;
    }
    return false;
  }
  return !text.empty() && glob.front() == text.front() && glob_match(glob.substr(1), text.substr(1));
}

bool is_torch_step(const FixStep& step) {
  if (step.kind != StepKind::install || step.requirements.empty()) return false;
  const std::string& req = step.requirements.front();
  return req.starts_with("torch") && req.find_first_of("=<>!~ @[") == std::string("torch").size();
}

PlannedCommand conda_command(std::vector<std::string> argv, CommandShell shell) {
  PlannedCommand c;
  c.argv = std::move(argv);
  c.shown = command_line(shell, c.argv);
  return c;
}

}  // namespace

void add_condarc(CondaChannels& out, std::string_view text, const std::string& origin) {
  std::string key;  // the top-level key whose block is being read
  for (const std::string_view raw : split_lines(text)) {
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const bool nested = raw[0] == ' ' || raw[0] == '\t' || line[0] == '-';
    if (!nested) {
      const auto colon = line.find(':');
      key = colon == std::string::npos ? std::string() : trim(line.substr(0, colon));
      const std::string value = colon == std::string::npos ? std::string() : line.substr(colon + 1);
      if (key == "channel_alias" && !scalar(value).empty()) out.alias = {without_slash(scalar(value)), origin};
      if (key == "channels" || key == "default_channels") {
        for (std::string& item : flow_items(value)) add_channel(out, std::move(item), origin);
      }
      continue;
    }
    if ((key == "channels" || key == "default_channels") && line[0] == '-') {
      add_channel(out, scalar(line.substr(1)), origin);
    } else if (key == "custom_channels") {
      const auto colon = line.find(": ");
      if (colon != std::string::npos)
        out.custom[scalar(line.substr(0, colon))] = {without_slash(scalar(line.substr(colon + 2))), origin};
    }
  }
}

void add_conda_variables(CondaChannels& out, const std::map<std::string, std::string>& env) {
  for (const char* name : {"CONDA_CHANNELS", "CONDA_DEFAULT_CHANNELS"}) {
    const auto it = env.find(name);
    if (it == env.end()) continue;
    std::size_t start = 0;
    const std::string& value = it->second;
    while (start <= value.size()) {
      const auto comma = std::min(value.find(',', start), value.size());
      add_channel(out, trim(value.substr(start, comma - start)), name);
      start = comma + 1;
    }
  }
  if (const auto it = env.find("CONDA_CHANNEL_ALIAS"); it != env.end() && !trim(it->second).empty())
    out.alias = {without_slash(trim(it->second)), "CONDA_CHANNEL_ALIAS"};
}

std::string conda_channel_name(std::string_view record_channel) {
  std::string text = without_slash(std::string(record_channel));
  auto slash = text.rfind('/');
  if (slash != std::string::npos && is_platform_folder(std::string_view(text).substr(slash + 1))) {
    text.resize(slash);
    slash = text.rfind('/');
  }
  return slash == std::string::npos ? text : text.substr(slash + 1);
}

ChosenIndex choose_channel(const std::string& name, const CondaChannels& channels) {
  const std::string upstream = std::string(k_upstream_channels) + name;
  if (const auto it = channels.custom.find(name); it != channels.custom.end())
    return {it->second.first + "/" + name, upstream, it->second.second};
  for (const auto& [entry, origin] : channels.channels) {
    const bool url = entry.find("://") != std::string::npos;
    if (url && entry != upstream && conda_channel_name(entry) == name) return {entry, upstream, origin};
  }
  const std::string& alias = channels.alias.first;
  if (!alias.empty() && alias + "/" != k_upstream_channels)
    return {alias + "/" + name, upstream, channels.alias.second};
  return {upstream, upstream, {}};
}

std::optional<CondaTorch> conda_torch(const PythonEnv& env) {
  for (const PackageKernels& k : env.kernels) {
    // binary/installs.cpp names conda's `pytorch` record `torch`.
    if (k.provenance.installer != "conda" || k.distribution != "torch") continue;
    return CondaTorch{"pytorch", k.version, k.provenance.conda_build, conda_channel_name(k.provenance.conda_channel)};
  }
  return std::nullopt;
}

// Why no conda build of `torch` fits `step`: no row for its channel, the
// channel stopped before the step's release, or no CUDA build there for it.
std::string no_conda_build(const FixStep& step, const CondaTorch& torch, const CondaTorchChannel* row, bool published) {
  if (!row) return "torchfix knows no CUDA builds of pytorch in " + torch.channel;
  if (row->last && !published) return "the " + row->channel + " channel published no torch after " + row->last->str();
  if (row->cuda_pin.empty()) return "torchfix knows no way to choose the CUDA of a " + row->channel + " build";
  return "the " + row->channel + " channel has no CUDA build of this torch for " + step.variant;
}

CondaRoute plan_for_conda(FixPlan& plan, const Fix& fix, const CondaTorch& torch, const CondaTarget& target,
                          const std::vector<CondaTorchChannel>& rows, CommandShell shell) {
  const auto found = std::ranges::find(rows, torch.channel, &CondaTorchChannel::channel);
  const CondaTorchChannel* row = found == rows.end() ? nullptr : &*found;
  const std::string conda = target.conda.empty() ? "conda" : target.conda;
  const std::string installed = "pytorch " + torch.version + " " + torch.build + " (conda, " + torch.channel + ")";
  CondaRoute route = CondaRoute::wheel_replaces;
  std::vector<PlannedCommand> out;
  std::size_t command = 0;
  for (const FixStep& step : fix.steps) {
    if (step.kind != StepKind::install || command >= plan.commands.size()) continue;
    PlannedCommand wheel = plan.commands[command++];
    if (!is_torch_step(step)) {
      out.push_back(std::move(wheel));
      continue;
    }
    const std::string floor = release_floor(step.requirements.front());
    const auto cuda_version = Version::from_cuda_variant(step.variant);
    const std::string cuda = cuda_version ? cuda_version->major_minor() : "";
    const auto release = Version::parse(floor);
    const bool published =
        row && release && (!row->last || Version({release->major(), release->minor()}) <= *row->last);
    std::erase_if(plan.changes, [](const std::string& c) { return c.starts_with("torch "); });
    if (row && !row->cuda_pin.empty() && published && !cuda.empty() && glob_match(row->cuda_builds, torch.build)) {
      const ChosenIndex channel = choose_channel(torch.channel, target.channels);
      const std::string spec = "pytorch >=" + floor + " " + row->cuda_builds;
      const std::string pin = row->cuda_pin + " >=" + cuda;
      PlannedCommand c = conda_command(
          {conda, "install", "-p", target.prefix, "-y", "--override-channels", "-c", channel.url, spec, pin}, shell);
      if (!channel.origin.empty())
        c.note = "the mirror configured in " + channel.origin + "; upstream: " + channel.upstream;
      out.push_back(std::move(c));
      plan.changes.push_back(installed + " -> " + spec + " with " + pin + " from " + torch.channel);
      route = CondaRoute::conda_build;
      continue;
    }
    PlannedCommand remove = conda_command({conda, "remove", "-p", target.prefix, "-y", "--force", "pytorch"}, shell);
    remove.note = "no conda build fits: " + no_conda_build(step, torch, row, published) +
                  "; the conda package goes first, so that it and the wheel do not shadow each other";
    out.push_back(std::move(remove));
    out.push_back(std::move(wheel));
    plan.changes.push_back(installed + " -> removed; " + step.requirements.front() + " from the " + step.variant +
                           " index");
    route = CondaRoute::wheel_replaces;
  }
  for (; command < plan.commands.size(); ++command) out.push_back(plan.commands[command]);
  plan.commands = std::move(out);
  return route;
}

std::vector<std::string> conda_record_argv(const CondaTarget& target) {
  return {target.conda.empty() ? "conda" : target.conda, "list", "--explicit", "--md5", "-p", target.prefix};
}

}  // namespace torchfix
