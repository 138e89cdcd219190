#pragma once
// Probes Python environments: one short script per interpreter, run with a
// timeout, printing JSON. Reading package metadata never imports torch; the
// optional import is a second stage whose crash or hang is a finding.

#include <chrono>
#include <string>
#include <vector>

#include "core/situation/snapshot.hpp"
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
  std::string invoked_as;                     // argv[0] when it names a path: a venv's bin/torchfix, even as a symlink
  std::vector<std::string> launcher;          // the interpreters `py -0p` lists (Windows; launcher_pythons)
};

/// Says whether `path` (an interpreter or a torchfix binary) lies in an
/// environment the user does not mean: uv's cache (uvx, `uv run --with`:
/// $UV_CACHE_DIR, $XDG_CACHE_HOME/uv, ~/.cache/uv, any ".../uv/archive-v*",
/// ".../uv/builds-v*") or a tool's own venv (uv tool, pipx: $UV_TOOL_DIR,
/// ~/.local/share/uv/tools, ~/.local/share/pipx, ~/.local/pipx).
/// On Windows, as uv documents and installs them there: its cache
/// (%LOCALAPPDATA%\uv\cache) and its tools (%APPDATA%\uv\tools); either
/// separator is understood.
bool throwaway_environment(const std::string& path, const Environment& env);

/// Returns the site-packages folders the interpreter `interpreter` most
/// likely reports, existing ones only, so a scan can start before it has
/// answered: PREFIX/lib/python3.N/site-packages for PREFIX/bin/python
/// (POSIX), PREFIX\Lib\site-packages for PREFIX\python.exe (an install,
/// conda, an embedded Python) or PREFIX\Scripts\python.exe (a venv).
std::vector<std::string> likely_site_packages_of(const std::string& interpreter);

/// Returns the interpreters to probe with their origin: the given ones
/// ("--python"), else $VIRTUAL_ENV/bin/python, $CONDA_PREFIX/bin/python,
/// the venv torchfix runs from ("torchfix's venv": invoked_as or
/// /proc/self/exe in a bin/ with a python beside it and pyvenv.cfg or
/// conda-meta above), the first python3 and python on PATH ("PATH") and
/// /usr/bin/python3 ("system"); existing ones only, none that
/// throwaway_environment() refuses.
/// On Windows (python_discovery_win.cpp): the given ones (a folder stands
/// for the python.exe it holds: python_embeded\python.exe of ComfyUI
/// portable, venv\Scripts\python.exe of A1111), else
/// %VIRTUAL_ENV%\Scripts\python.exe, %CONDA_PREFIX%\python.exe, the venv
/// torchfix.exe is in, python.exe on PATH (not the Store's alias) and the
/// PEP 514 registry entries ("registry (HKCU\PythonCore\3.12)"), then
/// what else the Python launcher lists (options.launcher, "py -0p").
std::vector<std::pair<std::string, std::string>> discover_pythons(const PythonProbeOptions& options,
                                                                  const Environment& env);

/// Returns the interpreters in the output of `py -0p` (the Python launcher
/// for Windows), in its order. Each line is " " + the tag ("-V:3.12",
/// "-V:Company/Tag"; older launchers "-3.10-64") + " *" for the default,
/// padded, then the executable path, maybe followed by its arguments, or
/// the install folder, whose python.exe the launcher runs (CPython
/// PC/launcher2.c, _printEnvironment). Lines without a path, and anything
/// else ("No installed Pythons found!"), are skipped.
std::vector<std::string> parse_py_list(std::string_view out);

/// Returns the interpreters `py -0p` lists, run through `runner` (5 s), on
/// Windows; none elsewhere, or when the launcher is missing or fails.
std::vector<std::string> launcher_pythons(const Environment& env, ProcessRunner& runner);

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
