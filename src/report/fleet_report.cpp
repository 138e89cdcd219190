#include "report/fleet_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

namespace torchfix {
namespace {

std::string mark(FleetVerdict verdict, const Printer& out) {
  switch (verdict) {
    case FleetVerdict::runs:
      return out.paint(out.symbol("[✓]", "[ok]"), Colour::green);
    case FleetVerdict::runs_ptx_jit:
      return out.paint("[!]", Colour::yellow);
    case FleetVerdict::cannot_run:
      return out.paint(out.symbol("[✗]", "[x]"), Colour::red);
    case FleetVerdict::no_torch:
    case FleetVerdict::absent:
      return out.paint(out.symbol("[•]", "[-]"), Colour::dim);
  }
  return "[ ]";
}

std::string plural(std::size_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string nodes_text(const std::vector<std::string>& nodes, Detail detail) {
  if (detail == Detail::verbose) return fmt::format("{}", fmt::join(nodes, ","));
  std::string list = compress_hostlist(nodes);
  if (list.size() > 100) list = list.substr(0, 97) + "...";
  return list;
}

// -v: the facts a group was formed from, one kind a line.
void print_group_details(const FleetGroup& g, Printer& out) {
  out.line(fmt::format("      GPUs: {}", fmt::join(g.gpus, ", ")));
  std::vector<std::string> ccs;
  for (ComputeCapability cc : g.ccs) ccs.push_back(cc.str());
  out.line(fmt::format("      compute capabilities: {}; platform: {}; toolkits: {}", fmt::join(ccs, ", "),
                       to_string(g.platform),
                       g.toolkits.empty() ? "none" : fmt::format("{}", fmt::join(g.toolkits, ", "))));
}

}  // namespace

std::string compress_hostlist(const std::vector<std::string>& nodes) {
  // prefix -> digits width -> numbers; names without a numeric suffix stand alone.
  std::map<std::pair<std::string, std::size_t>, std::vector<long long>> numbered;
  std::vector<std::string> plain;
  for (const std::string& n : nodes) {
    std::size_t digits = 0;
    while (digits < n.size() && digits < 18 && std::isdigit(static_cast<unsigned char>(n[n.size() - 1 - digits])))
      ++digits;
    if (digits == 0 || digits == n.size()) {
      plain.push_back(n);
      continue;
    }
    numbered[{n.substr(0, n.size() - digits), digits}].push_back(std::stoll(n.substr(n.size() - digits)));
  }
  std::vector<std::string> parts;
  for (auto& [key, numbers] : numbered) {
    std::ranges::sort(numbers);
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    const auto pad = [&](long long v) { return fmt::format("{:0{}}", v, key.second); };
    if (numbers.size() == 1) {
      parts.push_back(key.first + pad(numbers[0]));
      continue;
    }
    std::string ranges;
    for (std::size_t i = 0; i < numbers.size();) {
      std::size_t j = i;
      while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
      ranges += (ranges.empty() ? "" : ",") + pad(numbers[i]) + (j > i ? "-" + pad(numbers[j]) : "");
      i = j + 1;
    }
    parts.push_back(key.first + "[" + ranges + "]");
  }
  std::ranges::sort(plain);
  plain.erase(std::unique(plain.begin(), plain.end()), plain.end());
  parts.insert(parts.end(), plain.begin(), plain.end());
  return fmt::format("{}", fmt::join(parts, ","));
}

void print_fleet(const FleetReport& report, Printer& out, Detail detail) {
  out.line(
      out.paint(fmt::format("Fleet: {} in {}{}", plural(report.nodes, "node"), plural(report.groups.size(), "group"),
                            report.failures.empty() ? "" : fmt::format(", {} failed", report.failures.size())),
                Colour::bold));
  for (std::size_t i = 0; i < report.groups.size(); ++i) {
    const FleetGroup& g = report.groups[i];
    out.line(fmt::format("  group {} ({}: {}): {}", i + 1, plural(g.nodes.size(), "node"), nodes_text(g.nodes, detail),
                         g.label));
    if (detail == Detail::verbose) print_group_details(g, out);
  }
  for (const FleetEnv& env : report.envs) {
    out.line(out.paint("Python " + env.path, Colour::bold));
    for (const FleetEnvRow& row : env.rows) {
      std::string text = fmt::format("group {}", row.group + 1);
      if (row.nodes.size() != report.groups[row.group].nodes.size()) {
        text += fmt::format(" ({}: {})", plural(row.nodes.size(), "node"), nodes_text(row.nodes, detail));
      }
      text += ": " + std::string(to_string(row.verdict));
      if (!row.torch.empty()) text += " (torch " + row.torch + ")";
      if (!row.reason.empty() && row.verdict != FleetVerdict::runs) text += ": " + row.reason;
      out.line(fmt::format("  {} {}", mark(row.verdict, out), text));
    }
    const FleetFix& fix = env.fix;
    const char* label = fix.kind == FleetFixKind::none_needed ? "ok:" : "fix:";
    out.line(fmt::format("  {} {}", out.paint(label, Colour::bold), fix.summary));
    for (const std::string& c : fix.commands) out.line(fmt::format("      $ {}", c));
    for (const std::string& r : fix.reasons) out.line(fmt::format("      because {}", r));
    if (!fix.left_out.empty()) {
      for (std::size_t g : fix.left_out) {
        out.line(fmt::format("      left out: group {} ({})", g + 1, report.groups[g].label));
      }
    }
  }
  if (!report.failures.empty()) {
    out.line(out.paint("Nodes without a snapshot", Colour::bold));
    for (const FleetFailure& f : report.failures) {
      out.line(fmt::format("  {} {}: {}", mark(FleetVerdict::cannot_run, out), f.node, f.reason));
    }
  }
  const int code = report.exit_code();
  out.line(code == 0 ? out.paint("Every node with a snapshot can run its environments.", Colour::green)
                     : out.paint("Some nodes cannot run an environment or gave no snapshot (exit 1).", Colour::red));
}

nlohmann::json fleet_json(const FleetReport& report) {
  nlohmann::json groups = nlohmann::json::array();
  for (std::size_t i = 0; i < report.groups.size(); ++i) {
    const FleetGroup& g = report.groups[i];
    nlohmann::json ccs = nlohmann::json::array();
    for (ComputeCapability cc : g.ccs) ccs.push_back(cc.str());
    groups.push_back({{"id", i + 1},
                      {"label", g.label},
                      {"gpus", g.gpus},
                      {"compute_capabilities", ccs},
                      {"driver", g.driver ? nlohmann::json(g.driver->str()) : nlohmann::json()},
                      {"driver_cuda", g.driver_cuda ? nlohmann::json(g.driver_cuda->str()) : nlohmann::json()},
                      {"toolkits", g.toolkits},
                      {"machine", g.machine},
                      {"platform", to_string(g.platform)},
                      {"os", g.os},
                      {"nodes", g.nodes}});
  }
  nlohmann::json envs = nlohmann::json::array();
  for (const FleetEnv& env : report.envs) {
    nlohmann::json rows = nlohmann::json::array();
    for (const FleetEnvRow& r : env.rows) {
      rows.push_back({{"group", r.group + 1},
                      {"verdict", std::string(to_string(r.verdict))},
                      {"torch", r.torch},
                      {"reason", r.reason},
                      {"nodes", r.nodes}});
    }
    nlohmann::json left_out = nlohmann::json::array();
    for (std::size_t g : env.fix.left_out) left_out.push_back(g + 1);
    envs.push_back({{"path", env.path},
                    {"verdicts", rows},
                    {"fix",
                     {{"kind", std::string(to_string(env.fix.kind))},
                      {"summary", env.fix.summary},
                      {"commands", env.fix.commands},
                      {"reasons", env.fix.reasons},
                      {"left_out", left_out},
                      {"arch_list", env.fix.arch_list}}}});
  }
  nlohmann::json failures = nlohmann::json::array();
  for (const FleetFailure& f : report.failures) failures.push_back({{"node", f.node}, {"reason", f.reason}});
  // "schema" is kept for one release beside schema_version (docs/json-schema.md).
  return {{"schema_version", 1},  {"schema", "torchfix-fleet/1"}, {"nodes", report.nodes},          {"groups", groups},
          {"environments", envs}, {"failures", failures},         {"exit_code", report.exit_code()}};
}

namespace {

// Kubernetes label values: at most 63 characters, alphanumerics and '-', '_',
// '.', beginning and ending with an alphanumeric.
std::string label_value(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    out.push_back(ok ? c : '-');
  }
  if (out.size() > 63) out.resize(63);
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.front()))) out.erase(out.begin());
  return out;
}

// "/shared/venv/bin/python" -> "venv"; "/usr/bin/python3" -> "usr".
std::string env_name(const std::string& interpreter) {
  std::filesystem::path dir = std::filesystem::path(interpreter).parent_path();
  if (dir.filename() == "bin") dir = dir.parent_path();
  std::string name = label_value(dir.filename().string());
  return name.empty() ? "python" : name;
}

std::string verdict_label(FleetVerdict v) {
  switch (v) {
    case FleetVerdict::runs:
      return "runs";
    case FleetVerdict::runs_ptx_jit:
      return "ptx-jit";
    case FleetVerdict::cannot_run:
      return "cannot-run";
    case FleetVerdict::no_torch:
      return "no-torch";
    case FleetVerdict::absent:
      return "absent";
  }
  return "absent";
}

}  // namespace

std::string nfd_features(const FleetReport& report) {
  std::string out = "# torchfix fleet --k8s-labels: node-feature-discovery local features (features.d)\n";
  if (report.groups.empty()) return out;
  const FleetGroup& g = report.groups.front();
  if (g.driver_cuda) out += "torchfix.dev/cuda-driver=" + label_value(g.driver_cuda->major_minor()) + "\n";
  std::string ccs;
  for (ComputeCapability cc : g.ccs) ccs += (ccs.empty() ? "" : "_") + cc.str();
  if (!ccs.empty()) out += "torchfix.dev/compute-capability=" + ccs + "\n";
  out += "torchfix.dev/gpu-count=" + std::to_string(g.gpus.size()) + "\n";
  for (const FleetEnv& env : report.envs) {
    for (const FleetEnvRow& row : env.rows) {
      if (row.verdict == FleetVerdict::absent) continue;
      const std::string name = env_name(env.path);
      out += "torchfix.dev/torch." + name + "=" + verdict_label(row.verdict) + "\n";
      if (!row.torch.empty()) out += "torchfix.dev/torch-version." + name + "=" + label_value(row.torch) + "\n";
    }
  }
  return out;
}

}  // namespace torchfix
