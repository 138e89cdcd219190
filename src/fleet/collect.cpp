#include "fleet/collect.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "core/base/parallel.hpp"
#include "core/base/snapshot_bounds.hpp"
#include "util/file.hpp"

namespace torchfix {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view k_node_marker = "@@torchfix-node ";
constexpr std::string_view k_exit_marker = "@@torchfix-exit ";

// Hash and length of a masked snapshot text -> the variant it was added as.
// (A 64-bit hash: for 10,000 distinct snapshots the chance of a collision is
// about 3e-12; keeping whole texts to compare would cost 40 KB a variant.)
using SeenSnapshots = std::unordered_map<std::string, std::size_t>;

// util's reader: regular files (and pipes: `--snapshots /dev/stdin`) of at
// most a snapshot's cap, never blocking on a FIFO, links under the
// protected_symlinks rule.
Expected<std::string> read_whole(const fs::path& path) {
  return util::read_file_bytes(path, util::snapshot_limits());
}

// Returns the dedup key of a snapshot text: nodes of one kind write the same
// snapshot but for the memory free at probe time, which no fleet decision
// reads, so the hash is taken with that number masked and 10,000 snapshots
// of a few kinds parse a few times, not 10,000 (bench/fleet-bench.sh).
std::string key_of(std::string_view original) {
  std::string text(original);
  static constexpr std::string_view k_key = "\"memory_available_bytes\":";
  for (std::size_t at = text.find(k_key); at != std::string::npos; at = text.find(k_key, at + 1)) {
    std::size_t i = at + k_key.size();
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    text.erase(start, i - start);
  }
  return std::to_string(std::hash<std::string>{}(text)) + ":" + std::to_string(text.size());
}

// What reading one file gave: why it could not be read, or its key and, for
// the one file that parsed its key, the snapshot (or why it is not one).
struct Loaded {
  std::string error;
  std::string key;
  std::optional<Expected<Snapshot>> parsed;
};

// Reads, keys and parses files[begin, end) on every CPU, each file read
// once: the first thread to meet a key not in `seen` parses that file, the
// others of its kind are not parsed at all. When every node differs, parsing
// is the whole cost (bench/fleet-bench.sh, docs/fleet.md).
std::vector<Loaded> load(const std::vector<fs::path>& files, std::size_t begin, std::size_t end,
                         const SeenSnapshots& seen) {
  std::vector<Loaded> out(end - begin);
  std::mutex mutex;
  std::unordered_set<std::string> claimed;
  for_each_index(out.size(), [&](std::size_t i) {
    auto text = read_whole(files[begin + i]);
    if (!text) {
      out[i].error = text.error().message;
      return;
    }
    out[i].key = key_of(*text);
    if (seen.contains(out[i].key)) return;  // `seen` is only read while the threads run
    {
      const std::lock_guard lock(mutex);
      if (!claimed.insert(out[i].key).second) return;
    }
    out[i].parsed = parse_snapshot_text(*text);
  });
  return out;
}

// Adds `files` in order, each node under its file's stem: a failure where it
// could not be read or parsed, else the variant of its key. Files go in
// chunks of 8 per CPU, so that at most that many parsed snapshots wait for
// the fleet at once (a fleet keeps one per variant, not one per node).
void add_files(const std::vector<fs::path>& files, FleetBuilder& fleet, SeenSnapshots& seen) {
  const std::size_t chunk = worker_count() * 8;
  for (std::size_t begin = 0; begin < files.size(); begin += chunk) {
    const std::size_t end = std::min(files.size(), begin + chunk);
    std::vector<Loaded> loaded = load(files, begin, end, seen);
    std::unordered_map<std::string_view, std::size_t> parsed_at;  // key -> the file that parsed it
    for (std::size_t i = 0; i < loaded.size(); ++i) {
      if (loaded[i].parsed) parsed_at.emplace(loaded[i].key, i);
    }
    for (std::size_t i = 0; i < loaded.size(); ++i) {
      const fs::path& path = files[begin + i];
      const std::string node = path.stem().string();
      if (!loaded[i].error.empty()) {
        fleet.add_failure(node, loaded[i].error);
        continue;
      }
      if (auto it = seen.find(loaded[i].key); it != seen.end()) {
        fleet.add_same(node, it->second);
        continue;
      }
      Expected<Snapshot>& snapshot = *loaded[parsed_at.at(loaded[i].key)].parsed;
      if (!snapshot) {
        fleet.add_failure(node, path.string() + ": " + snapshot.error().message);
        continue;
      }
      seen.emplace(loaded[i].key, fleet.add(node, std::move(*snapshot)));
    }
  }
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.remove_suffix(1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  return std::string(s);
}

// srun --label prefixes each line with the task number, right-aligned: " 3: text".
std::optional<std::pair<int, std::string_view>> split_label(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  const std::size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  // More than 7 digits is no task label (srun numbers tasks from 0): no int overflow.
  if (i == digits || i - digits > 7 || i >= line.size() || line[i] != ':') return std::nullopt;
  int task = 0;
  for (std::size_t j = digits; j < i; ++j) task = task * 10 + (line[j] - '0');
  std::string_view rest = line.substr(i + 1);
  if (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return std::pair{task, rest};
}

// Calls `f` on each line of `text`, without an index of them (a flood of
// empty lines would cost 16 bytes each).
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    f(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// A node's snapshot is at most a snapshot file's cap; its error lines the last few.
constexpr std::size_t k_task_snapshot_max = 8u << 20;
constexpr std::size_t k_task_error_lines = 20;
// All of srun's output: 1-50 KB a node, so thousands of nodes; a flood stops here.
constexpr std::size_t k_srun_output_max = 192u << 20;
// A 100,000-node cluster's "%N|%T" listing is about 4 MB.
constexpr std::size_t k_sinfo_output_max = 32u << 20;

}  // namespace

Expected<Snapshot> parse_snapshot_text(std::string_view text) {
  auto json = parse_json_bounded(text);
  if (json.is_discarded()) return fail("not a snapshot (invalid JSON); write one with torchfix doctor --save-snapshot");
  return snapshot_from_json(json);
}

namespace {

// Lists the *.json entries of `dir` that are not folders, sorted. Every such
// entry is a node: a dangling link, a FIFO or a device is read (and refused)
// like the others, so it is listed under "Nodes without a snapshot" instead
// of failing the folder or vanishing. The entry's test has its own error
// code: a broken last entry must not read as a failed listing.
Expected<std::vector<fs::path>> folder_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code type_ec;
    if (entry.path().extension() == ".json" && !entry.is_directory(type_ec)) files.push_back(entry.path());
  }
  if (ec) return fail("cannot list '" + dir.string() + "': " + ec.message());
  if (files.empty()) {
    return fail("'" + dir.string() +
                "' holds no *.json snapshot; write them with torchfix doctor --save-snapshot DIR/$(hostname).json");
  }
  std::ranges::sort(files);
  return files;
}

// Names the file behind `path` the same however it was spelled ("f.json",
// "./f.json", a folder given twice, a link to it); a dangling link keeps its
// own absolute name, so it is still one failed node.
std::string real_path(const fs::path& path) {
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec) real = fs::absolute(path, ec).lexically_normal();
  return real.string();
}

}  // namespace

Expected<std::vector<std::string>> add_snapshot_paths(const std::vector<fs::path>& paths, FleetBuilder& fleet) {
  std::vector<fs::path> files;
  for (const fs::path& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      TF_TRY(listed, folder_files(path));
      files.insert(files.end(), listed.begin(), listed.end());
    } else if (fs::exists(path, ec)) {
      files.push_back(path);
    } else {
      return fail("'" + path.string() + "' does not exist: give snapshot files or folders of them");
    }
  }
  std::vector<fs::path> unique;
  std::unordered_map<std::string, std::size_t> times;
  std::vector<std::string> order;
  for (const fs::path& file : files) {
    const std::string real = real_path(file);
    if (times[real]++ == 0) {
      unique.push_back(file);
      order.push_back(real);
    }
  }
  std::vector<std::string> notes;
  for (const std::string& real : order) {
    if (times[real] > 1) {
      notes.push_back("'" + real + "' is given " + std::to_string(times[real]) + " times; it counts as one node");
    }
  }
  SeenSnapshots seen;
  add_files(unique, fleet, seen);
  return notes;
}

Command sinfo_command(const SlurmRequest& request) {
  Command c;
  c.program = "sinfo";
  c.args = {"--noheader", "--Node", "--format=%N|%T"};
  if (!request.partitions.empty()) {
    std::string list;
    for (const auto& p : request.partitions) list += (list.empty() ? "" : ",") + p;
    c.args.push_back("--partition=" + list);
  }
  if (!request.nodes.empty()) c.args.push_back("--nodes=" + request.nodes);
  c.timeout = std::chrono::seconds(60);
  c.output_limit = k_sinfo_output_max;
  return c;
}

namespace {

// Says why sinfo gave no node list: an endless or huge listing is named as
// such (it has no exit code and no stderr of its own to show).
std::string sinfo_failure(const ProcessResult& listed) {
  const std::string what = "; check the partition and node names, and that this host is a Slurm login node";
  if (listed.overflowed) {
    return "sinfo printed more than " + std::to_string(k_sinfo_output_max >> 20) +
           " MiB (stopped); narrow it with --partition or --nodes, or check that 'sinfo' on PATH is Slurm's";
  }
  if (listed.timed_out) return "sinfo did not finish within 60 s" + what;
  return "sinfo failed (exit " + std::to_string(listed.exit_code) + "): " + trim(listed.err) + what;
}

}  // namespace

std::vector<SlurmNode> parse_sinfo(std::string_view out) {
  std::vector<SlurmNode> nodes;
  std::set<std::string> seen;
  for_each_line(out, [&](std::string_view line) {
    const std::string text = trim(line);
    const std::size_t bar = text.find('|');
    if (text.empty() || bar == std::string::npos) return;
    SlurmNode n{text.substr(0, bar), text.substr(bar + 1), false};
    if (!seen.insert(n.name).second) return;
    std::string base = n.state;
    const bool flagged = !base.empty() && std::string_view("*~#%!@^$-").find(base.back()) != std::string_view::npos;
    if (flagged) base.pop_back();
    if (const std::size_t plus = base.find('+'); plus != std::string::npos) base = base.substr(0, plus);
    n.usable = !flagged &&
               (base == "idle" || base == "mixed" || base == "allocated" || base == "completing" || base == "planned");
    nodes.push_back(std::move(n));
  });
  return nodes;
}

Command srun_command(const SlurmRequest& request, const std::vector<std::string>& nodes) {
  Command c;
  c.program = "srun";
  std::string list;
  for (const auto& n : nodes) list += (list.empty() ? "" : ",") + n;
  c.args = {"--nodes=" + std::to_string(nodes.size()),
            "--ntasks=" + std::to_string(nodes.size()),
            "--ntasks-per-node=1",
            "--nodelist=" + list,
            "--time=" + std::to_string(request.time_limit_minutes),
            "--immediate=60",
            "--kill-on-bad-exit=0",
            "--label",
            "--job-name=torchfix-fleet"};
  if (!request.partitions.empty()) {
    std::string parts;
    for (const auto& p : request.partitions) parts += (parts.empty() ? "" : ",") + p;
    c.args.push_back("--partition=" + parts);
  }
  if (request.gres_gpu) c.args.push_back("--gres=gpu:1");
  c.args.insert(c.args.end(), request.srun_args.begin(), request.srun_args.end());
  // The shell line names the node before the snapshot and gives the doctor's
  // exit status after it; arguments travel as "$@", never through quoting.
  c.args.insert(c.args.end(), {"sh", "-c",
                               "echo \"@@torchfix-node ${SLURMD_NODENAME:-$(hostname)}\"; \"$0\" doctor "
                               "--save-snapshot - \"$@\"; echo \"@@torchfix-exit $?\"",
                               request.torchfix});
  for (const auto& p : request.pythons) c.args.insert(c.args.end(), {"--python", p});
  // The step's own limit plus the wait for an allocation (--immediate).
  c.timeout = std::chrono::minutes(request.time_limit_minutes) + std::chrono::seconds(90);
  // A snapshot is 1-50 KB a node: keep a large cluster's output, not a flood's.
  c.output_limit = k_srun_output_max;
  return c;
}

std::vector<SlurmTaskOutput> parse_srun_output(std::string_view out, std::string_view err) {
  std::map<int, SlurmTaskOutput> tasks;
  std::map<int, bool> in_snapshot;
  for_each_line(out, [&](std::string_view line) {
    auto labelled = split_label(line);
    if (!labelled) return;
    auto [task, text] = *labelled;
    SlurmTaskOutput& t = tasks[task];
    if (text.starts_with(k_node_marker)) {
      t.node = trim(text.substr(k_node_marker.size()));
      in_snapshot[task] = true;
    } else if (text.starts_with(k_exit_marker)) {
      t.exit = std::atoi(std::string(text.substr(k_exit_marker.size())).c_str());
      in_snapshot[task] = false;
    } else if (in_snapshot[task] && t.snapshot.size() + text.size() < k_task_snapshot_max) {
      t.snapshot.append(text);
      t.snapshot.push_back('\n');
    }
  });
  for_each_line(err, [&](std::string_view line) {
    auto labelled = split_label(line);
    if (!labelled || !tasks.contains(labelled->first)) return;
    auto& lines = tasks[labelled->first].err;
    if (lines.size() == k_task_error_lines) lines.erase(lines.begin());
    lines.push_back(trim(labelled->second));
  });
  std::vector<SlurmTaskOutput> result;
  for (auto& [task, t] : tasks) result.push_back(std::move(t));
  return result;
}

Expected<void> collect_slurm(const SlurmRequest& request, const Environment& env, ProcessRunner& runner,
                             FleetBuilder& fleet) {
  Command sinfo = sinfo_command(request);
  sinfo.env = env;
  TF_TRY(listed, runner.run(sinfo));
  if (!listed.succeeded()) return fail(sinfo_failure(listed));
  const std::vector<SlurmNode> nodes = parse_sinfo(listed.out);
  if (nodes.empty()) return fail("sinfo lists no node for these partitions and nodes; check the names (sinfo -N)");
  std::vector<std::string> usable;
  for (const SlurmNode& n : nodes) {
    if (n.usable) {
      usable.push_back(n.name);
    } else {
      fleet.add_failure(n.name, "not probed: Slurm reports it " + n.state);
    }
  }
  if (usable.empty()) return {};

  Command srun = srun_command(request, usable);
  srun.env = env;
  TF_TRY(ran, runner.run(srun));
  std::set<std::string> answered;
  for (SlurmTaskOutput& t : parse_srun_output(ran.out, ran.err)) {
    if (t.node.empty()) continue;
    if (t.node.find('/') != std::string::npos || t.node.starts_with('.')) {
      fleet.add_failure(t.node, "not a node name (it names a path); ignored");
      continue;
    }
    // Only a node sinfo listed, and only its first answer: a task cannot
    // add a "ghost" or answer (and overwrite the saved file) for another.
    if (std::ranges::find(usable, t.node) == usable.end() || answered.contains(t.node)) {
      fleet.add_failure(t.node, "answered by a task that is not this node's (not in sinfo's list, or twice); ignored");
      continue;
    }
    answered.insert(t.node);
    const std::string last_error = t.err.empty() ? std::string() : t.err.back();
    if (!t.exit || *t.exit == 2 || t.snapshot.empty()) {
      std::string why = t.exit ? "torchfix exited " + std::to_string(*t.exit) : std::string("the task ended early");
      if (t.exit && *t.exit == 127)
        why += " (torchfix not found there: install it at " + request.torchfix +
               " on every node, or put it on a shared filesystem)";
      fleet.add_failure(t.node, why + (last_error.empty() ? "" : ": " + last_error));
      continue;
    }
    auto snapshot = parse_snapshot_text(t.snapshot);
    if (!snapshot) {
      fleet.add_failure(t.node, "its snapshot does not parse: " + snapshot.error().message);
      continue;
    }
    if (!request.save_dir.empty()) {
      // util's writer: a link planted at DIR/NODE.json is followed only
      // under the protected_symlinks rule; a regular file is replaced atomically.
      util::WriteOptions options;
      options.mode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read;
      const fs::path saved = request.save_dir / (t.node + ".json");
      if (auto ok = util::write_file(saved, t.snapshot, options); !ok) {
        return fail("cannot write " + saved.string() + ": " + ok.error().message);
      }
    }
    fleet.add(t.node, std::move(*snapshot));
  }
  // Nodes srun never reached: its own error lines are the reason.
  std::string srun_error;
  for_each_line(ran.err, [&](std::string_view line) {
    if (line.starts_with("srun:")) srun_error = trim(line);
  });
  if (ran.overflowed) srun_error = "srun printed more than " + std::to_string(k_srun_output_max >> 20) + " MiB";
  if (ran.timed_out) srun_error = "srun did not finish within " + std::to_string(request.time_limit_minutes) + " min";
  for (const std::string& n : usable) {
    if (answered.contains(n)) continue;
    fleet.add_failure(n, "no answer from the node" + (srun_error.empty() ? std::string() : " (" + srun_error + ")"));
  }
  return {};
}

Expected<FleetArch> fleet_arch(const fs::path& dir, const std::vector<Toolkit>& toolkits, const Knowledge& knowledge) {
  FleetBuilder fleet;
  if (auto added = add_snapshot_paths({dir}, fleet); !added) return std::unexpected(added.error());
  // Only the GPUs matter here: no environment path is judged.
  const FleetReport report = fleet.finish(knowledge, "-");
  FleetArch out;
  const auto compilable = [&](ComputeCapability cc) {
    if (toolkits.empty()) return true;
    return std::ranges::any_of(toolkits, [&](const Toolkit& t) {
      const std::vector<Arch> archs =
          !t.archs.empty() ? t.archs : (t.version ? knowledge.nvcc_archs_for(*t.version) : std::vector<Arch>{});
      return std::ranges::any_of(archs, [&](const Arch& a) {
        return a.kind == ImageKind::sass && a.cc == cc && a.variant == ArchVariant::generic;
      });
    });
  };
  for (ComputeCapability cc : fleet_capabilities(report)) (compilable(cc) ? out.ccs : out.dropped).push_back(cc);
  if (out.ccs.empty() && out.dropped.empty()) {
    return fail("the snapshots in '" + dir.string() + "' name no GPU with a known compute capability");
  }
  if (out.ccs.empty()) {
    return fail("no installed nvcc compiles for any GPU of the fleet in '" + dir.string() +
                "'; install a CUDA toolkit that targets them");
  }
  out.label = "fleet:" + dir.string() + " (" + std::to_string(report.groups.size()) + " groups, " +
              std::to_string(report.nodes) + " nodes";
  if (!report.failures.empty()) out.label += ", " + std::to_string(report.failures.size()) + " unreadable";
  if (!out.dropped.empty()) {
    std::string list;
    for (ComputeCapability cc : out.dropped) list += (list.empty() ? "" : ", ") + cc.str();
    out.label += "; " + list + " left out: no installed nvcc compiles it";
  }
  out.label += ")";
  return out;
}

}  // namespace torchfix
