// What --help shows beyond CLI11's list: named placeholders instead of
// TEXT, and per command its examples and the environment variables it reads.

#include "cli/help_text.hpp"

#include <map>
#include <string_view>

#include "cli/option_groups.hpp"

namespace torchfix::cli {
namespace {

// The value each option takes, by name, as the docs spell it.
const std::map<std::string, std::string, std::less<>> k_placeholders = {
    {"--gpu", "NAME|X.Y"},
    {"--python", "PATH"},
    {"--snapshot", "FILE"},
    {"--save-snapshot", "FILE|-"},
    {"--log", "FILE"},
    {"--timeout", "SECONDS"},
    {"--driver", "VERSION|X.Y"},
    {"--torch", "X.Y.Z[+VARIANT]"},
    {"--platform", "linux-x86_64|linux-aarch64|windows|wsl2"},
    {"--with", "PKG==VERSION"},
    {"--python-version", "X.Y"},
    {"--container", "IMAGE"},
    {"--shell", "bash|zsh|fish|powershell|cmd|auto"},
    {"--for", "build|runtime|all"},
    {"--rc", "FILE"},
    {"--format", "torch|cmake|gencode|flash-attn"},
    {"--ptx", "newest|none|all"},
    {"--arch", "auto|native|fleet:DIR|LIST"},
    {"--ref", "REF"},
    {"--src", "DIR"},
    {"--repo", "URL"},
    {"--work-dir", "DIR"},
    {"--dist", "MODE"},
    {"--cache", "KIND"},
    {"--dist-scheduler", "URL"},
    {"--dist-token", "TOKEN"},
    {"--snapshots", "PATH"},
    {"--partition", "NAME"},
    {"--nodes", "HOSTLIST"},
    {"--srun-arg", "ARG"},
    {"--torchfix", "PATH"},
    {"--save-snapshots", "DIR"},
    {"--output", "FILE|-"},
    {"--gpu-index", "N"},
    {"--time", "MINUTES"},
    {"--jobs", "N"},
    {"--model", "resnet50|vit_b_16|transformer"},
    {"--batch-size", "N"},
    {"--steps", "N"},
    {"--color", "auto|always|never"},
    {"paths", "PATH"},
    {"recipe", "RECIPE"},
    {"shell", "bash|zsh|fish"},
};

struct CommandHelp {
  const char* examples;
  const char* environment;
};

constexpr const char* k_common_environment =
    "  TORCHFIX_DATA_DIR  folder with recipes/ and templates/ (default: beside the binary, or "
    "<prefix>/share/torchfix, else the tables embedded in the binary)\n"
    "  NO_COLOR           no colour (https://no-color.org); CLICOLOR_FORCE=1 or FORCE_COLOR=1: colour even in pipes\n";

const std::map<std::string, CommandHelp, std::less<>> k_commands = {
    {"doctor",
     {"  torchfix doctor                              judge this machine and its Python environments\n"
      "  torchfix doctor --python ~/venv/bin/python   judge that interpreter only\n"
      "  torchfix doctor --gpu \"RTX 5090\" --torch 2.6.0+cu126   what-if: another GPU and torch\n"
      "  torchfix doctor --json > report.json         the machine-readable report (docs/json-schema.md)\n",
      "  VIRTUAL_ENV, CONDA_PREFIX, PATH  where the Python environments are found\n"
      "  CUDA_HOME, CUDA_PATH, CC, CXX, CUDAHOSTCXX, TORCH_CUDA_ARCH_LIST  the toolchain judged\n"
      "  TORCHFIX_WHAT_IF   a TOML file of what-if values (docs/doctor.md)\n"}},
    {"inspect",
     {"  torchfix inspect /usr/local/cuda/lib64 --gpu 12.0\n"
      "  torchfix inspect torch-2.6.0+cu126-cp312-cp312-linux_x86_64.whl --json\n",
      ""}},
    {"build",
     {"  torchfix build flash-attn --dry-run          print the plan for this machine's GPUs\n"
      "  torchfix build --src . --arch 8.6;12.0+PTX   build this extension tree for two archs\n",
      "  VIRTUAL_ENV, PATH, CUDA_HOME, CC, CXX       the interpreter and toolchain the build uses\n"}},
    {"recipes", {"  torchfix recipes\n  torchfix recipes --json\n", ""}},
    {"env",
     {"  torchfix env                                 print the variables for this shell\n"
      "  torchfix env --install                       put them into ~/.bashrc (or the shell's rc file)\n",
      "  SHELL              the shell --shell auto writes for\n"}},
    {"arch",
     {"  torchfix arch                                TORCH_CUDA_ARCH_LIST for this machine's GPUs\n"
      "  torchfix arch --format cmake --gpu \"NVIDIA H100 80GB HBM3\"\n",
      "  CUDA_VISIBLE_DEVICES  which GPUs are seen\n"}},
    {"tune",
     {"  torchfix tune --quick                        what TF32, bf16, cuDNN autotuning and the allocator are worth\n"
      "  torchfix tune --gpu-index 0 --json\n"
      "  torchfix tune --model resnet50               time a real training step under each setting (docs/tune.md)\n",
      "  VIRTUAL_ENV, PATH  whose torch is measured\n"}},
    {"fleet",
     {"  torchfix fleet --snapshots snaps/            judge saved snapshots of many nodes\n"
      "  torchfix fleet --slurm --partition gpu       probe a Slurm partition with srun\n",
      ""}},
    {"fix",
     {"  torchfix fix --dry-run                       what the doctor's first fix would run; changes nothing\n"
      "  torchfix fix --yes --python ~/venv/bin/python   apply it to that environment, prove it, roll back if not\n",
      "  VIRTUAL_ENV, CONDA_PREFIX, PATH  which environment is fixed, and whether uv or pip installs\n"
      "  PIP_CONFIG_FILE, PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, UV_INDEX_URL, UV_DEFAULT_INDEX  the indexes used "
      "(docs/fix.md)\n"
      "  CONDARC, CONDA_CHANNELS, CONDA_CHANNEL_ALIAS, CONDA_EXE  the conda channels and program, where conda owns "
      "torch\n"}},
    {"version", {"  torchfix version\n  torchfix version --json\n", ""}},
    {"completions",
     {"  torchfix completions bash > ~/.local/share/bash-completion/completions/torchfix\n"
      "  torchfix completions zsh > ~/.zfunc/_torchfix     (a folder on $fpath)\n"
      "  torchfix completions fish > ~/.config/fish/completions/torchfix.fish\n",
      ""}},
    {"man", {"  torchfix man | man -l -\n", ""}},
};

// Sets each option's text in --help to its placeholder alone: CLI11 2.1
// appends its validators' names ("FILE:FILE", "MINUTES:INT in [1 - 1440]")
// and "Excludes: --json" to the option column. A flag shows nothing.
void name_placeholders(CLI::App& cmd) {
  for (CLI::Option* option : cmd.get_options()) {
    const std::string name = option->get_lnames().empty() ? option->get_name() : "--" + option->get_lnames().front();
    auto found = k_placeholders.find(name);
    if (found != k_placeholders.end()) option->type_name(found->second);
    if (!option->nonpositional()) continue;
    const bool repeatable = option->get_expected_max() == CLI::detail::expected_max_vector_size;
    if (found != k_placeholders.end()) {
      option->option_text(found->second + (repeatable ? " ..." : ""));
    } else if (option->get_expected_max() == 0 && (!option->get_excludes().empty() || !option->get_needs().empty())) {
      option->option_text(" ");  // a flag: neither "Excludes:" nor "Needs:" in the option column
    }
  }
}

}  // namespace

std::string option_placeholder(const CLI::Option& option) {
  std::string text = option.get_option_text();
  if (text.empty()) return option.get_expected_max() == 0 ? "" : option.get_type_name();
  if (text.ends_with(" ...")) text.resize(text.size() - 4);
  return text == " " ? "" : text;
}

std::string command_examples(std::string_view name) {
  auto found = k_commands.find(name);
  return found == k_commands.end() ? std::string() : found->second.examples;
}

std::string command_environment(std::string_view name) {
  auto found = k_commands.find(name);
  return (found == k_commands.end() ? std::string() : found->second.environment) + k_common_environment;
}

void describe_commands(CLI::App& app) {
  name_placeholders(app);
  app.footer(
      "\nExamples:\n"
      "  torchfix doctor                    why PyTorch does (not) run on this machine's GPUs, and the fix\n"
      "  torchfix doctor --markdown         the same as a short block to paste into a bug report\n"
      "  torchfix doctor --gpu \"RTX 5090\"   what-if: the same machine with another GPU\n"
      "  torchfix help doctor               the options of one command (or torchfix doctor --help)\n"
      "\nEnvironment:\n" +
      std::string(k_common_environment));
  for (CLI::App* cmd : app.get_subcommands({})) {
    name_placeholders(*cmd);
    group_options(*cmd);
    std::string footer =
        "\nOptions of every command:\n"
        "  -v, --verbose      show details: each check's evidence, the fixes considered, the probes that could not "
        "answer;\n"
        "                     -vv also where the tables come from and each command the probes ran, with its time;\n"
        "                     -vvv also what each of them printed\n"
        "  -q, --quiet        print nothing but errors: the exit code tells\n"
        "  --color WHEN       auto (default: on a terminal), always or never\n";
    if (k_commands.contains(cmd->get_name())) {
      footer += "\nExamples:\n" + command_examples(cmd->get_name());
      footer += "\nEnvironment:\n" + command_environment(cmd->get_name());
    }
    cmd->footer(footer);
  }
}

}  // namespace torchfix::cli
