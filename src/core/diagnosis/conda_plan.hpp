#pragma once
// torchfix fix for a torch that conda installed, pure part: the conda
// channels as the user configured them (.condarc files, CONDA_* variables),
// the mirror a printed conda command uses, and the plan that keeps conda's
// torch a conda package (a CUDA build of the channel it came from) or, where
// no conda build fits, removes the conda package before the wheel goes in.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnosis/fix_plan.hpp"
#include "core/facts/knowledge.hpp"

namespace torchfix {

/// Holds the conda channel settings found, each with where it came from
/// ("/root/.condarc", "CONDA_CHANNELS"): `channels` and `default_channels`
/// entries (names or URLs), `custom_channels` (name -> base URL) and
/// `channel_alias` (the base URL of channel names; empty: conda's default).
struct CondaChannels {
  std::vector<std::pair<std::string, std::string>> channels;               // entry, origin
  std::map<std::string, std::pair<std::string, std::string>> custom = {};  // name -> base URL, origin
  std::pair<std::string, std::string> alias = {};                          // URL, origin
};

/// Adds the channel keys of a .condarc text (YAML: `channels` and
/// `default_channels` as block or flow lists, `custom_channels` as a block
/// map, `channel_alias`) to `out`; other keys are ignored. A key set again
/// later (a later file) adds to the lists and replaces the alias, as conda merges.
void add_condarc(CondaChannels& out, std::string_view text, const std::string& origin);

/// Adds CONDA_CHANNELS, CONDA_DEFAULT_CHANNELS (comma-separated, as conda
/// reads sequence variables) and CONDA_CHANNEL_ALIAS of `env` to `out`.
void add_conda_variables(CondaChannels& out, const std::map<std::string, std::string>& env);

/// Returns the channel name of a conda-meta record's `channel` value
/// ("https://conda.anaconda.org/conda-forge/linux-64", "pytorch",
/// "file:///srv/mirror/conda-forge/") : "conda-forge", "pytorch"; a
/// trailing platform folder is dropped.
std::string conda_channel_name(std::string_view record_channel);

/// Chooses the URL of channel `name` a command names: a mirror the user
/// configured (custom_channels, a `channels` URL ending in /NAME, a
/// channel_alias), else upstream https://conda.anaconda.org/NAME.
ChosenIndex choose_channel(const std::string& name, const CondaChannels& channels);

/// Describes the conda package that owns an environment's torch: its
/// conda-meta record's name ("pytorch"), version, build and channel name.
struct CondaTorch {
  std::string package;  // "pytorch"
  std::string version;  // "2.5.1"
  std::string build;    // "cuda124_py311h1234567_300"
  std::string channel;  // "conda-forge"
};

/// Returns the conda package that owns torch in `env` (the provenance of its
/// torch binaries, read from conda-meta), or nullopt when pip or uv put it there.
std::optional<CondaTorch> conda_torch(const PythonEnv& env);

/// Describes a conda environment torchfix may install into: its prefix, the
/// conda program found (empty: none), and the channels as configured.
struct CondaTarget {
  std::string prefix;
  std::string conda = {};  // CONDA_EXE, else conda on PATH; empty: none found
  CondaChannels channels = {};
};

/// Names how a fix reaches a torch that conda owns.
enum class CondaRoute {
  conda_build,    // a conda install of a CUDA build from the channel torch came from
  wheel_replaces  // the conda package removed, then the wheel installed with pip or uv
};

/// Rewrites `plan` (planned for pip or uv by plan_fix) for a torch that
/// conda owns: each install step of torch becomes a conda install of a CUDA
/// build from its channel (`rows`: recipes/torch-wheels.toml [[conda_torch]])
/// through the user's mirror, or, where that channel has no build for the
/// step's torch, the wheel's command preceded by the conda package's removal
/// with a line that says why. Returns the route of the last torch step.
CondaRoute plan_for_conda(FixPlan& plan, const Fix& fix, const CondaTorch& torch, const CondaTarget& target,
                          const std::vector<CondaTorchChannel>& rows, CommandShell shell);

/// Returns the argv that records a conda environment's packages exactly
/// (`conda list --explicit --md5 -p PREFIX`).
std::vector<std::string> conda_record_argv(const CondaTarget& target);

}  // namespace torchfix
