// torchfix arch: the arch list of this machine's GPUs (or of --gpu ones) in
// each build system's spelling, for scripts:
//   export TORCH_CUDA_ARCH_LIST=$(torchfix arch)
// It is the toolchain decision's list (core/situation/toolchain.hpp), the one doctor,
// env and build show: the GPUs' own archs, or, where no installed nvcc can
// target one (sm_121 on nvcc 12.8), the SASS the best one has that runs on it.

#include <algorithm>
#include <memory>

#include "cli/app.hpp"
#include "cli/machine.hpp"
#include "cli/tables.hpp"
#include "core/arch/arch_list.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/toolchain.hpp"

namespace torchfix::cli {
namespace {

struct ArchOptions {
  std::string format = "torch";
  std::string ptx = "newest";
  std::vector<std::string> gpus;
  std::string snapshot;
};

// The command line spells flash-attn as the project does; recipes (TOML)
// spell it flash_attn, so both are accepted.
Expected<ArchFormat> parse_format(const std::string& text) {
  static const std::pair<std::string_view, ArchFormat> k_formats[] = {
      {"torch", ArchFormat::torch},           {"cmake", ArchFormat::cmake},           {"gencode", ArchFormat::gencode},
      {"flash-attn", ArchFormat::flash_attn}, {"flash_attn", ArchFormat::flash_attn},
  };
  for (const auto& [name, format] : k_formats) {
    if (name == text) return format;
  }
  return fail("unknown --format '" + text + "'; choose torch, cmake, gencode or flash-attn");
}

// -v: why this list, on stderr, so that stdout stays what
// `export TORCH_CUDA_ARCH_LIST=$(torchfix arch -v)` takes.
void explain_arch(const Situation& x, const Toolchain& decision, Printer& err) {
  for (const GpuGroup& g : x.gpu_groups) err.line("torchfix arch: " + g.label());
  err.line("torchfix arch: the list: " + decision.arch_reason);
  // The toolkit bounds the list (sm_121 on nvcc 12.8); with --gpu none is probed.
  if (const auto& t = decision.toolkit) {
    err.line("torchfix arch: nvcc " + (t->version ? t->version->str() : std::string("(version unknown)")) + " " +
             t->nvcc + ": " + decision.toolkit_reason);
  }
}

int run_arch(const ArchOptions& o, Context& ctx) {
  const Failure failed{ctx, "arch"};
  auto format = parse_format(o.format);
  if (!format) return failed(format.error().message);
  auto ptx = parse_ptx_policy(o.ptx);
  if (!ptx) return failed(ptx.error().message);
  auto inputs = load_inputs(ctx);
  if (!inputs) return failed(inputs.error());
  const Knowledge& knowledge = inputs->knowledge;
  // This machine is probed whole (its nvcc and torch decide the list); GPUs
  // named with --gpu are planned for another machine, so nothing is probed.
  const ProbeDepth depth = o.gpus.empty() ? ProbeDepth::full : ProbeDepth::gpus;
  auto snapshot = machine_snapshot(o.snapshot, o.gpus, depth, knowledge, ctx);
  if (!snapshot) return failed(snapshot.error().message);
  const Situation x = situate(*snapshot, knowledge);
  if (x.gpus.empty()) {
    std::string why = snapshot->gpus.empty() ? "no NVIDIA GPU was found" : "no GPU's compute capability could be read";
    for (const ProbeNote& note : snapshot->notes) why += "; " + note.probe + ": " + note.message;
    return failed(why +
                  ". Name the GPUs to plan for with --gpu (a name such as 'RTX 5090', sm_120 or 12.0; repeatable)");
  }
  ToolchainRequest request;
  request.recipe = knowledge.build_recipe(k_generic_recipe);
  request.ptx = *ptx;
  const Toolchain decision = decide_toolchain(x.toolchain_facts(), knowledge, request);
  ctx.out->block(render(decision.arch, *format));
  if (ctx.verbosity >= 1) explain_arch(x, decision, *ctx.err);
  return k_exit_ok;
}

}  // namespace

void add_arch(CLI::App& app, Context& ctx) {
  auto options = std::make_shared<ArchOptions>();
  auto* cmd = app.add_subcommand("arch", "Print the arch list of this machine's GPUs in a build system's spelling");
  cmd->add_option("--format", options->format,
                  "torch (TORCH_CUDA_ARCH_LIST, default), cmake (CMAKE_CUDA_ARCHITECTURES), gencode (nvcc flags), "
                  "flash-attn (FLASH_ATTN_CUDA_ARCHS)");
  cmd->add_option("--ptx", options->ptx, "Where to embed PTX: newest (default; newer GPUs can JIT it), none, all");
  cmd->add_option("--gpu", options->gpus,
                  "Plan for this GPU instead of the probed ones: a name, sm_XY or X.Y (repeatable)");
  cmd->add_option("--snapshot", options->snapshot, "Read the GPUs from a snapshot saved by doctor --save-snapshot");
  cmd->callback([options, &ctx] { ctx.exit_code = run_arch(*options, ctx); });
}

}  // namespace torchfix::cli
