#pragma once
// The guard against later installs, pure part: which lines of an
// environment's `pip freeze` pin its CUDA torch and companions, and what the
// doctor says about a guard it finds.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnosis/diagnosis.hpp"

namespace torchfix {

/// Returns the constraints file text that pins torch and its companions
/// (torchvision, torchaudio, triton, pytorch-triton, nvidia-* libraries) to
/// the lines of `frozen` (a parse_freeze result), with a header comment
/// naming `interpreter`. nullopt when torch is not in `frozen`.
std::optional<std::string> guard_constraints(const std::map<std::string, std::string>& frozen,
                                             const std::string& interpreter);

/// Returns the doctor's finding about a guard of the environment `env`
/// (`constraints`: the text of its PREFIX/.torchfix/constraints.txt): ok when
/// the installed torch is the pinned one, a warning naming both when something
/// bypassed the guard (installed another torch). nullopt when the file pins no torch.
std::optional<Finding> guard_finding(const PythonEnv& env, std::string_view constraints, const std::string& file);

/// Describes what the guard of a uv project writes into its pyproject.toml:
/// the packages that must come from one index, and that index.
struct UvProjectGuard {
  std::vector<std::string> packages;  // torch, then torchvision / torchaudio when installed with the same variant
  std::string index_name;             // "torchfix-pytorch-cu128"
  std::string url;                    // the index the fix used (the user's mirror, else upstream)
};

/// Returns whether a folder is a uv project: its pyproject.toml text has a
/// [tool.uv] table (or one under it), or a uv.lock lies beside it (`has_lock`).
bool is_uv_project(std::string_view pyproject, bool has_lock);

/// Returns the uv-project guard for the packages of `frozen` (a parse_freeze
/// result) served from `url`, the index of torch's variant `variant` (cu128);
/// nullopt when torch is not in `frozen`.
std::optional<UvProjectGuard> uv_project_guard(const std::map<std::string, std::string>& frozen,
                                               const std::string& variant, const std::string& url);

/// Returns the lines the guard puts between the torchfix markers of
/// pyproject.toml: a [tool.uv.sources.NAME] table per package (a sub-table
/// header, valid beside a [tool.uv.sources] table of the user's) and one
/// [[tool.uv.index]] entry with explicit = true, so that uv takes those
/// packages from that index alone.
std::string uv_project_block(const UvProjectGuard& guard);

/// Returns why the guard cannot be written into `pyproject` (its text without
/// torchfix's block): a source for one of the packages, an index of the same
/// name, or [tool.uv] sources / index given inline (a table header would then
/// redefine them); nullopt when it can. Reads TOML lines, not a full parse.
std::optional<std::string> uv_project_conflict(std::string_view pyproject, const UvProjectGuard& guard);

}  // namespace torchfix
