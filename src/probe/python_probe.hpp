#pragma once
// Probes Python environments: one short script per interpreter, run with a
// timeout, printing JSON. Reading package metadata never imports torch; the
// optional import is a second stage whose crash or hang is a finding.

#include <chrono>
#include <string>
#include <vector>

#include "core/snapshot.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Says whether the probe imports torch (slow, ~4 s, and may crash) or reads
/// only files (package metadata, torch/version.py).
enum class TorchImport { skip, run };

/// Configures probe_pythons.
struct PythonProbeOptions {
  std::vector<std::string> interpreters;  // --python values; empty: discover
  TorchImport import = TorchImport::skip;
  std::chrono::milliseconds timeout{10'000};  // per interpreter, import included
};

/// Returns the interpreters to probe with their origin: the given ones
/// ("--python"), else $VIRTUAL_ENV/bin/python, $CONDA_PREFIX/bin/python,
/// python3 on PATH and /usr/bin/python3 ("system"), existing ones only.
std::vector<std::pair<std::string, std::string>> discover_pythons(const PythonProbeOptions& options,
                                                                  const Environment& env);

/// Probes each interpreter; environments reporting the same sys.prefix are
/// probed once. Never fails: problems are statuses and notes.
std::vector<PythonEnv> probe_pythons(const PythonProbeOptions& options, const Environment& env, ProcessRunner& runner,
                                     std::vector<ProbeNote>& notes);

/// Builds a PythonEnv from the probe script's stdout (JSON lines) and how the
/// process ended. Pure; used by probe_pythons and by tests.
PythonEnv python_env_from_probe(const std::string& interpreter, const std::string& origin, const ProcessResult& result,
                                TorchImport import);

/// Returns the Python source of the probe script (argv[1]: "import" or "noimport").
const char* python_probe_script();

}  // namespace torchfix
