// torchfix fleet: the doctor across many nodes. Gathers snapshots (saved
// files, or a Slurm cluster through srun), groups identical nodes, judges
// each Python environment per group and names the one fix for all of them
// (docs/fleet.md). --k8s-labels writes this node's node-feature-discovery file.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/app.hpp"
#include "cli/machine.hpp"
#include "cli/tables.hpp"
#include "core/base/json_text.hpp"
#include "core/fleet/fleet.hpp"
#include "fleet/collect.hpp"
#include "probe/snapshot_probe.hpp"
#include "report/fleet_report.hpp"
#include "util/file.hpp"

namespace torchfix::cli {
namespace {

namespace fs = std::filesystem;

// Where nfd-worker's local source reads feature files (NFD customization guide).
constexpr const char* k_nfd_features_file = "/etc/kubernetes/node-feature-discovery/features.d/torchfix";

struct FleetOptions {
  std::vector<std::string> snapshots;
  bool slurm = false;
  std::vector<std::string> partitions;
  std::string nodes;
  std::vector<std::string> pythons;
  int time_minutes = 5;
  bool gres_gpu = false;
  std::vector<std::string> srun_args;
  std::string torchfix;
  std::string save_dir;
  bool k8s_labels = false;
  std::string output;
  std::string snapshot;
  bool json = false;
};

// The path of this torchfix binary, which a shared filesystem shows at the
// same path on every node.
std::string own_path(const Context& ctx) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) return self.string();
  if (auto found = find_program(ctx.argv.empty() ? "torchfix" : ctx.argv.front(), ctx.env)) {
    return fs::absolute(*found).string();
  }
  return "torchfix";
}

// nfd-worker reads every file in features.d; util's writer puts the text
// in a ".NAME.torchfix-XXXXXX" temporary file (nfd skips dot files), made
// with O_EXCL, and renames it: a link planted at any name is never followed
// and a failed write leaves nothing behind.
Expected<void> write_features(const fs::path& target, const std::string& text) {
  util::WriteOptions options;
  options.mode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
  if (auto written = util::write_file(target, text, options); !written) {
    return fail(written.error().message + "; mount the host's features.d there or pass --output FILE");
  }
  return {};
}

int run_k8s_labels(const FleetOptions& o, const Knowledge& knowledge, Context& ctx) {
  auto snapshot = machine_snapshot(o.snapshot, {}, ProbeDepth::full, knowledge, ctx);
  if (!snapshot) {
    ctx.err->line("torchfix fleet: " + snapshot.error().message);
    return k_exit_tool_failure;
  }
  FleetBuilder fleet;
  fleet.add("this-node", std::move(*snapshot));
  const FleetReport report = fleet.finish(knowledge, o.pythons.empty() ? std::string() : o.pythons.front());
  const std::string text = nfd_features(report);
  const fs::path target = o.output.empty() ? fs::path(k_nfd_features_file) : fs::path(o.output);
  if (o.output == "-") {
    ctx.out->block(text.substr(0, text.size() - 1));
    return k_exit_ok;
  }
  if (auto written = write_features(target, text); !written) {
    ctx.err->line("torchfix fleet: " + written.error().message);
    return k_exit_tool_failure;
  }
  ctx.err->line("wrote " + target.string());
  return k_exit_ok;
}

int run_fleet(const FleetOptions& o, Context& ctx) {
  const Failure failed{ctx, "fleet"};
  const int modes = (o.snapshots.empty() ? 0 : 1) + (o.slurm ? 1 : 0) + (o.k8s_labels ? 1 : 0);
  if (modes != 1) return failed("give exactly one of --snapshots DIR|FILE..., --slurm or --k8s-labels");
  auto inputs = load_inputs(ctx);
  if (!inputs) return failed(inputs.error());
  const Knowledge& knowledge = inputs->knowledge;
  if (o.k8s_labels) return run_k8s_labels(o, knowledge, ctx);

  FleetBuilder fleet;
  if (!o.snapshots.empty()) {
    std::vector<fs::path> paths(o.snapshots.begin(), o.snapshots.end());
    auto added = add_snapshot_paths(paths, fleet);
    if (!added) return failed(added.error().message);
    for (const std::string& note : *added) ctx.err->line("torchfix fleet: note: " + note);
  } else {
    SlurmRequest request;
    request.partitions = o.partitions;
    request.nodes = o.nodes;
    request.pythons = o.pythons;
    request.time_limit_minutes = o.time_minutes;
    request.gres_gpu = o.gres_gpu;
    request.srun_args = o.srun_args;
    request.torchfix = o.torchfix.empty() ? own_path(ctx) : o.torchfix;
    if (!o.save_dir.empty()) {
      std::error_code ec;
      fs::create_directories(o.save_dir, ec);
      if (ec) return failed("cannot create --save-snapshots folder '" + o.save_dir + "': " + ec.message());
      request.save_dir = o.save_dir;
    }
    if (!o.json && ctx.err->smart()) ctx.err->status("torchfix fleet: running the doctor on the nodes through srun...");
    auto collected = collect_slurm(request, ctx.env, *ctx.runner, fleet);
    if (ctx.err->smart()) ctx.err->status("");
    if (!collected) return failed(collected.error().message);
  }
  const FleetReport report = fleet.finish(knowledge, o.pythons.empty() ? std::string() : o.pythons.front());
  if (o.json) {
    ctx.out->block(json_text(fleet_json(report)));
  } else {
    print_fleet(report, *ctx.out, ctx.verbosity > 0 ? Detail::verbose : Detail::summary);
  }
  return report.exit_code();
}

}  // namespace

void add_fleet(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<FleetOptions>();
  auto* cmd = app.add_subcommand(
      "fleet", "Run the doctor across a cluster: group identical nodes, judge each environment, one fix for all");
  cmd->add_option("--snapshots", o->snapshots,
                  "Snapshot files or folders of them (doctor --save-snapshot DIR/$(hostname).json)");
  cmd->add_flag("--slurm", o->slurm, "Probe the nodes of a Slurm cluster with srun (one task per node)");
  cmd->add_option("--partition", o->partitions, "Slurm partition to probe (repeatable; default: all)");
  cmd->add_option("--nodes", o->nodes, "Slurm hostlist of nodes to probe (gpu[01-16])");
  cmd->add_option("--python", o->pythons, "Python environment to judge (the same path on every node)");
  cmd->add_option("--time", o->time_minutes, "Minutes the srun step may take (default 5)")->check(CLI::Range(1, 1440));
  cmd->add_flag("--gres-gpu", o->gres_gpu, "Ask for --gres=gpu:1 where the site hides GPUs from steps without it");
  cmd->add_option("--srun-arg", o->srun_args, "Extra srun argument, e.g. --srun-arg=--account=ml (repeatable)");
  cmd->add_option("--torchfix", o->torchfix,
                  "torchfix path on the nodes (default: this binary, right on a shared filesystem)");
  cmd->add_option("--save-snapshots", o->save_dir, "Also keep each node's snapshot in DIR/NODE.json");
  cmd->add_flag("--k8s-labels", o->k8s_labels,
                "Write this node's node-feature-discovery features.d file (torchfix.dev/* labels)");
  cmd->add_option(
      "--output", o->output,
      std::string("With --k8s-labels: the file to write (default ") + k_nfd_features_file + "; - for stdout)");
  cmd->add_option("--snapshot", o->snapshot, "With --k8s-labels: label from a saved snapshot instead of probing")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", o->json, "Print the report as JSON (schema_version 1, docs/fleet.md)");
  cmd->callback([o, &ctx] { ctx.exit_code = run_fleet(*o, ctx); });
}

}  // namespace torchfix::cli
