// torchfix inspect: reads the CUDA kernels of binaries (files, directories,
// wheels) and, with --gpu, says per file whether they run on that GPU.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "binary/reader.hpp"
#include "binary/scan.hpp"
#include "cli/app.hpp"
#include "cli/tables.hpp"
#include "core/base/json_text.hpp"
#include "core/facts/knowledge.hpp"
#include "core/situation/coverage.hpp"

namespace torchfix::cli {
namespace {

using binary::EntryKind;
using binary::FileKernels;
using nlohmann::json;

struct InspectOptions {
  std::vector<std::string> paths;
  std::string gpu;
  bool json = false;
};

// Entry totals of one file, over all its modules.
struct EntryTotals {
  int sass = 0;
  int ptx = 0;
  int other = 0;
  int compressed = 0;
  int kernel_less_modules = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t uncompressed_bytes = 0;
};

EntryTotals totals_of(const FileKernels& file) {
  EntryTotals t;
  for (const auto& module : file.modules) {
    if (binary::is_kernel_less(module)) ++t.kernel_less_modules;
    for (const auto& entry : module.entries) {
      if (entry.kind == EntryKind::sass) ++t.sass;
      if (entry.kind == EntryKind::ptx) ++t.ptx;
      if (entry.kind == EntryKind::other) ++t.other;
      if (entry.compressed) ++t.compressed;
      t.payload_bytes += entry.payload_bytes;
      t.uncompressed_bytes += entry.uncompressed_bytes;
    }
  }
  return t;
}

// Names resolve through the GPU table; sm_XY and X.Y need no table, so they
// work even when the data folder is missing.
Expected<ComputeCapability> resolve_gpu(const std::string& spec, const Context& ctx) {
  if (auto cc = ComputeCapability::parse(spec)) return cc;
  TF_TRY(inputs, load_inputs(ctx));
  return inputs.knowledge.resolve_gpu(spec);
}

std::string plural(int count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

// The doctor's rule for a library (core/situation/coverage.hpp library_reach): modules
// for other archs beside ones that reach the GPU are named, not a failure.
std::string partial_note(const Coverage& c, ComputeCapability gpu) {
  if (c.none == 0) return "";
  return fmt::format(
      "; partial: {} of {} have no image for {} (a call into their kernels fails with \"no kernel image is "
      "available\"; a library that dispatches by capability does not make it)",
      c.none, plural(c.modules, "kernel module"), gpu.str());
}

std::string verdict_text(const Coverage& c, ComputeCapability gpu) {
  const std::string on = fmt::format("on {} (sm_{})", gpu.str(), gpu.number());
  switch (library_reach(c)) {
    case Reach::native:
      if (c.modules == 0) return "no CUDA kernels: nothing to run " + on;
      if (c.none == 0) return fmt::format("runs natively {}: SASS in all {}", on, plural(c.modules, "kernel module"));
      return fmt::format("runs natively {}: SASS in {} of {}", on, c.native, plural(c.modules, "kernel module")) +
             partial_note(c, gpu);
    case Reach::ptx_jit:
      return fmt::format(
                 "runs through PTX JIT {}: only PTX in {} of {} (compiled by the driver "
                 "at first use, then cached)",
                 on, c.ptx_jit, plural(c.modules, "kernel module")) +
             partial_note(c, gpu);
    case Reach::none:
      return fmt::format(
          "cannot run {}: no usable SASS or PTX in {} of {} (\"no kernel image is "
          "available for execution on the device\")",
          on, c.none, plural(c.modules, "kernel module"));
  }
  return {};
}

Colour verdict_colour(Reach reach) {
  switch (reach) {
    case Reach::native:
      return Colour::green;
    case Reach::ptx_jit:
      return Colour::yellow;
    case Reach::none:
      return Colour::red;
  }
  return Colour::none;
}

std::string human_bytes(std::uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1ull << 10));
  return fmt::format("{} B", bytes);
}

// A file that could not be read is an error of this run: its line goes to
// `err` (stderr), so stdout holds only the tables.
void print_file(Printer& out, Printer& err, const FileKernels& file, std::optional<ComputeCapability> gpu) {
  if (!file.error.empty()) {
    err.line("torchfix inspect: " + file.path + ": " + err.paint(file.error, Colour::red));
    return;
  }
  const BinaryKernels summary = binary::summarise(file);
  const int modules = kernel_modules(summary);
  const EntryTotals totals = totals_of(file);
  std::string where(binary::to_string(file.format));
  if (!file.section.empty()) where += ", " + file.section;
  out.line(
      fmt::format("{} ({}; {}; {} SASS + {} PTX images, {} compressed; {} of images, {} "
                  "uncompressed)",
                  out.paint(file.path, Colour::bold), where, plural(modules, "kernel module"), totals.sass, totals.ptx,
                  totals.compressed, human_bytes(totals.payload_bytes), human_bytes(totals.uncompressed_bytes)));
  if (totals.kernel_less_modules > 0) {
    out.line(fmt::format("  ({} without kernels not counted: device-link stubs or LTO IR only)",
                         plural(totals.kernel_less_modules, "module")));
  }
  if (!file.relocatable.empty()) {
    out.line(fmt::format("  ({} in __nv_relfatbin not counted: the runtime loads the linked .nv_fatbin)",
                         plural(static_cast<int>(file.relocatable.size()), "relocatable fatbin")));
  }
  if (modules == 0) {
    out.line("  no CUDA kernels");
  } else {
    out.line(fmt::format("  {:<14} {:<5} {:>15}", "image", "kind", "modules"));
    for (const ArchShare& share : arch_shares(summary)) {
      const bool full = share.modules == modules;
      std::string row =
          fmt::format("  {:<14} {:<5} {:>15}", share.arch.name(), share.arch.kind == ImageKind::sass ? "SASS" : "PTX",
                      fmt::format("{}/{}", share.modules, modules));
      if (!full) row += fmt::format("  partial: {} of {} lack it", modules - share.modules, modules);
      out.line(row);
    }
  }
  if (gpu) {
    const Coverage c = library_coverage(summary, *gpu);
    out.line("  " + out.paint(verdict_text(c, *gpu), verdict_colour(library_reach(c))));
  }
}

json file_json(const FileKernels& file, std::optional<ComputeCapability> gpu) {
  json j = {{"path", file.path}, {"bytes", file.file_bytes}};
  if (!file.error.empty()) {
    j["error"] = file.error;
    return j;
  }
  const BinaryKernels summary = binary::summarise(file);
  const EntryTotals totals = totals_of(file);
  j["format"] = binary::to_string(file.format);
  j["section"] = file.section;
  j["modules"] = kernel_modules(summary);
  j["relocatable_fatbins"] = file.relocatable.size();
  j["kernel_less_modules"] = totals.kernel_less_modules;
  j["images"] = {{"sass", totals.sass},
                 {"ptx", totals.ptx},
                 {"other", totals.other},
                 {"compressed", totals.compressed},
                 {"payload_bytes", totals.payload_bytes},
                 {"uncompressed_bytes", totals.uncompressed_bytes}};
  // Entries per arch count every image, stubs included, as cuobjdump
  // --list-elf/--list-ptx list them; modules count coverage.
  std::map<std::string, int> entries;
  std::map<std::string, int> relocatable_entries;
  const auto count = [](const std::vector<binary::Fatbin>& fatbins, std::map<std::string, int>& out) {
    for (const auto& fatbin : fatbins) {
      for (const auto& entry : fatbin.entries) {
        if (entry.kind != EntryKind::other) ++out[entry.arch.name()];
      }
    }
  };
  count(file.modules, entries);
  count(file.relocatable, relocatable_entries);
  json archs = json::array();
  for (const ArchShare& share : arch_shares(summary)) {
    archs.push_back({{"arch", share.arch.name()},
                     {"kind", share.arch.kind == ImageKind::sass ? "sass" : "ptx"},
                     {"modules", share.modules},
                     {"entries", entries[share.arch.name()]}});
  }
  // Archs only in __nv_relfatbin, for comparisons with tools that list every section.
  json relocatable = json::object();
  for (const auto& [arch, n] : relocatable_entries) relocatable[arch] = n;
  j["relocatable_entries"] = relocatable;
  j["archs"] = archs;
  json groups = json::array();
  for (const ModuleGroup& group : summary.groups) {
    json images = json::array();
    for (const Arch& arch : group.images) images.push_back(arch.name());
    groups.push_back({{"images", images}, {"modules", group.modules}});
  }
  j["groups"] = groups;
  if (gpu) {
    const Coverage c = library_coverage(summary, *gpu);
    j["verdict"] = {{"reach", to_string(library_reach(c))},
                    {"modules", c.modules},
                    {"native", c.native},
                    {"ptx_jit", c.ptx_jit},
                    {"none", c.none}};
  }
  return j;
}

int run_inspect(const InspectOptions& options, Context& ctx) {
  std::optional<ComputeCapability> gpu;
  if (!options.gpu.empty()) {
    auto resolved = resolve_gpu(options.gpu, ctx);
    if (!resolved) {
      ctx.err->line("torchfix inspect: --gpu " + options.gpu + ": " + resolved.error().message);
      return k_exit_tool_failure;
    }
    gpu = *resolved;
  }
  std::vector<FileKernels> files;
  bool failed = false;
  for (const std::string& path : options.paths) {
    auto read = binary::read_path(path);
    if (!read) {
      files.push_back(binary::unreadable(path, read.error().message));
      continue;
    }
    std::ranges::move(*read, std::back_inserter(files));
  }
  bool cannot_run = false;
  for (const FileKernels& file : files) {
    if (!file.error.empty()) failed = true;
    if (gpu && file.error.empty() && library_reach(library_coverage(binary::summarise(file), *gpu)) == Reach::none) {
      cannot_run = true;
    }
  }
  if (options.json) {
    json out = {{"schema_version", 1}, {"gpu", gpu ? json(gpu->str()) : json(nullptr)}, {"files", json::array()}};
    for (const FileKernels& file : files) out["files"].push_back(file_json(file, gpu));
    ctx.out->block(json_text(out));
  } else {
    if (files.empty()) ctx.out->line("no CUDA binaries found under the given paths");
    for (const FileKernels& file : files) print_file(*ctx.out, *ctx.err, file, gpu);
  }
  if (failed) return k_exit_tool_failure;
  return cannot_run ? k_exit_problem : k_exit_ok;
}

}  // namespace

void add_inspect(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand(
      "inspect", "Read the CUDA kernels (SASS/PTX per arch) of .so/.o/.cubin/.fatbin files, directories and wheels");
  cmd->add_option("paths", options->paths, "Files, directories (recursive) or .whl wheels")->required();
  cmd->add_option("--gpu", options->gpu,
                  "Target GPU: sm_120, 12.0 or a product name (\"RTX 5090\"); adds a verdict per file");
  cmd->add_flag("--json", options->json, "Print JSON instead of tables");
  cmd->callback([options, &ctx] { ctx.exit_code = run_inspect(*options, ctx); });
}

}  // namespace torchfix::cli
