#pragma once
// Diagnosis: a pure function of a Snapshot and the Knowledge tables that
// returns findings, each with a severity, an explanation and a fix as commands.

#include <optional>
#include <string>
#include <vector>

#include "core/facts/knowledge.hpp"
#include "core/resolver/resolver.hpp"
#include "core/situation/snapshot.hpp"

namespace torchfix {

/// Ranks findings: ok (a check passed), note (worth knowing), warning
/// (works, but slowly, partly, or only for now), problem (will fail).
enum class Severity { ok, note, warning, problem };

/// Groups findings for display, in the order shown.
enum class Section { gpus, toolkits, compilers, python };

/// Names what one step of a fix does. `torchfix fix` runs install steps with
/// the environment's installer and only shows the others (driver upgrades,
/// containers, torch source builds are never applied).
enum class StepKind { install, driver, container, build };

/// Says how an install step installs its requirements (the pip options it means).
enum class InstallMode {
  reinstall,      // --force-reinstall (uv: --reinstall), dependencies resolved
  pin_no_deps,    // --no-deps: an extension pinned to the new torch
  source_build,   // --no-build-isolation --no-binary PKG --no-deps --force-reinstall
  editable,       // --no-build-isolation --no-deps -e ROOT: an editable checkout rebuilt in place
  project_index,  // --force-reinstall --no-deps --only-binary PKG PKG -f PAGE: a wheel of a project's index (index_url:
                  // the page)
  project_page_only,  // --force-reinstall --no-deps --no-index PKG -f PAGE: from that page alone
                      // (PageInstall::no_index)
  variant_index,      // --force-reinstall --no-deps PKG==VER --extra-index-url INDEX: a release's build for
                      // torch's CUDA from its project's index ([[variant_index]]; index_url: the index)
  nightly,            // --force-reinstall --pre (uv: --reinstall --prerelease allow): the nightly channel
};

/// Describes one command of a fix as data, so that it is run without
/// re-reading printed text. `command` is the line as printed.
struct FixStep {
  StepKind kind = StepKind::install;
  InstallMode mode = InstallMode::reinstall;
  std::vector<std::string> requirements = {};                 // "torch==2.8.0", "torchvision"
  std::string index_url = {};                                 // upstream index; empty: the configured ones
  std::string variant = {};                                   // the index's torch variant ("cu128"); empty: none
  std::vector<std::pair<std::string, std::string>> env = {};  // variables a source build needs
  std::string command = {};                                   // the printed command (pip form)
};

/// Says whether a fix's commands change the machine or only show more about
/// the problem; a diagnostic command is never put forward as the first fix.
enum class FixRole { repair, diagnose };

/// Describes a fix: what it does, and the commands that do it (run in order;
/// alternatives are separate Fix values). `steps` holds the same commands
/// as data (a wheel's pip and uv lines are one install step).
struct Fix {
  std::string summary;
  std::vector<std::string> commands;
  std::vector<FixStep> steps = {};
  FixRole role = FixRole::repair;
  /// Lines to write into a file the user keeps, instead of commands to run
  /// here (`file` "Dockerfile": the RUN lines of the image's build), shown
  /// as they are and never run by torchfix.
  std::string file = {};
  std::vector<std::string> file_lines = {};
};

/// Describes one check's outcome.
struct Finding {
  std::string id;  // stable, for JSON: "torch.arch", "driver.too-old", ...
  Severity severity = Severity::ok;
  Section section = Section::gpus;
  std::string title;                 // one line
  std::vector<std::string> details;  // shown with -v (and always in JSON)
  std::vector<Fix> fixes;            // empty when nothing needs doing
  std::optional<int> gpu;            // GPU index the finding is about (the first of `gpus`)
  std::vector<int> gpus;             // every GPU it is about: a group of identical GPUs is one finding
  std::string python;                // interpreter the finding is about
  std::string package;               // distribution the finding is about ("torch", "vllm")
  std::optional<Reach> reach;        // for kernel checks: how the GPU is reached
  bool unchecked = false;            // says what could not be checked: the summary names it (no all-clear)
};

/// Holds the resolver's answer for one Python environment (or for the
/// machine alone), after each winner was applied and diagnosed again.
struct RemedyReport {
  std::optional<std::size_t> python;  // index into Snapshot::pythons; nullopt: the machine
  Resolution resolution;              // winners that came out clean, best first; the rest in `rejected`
  std::vector<Fix> fixes;             // the winners as fixes, as printed
  /// Per winner: the titles of the warnings the doctor still gives this
  /// environment once the winner is applied (PTX JIT, partial kernels).
  std::vector<std::vector<std::string>> warnings_after;
};

/// Holds all findings of one diagnosis, in display order within each section.
struct Diagnosis {
  std::vector<Finding> findings;
  std::vector<RemedyReport> remedies;  // one per environment whose problems the resolver handled

  /// Returns how many findings have `severity`.
  int count(Severity severity) const;
  /// Returns the findings that say what could not be checked (Finding::unchecked), in order.
  std::vector<const Finding*> unchecked() const;
  /// Returns the process exit code: 1 when any problem was found, else 0.
  int exit_code() const;
};

/// Diagnoses `snapshot` with `knowledge`. Never fails: what cannot be decided
/// becomes a note or warning that says what is unknown.
Diagnosis diagnose(const Snapshot& snapshot, const Knowledge& knowledge);
/// Diagnoses the snapshot of `situation` (situate() of it, derived once by a
/// caller that also reports or judges more on it). Never fails.
Diagnosis diagnose(const Situation& situation, const Knowledge& knowledge);

/// Returns "ok", "note", "warning", "problem".
std::string_view to_string(Severity severity);
/// Returns "gpus", "toolkits", "compilers", "python".
std::string_view to_string(Section section);

}  // namespace torchfix
