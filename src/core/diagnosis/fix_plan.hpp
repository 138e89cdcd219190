#pragma once
// torchfix fix, pure part: turns the doctor's first fix (structured FixStep
// values, core/diagnosis/diagnosis.hpp) into the argv torchfix runs with the installer
// the environment uses, keeps the user's mirror of the PyTorch index, and
// decides from two `pip freeze` records what a rollback reinstalls.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/quote.hpp"
#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"

namespace torchfix {

/// Names the program that installs into an environment: pip, or uv when uv
/// made the environment (its pyvenv.cfg has a `uv = ` line).
enum class Installer { pip, uv };

/// Returns "pip" or "uv".
std::string_view to_string(Installer installer);

/// Returns the installer of an environment from the text of its pyvenv.cfg
/// (empty text: no such file, pip).
Installer installer_from_pyvenv_cfg(std::string_view pyvenv_cfg);

/// Holds the package indexes the user configured, in the order found
/// (pip.conf index-url/extra-index-url, PIP_INDEX_URL, PIP_EXTRA_INDEX_URL,
/// uv.toml index urls, UV_INDEX, UV_DEFAULT_INDEX, UV_EXTRA_INDEX_URL), each
/// with where it came from ("/etc/pip.conf", "PIP_INDEX_URL").
struct IndexConfig {
  std::vector<std::pair<std::string, std::string>> urls;  // url, origin
};

/// Adds the index URLs of a pip.conf text (index-url, extra-index-url in any
/// section; values may continue on indented lines) to `config`.
void add_pip_conf(IndexConfig& config, std::string_view text, const std::string& origin);
/// Adds the `url = "..."` values of a uv.toml text (its [[index]] tables and
/// index-url/extra-index-url keys) to `config`.
void add_uv_toml(IndexConfig& config, std::string_view text, const std::string& origin);
/// Adds the index variables of `env` (PIP_INDEX_URL, PIP_EXTRA_INDEX_URL,
/// UV_INDEX, UV_DEFAULT_INDEX, UV_INDEX_URL, UV_EXTRA_INDEX_URL; space-separated lists) to `config`.
void add_index_variables(IndexConfig& config, const std::map<std::string, std::string>& env);

/// Describes the index an install step uses: the user's mirror of the
/// PyTorch index when one is configured (a URL whose last path segment is a
/// torch variant: cpu, cu126, rocm6.2, xpu), else the upstream one.
struct ChosenIndex {
  std::string url;       // what the command uses
  std::string upstream;  // https://download.pytorch.org/whl/cu128
  std::string origin;    // where the mirror was configured; empty: upstream
};

/// Chooses the index for `upstream` (a PyTorch index URL ending in `variant`).
ChosenIndex choose_index(const std::string& upstream, const std::string& variant, const IndexConfig& config);

/// Describes how torchfix installs into one environment: its interpreter
/// and the shell printed lines are quoted for (both from the Situation), and
/// what was probed there (the installer, the uv program, the indexes).
struct InstallTarget {
  std::string interpreter = {};              // Situation::pythons[i].env->interpreter
  CommandShell shell = CommandShell::posix;  // Situation::shell
  Installer installer = Installer::pip;      // probed (pyvenv.cfg, uv on PATH)
  std::string uv = {};                       // the uv program to run; empty: none
  IndexConfig config = {};                   // the indexes pip and uv would use there
};

/// Returns the install target of environment `python` of `x` (an index into
/// Situation::pythons) with the probed `installer`, `uv` and `config`.
InstallTarget install_target(const Situation& x, std::size_t python, Installer installer, std::string uv,
                             IndexConfig config);

/// Describes one program torchfix fix runs.
struct PlannedCommand {
  std::vector<std::string> argv;                         // argv[0] is the interpreter or uv
  std::vector<std::pair<std::string, std::string>> env;  // added to the caller's environment
  std::string shown;                                     // the line as printed (InstallTarget::shell's quoting)
  std::string note;                                      // "mirror from /etc/pip.conf; upstream: URL"
  std::string index_check;  // "checked on URL (PEP 691 JSON)", "not checked: URL: timed out"; empty: not asked
};

/// Holds what torchfix fix will do for one fix.
struct FixPlan {
  std::string summary;                     // the fix's summary
  std::vector<PlannedCommand> commands;    // run in order
  std::vector<std::string> changes;        // "torch 2.7.1+cu126 (cu126) -> torch==2.8.* from the cu128 index"
  std::vector<std::string> shown_only;     // driver upgrades, containers, source builds: printed, never run
  std::vector<std::string> leaves_behind;  // what the doctor still warns about afterwards
  std::optional<std::string> refused;      // why this fix cannot be applied (nothing to run)
};

/// Plans `fix` for environment `python` of `x` (an index into
/// Situation::pythons; what it changes is read from its torch facts) installed
/// through `target`. `leaves_behind` are the warning titles the re-diagnosis
/// of the applied remedy still gives. Refused on native Windows, where
/// torchfix does not run installers.
FixPlan plan_fix(const Fix& fix, const std::vector<std::string>& leaves_behind, const Situation& x, std::size_t python,
                 const InstallTarget& target);

/// Returns the argv that records an environment's packages
/// (`python -m pip freeze --all`, or `uv pip freeze --python PY`).
std::vector<std::string> freeze_argv(const InstallTarget& target);

/// Parses `pip freeze` output into normalized name (lowercase, '-' for '_'
/// and '.') -> the line that pins it ("torch==2.7.1+cu126", or a direct
/// reference "pkg @ file:///..."). Comments and editable lines are kept by name.
std::map<std::string, std::string> parse_freeze(std::string_view text);

/// Returns the local variant label of a freeze line when it names a torch
/// variant ("torch==2.7.1+cu126" -> "cu126"), else "" (no label, a label
/// that is no variant, a direct reference "pkg @ URL").
std::string local_variant(const std::string& line);

/// Returns the commands that bring `now` back to `recorded` (two
/// parse_freeze results): uninstall what was added, reinstall with
/// --no-deps the exact recorded line of what changed or went away (from
/// the index of its local variant label, +cu126, when it has one).
/// Empty when they are equal.
std::vector<PlannedCommand> restore_commands(const std::map<std::string, std::string>& recorded,
                                             const std::map<std::string, std::string>& now,
                                             const InstallTarget& target);

/// Returns the names whose lines differ between two parse_freeze results, sorted.
std::vector<std::string> freeze_differences(const std::map<std::string, std::string>& a,
                                            const std::map<std::string, std::string>& b);

}  // namespace torchfix
