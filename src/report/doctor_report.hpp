#pragma once
// Renders a doctor run: human text (flutter-doctor style) or JSON
// (schema in docs/json-schema.md).

#include <nlohmann/json_fwd.hpp>

#include "core/diagnosis/diagnosis.hpp"
#include "core/situation/situation.hpp"
#include "core/situation/snapshot.hpp"
#include "report/printer.hpp"

namespace torchfix {

/// Says how much of each finding the human report shows.
enum class Detail { summary, verbose };

/// Prints one line per finding grouped by section, fixes under failing ones,
/// details under `Detail::verbose`, and a closing summary line.
void print_doctor(const Snapshot& snapshot, const Diagnosis& diagnosis, Printer& out, Detail detail);

/// Returns the doctor's JSON document: schema_version, summary, findings, snapshot.
nlohmann::json doctor_json(const Snapshot& snapshot, const Diagnosis& diagnosis);

/// Returns the facts every decision read (docs/json-schema.md, "situation"):
/// platform, L4T release, driver (version, branch, CUDA and where it came
/// from), GPU groups, the current toolkit and the toolchain's arch list.
nlohmann::json situation_json(const Situation& situation);

/// Returns one finding as JSON (id, severity, section, title, details, fixes, ...).
nlohmann::json finding_json(const Finding& finding);

/// Returns the problem whose first fix command to run first: a GPU or
/// driver problem before a torch one (torch's wheel carries its own CUDA
/// libraries), before a toolkit one, before a host compiler one; nullptr when
/// no problem has a command or lines of a file to change.
const Finding* first_fix(const Diagnosis& diagnosis);

/// Says what to do first for one fix: `run` with the command to run, or
/// (a rebuild torchfix can only describe, lines of the image's Dockerfile)
/// the step in words.
struct FirstStep {
  bool run = true;
  std::string text;
};

/// Returns the first step of `fix` (first_fix's answer's first fix), which
/// has a command or file lines.
FirstStep first_step(const Fix& fix);

/// Returns why the fix of `first` (first_fix's answer) comes first, as one
/// clause: by its section, and for a package other than torch, by its name.
std::string first_fix_reason(const Finding& first);

}  // namespace torchfix
