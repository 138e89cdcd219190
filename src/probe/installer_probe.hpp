#pragma once
// torchfix fix, probe side: which installer an environment uses, the package
// indexes the user configured, and running the fix's programs (pip, uv)
// through the one runner.

#include <filesystem>
#include <optional>
#include <string>

#include "core/diagnosis/conda_plan.hpp"
#include "core/diagnosis/fix_plan.hpp"
#include "probe/process.hpp"

namespace torchfix {

/// Describes how packages get into one Python environment.
struct EnvInstaller {
  std::filesystem::path prefix;  // the environment's folder (bin/python's parent's parent)
  Installer installer = Installer::pip;
  bool made_by_uv = false;  // pyvenv.cfg has a `uv = ` line
  std::string uv;           // the uv program found on PATH; empty: none
  IndexConfig config;       // the indexes pip and uv would use there
  bool conda_env = false;   // PREFIX/conda-meta exists
  CondaTarget conda;        // the prefix, the conda program, the channels as configured
};

/// Reads the environment of `interpreter` (a path as probed): pyvenv.cfg
/// (`uv = ` means uv made it, and uv is used when it is on PATH), pip's
/// configuration files (PIP_CONFIG_FILE, /etc/pip.conf, /etc/xdg/pip/pip.conf,
/// ~/.config/pip/pip.conf, ~/.pip/pip.conf, PREFIX/pip.conf), uv.toml
/// (UV_CONFIG_FILE, /etc/uv/uv.toml, ~/.config/uv/uv.toml) and the index
/// variables of `env`; for a conda environment (PREFIX/conda-meta), the conda
/// program (CONDA_EXE, else conda on PATH) and the channel settings of every
/// file conda reads (/etc/conda, /var/lib/conda, $CONDA_ROOT,
/// $XDG_CONFIG_HOME/conda, ~/.config/conda, ~/.conda: .condarc, condarc and
/// condarc.d/*.yml|yaml; ~/.condarc; the same in the environment's prefix and
/// $CONDA_PREFIX; $CONDARC) and the CONDA_* variables. Missing files are
/// skipped; never fails.
EnvInstaller probe_env_installer(const std::string& interpreter, const Environment& env);

/// Returns why nothing can install into `where` (uv made it without pip and
/// uv is not on PATH), or nullopt when its installer is there.
std::optional<std::string> missing_installer(const EnvInstaller& where);

/// Runs one planned command with `env` plus its own variables, its output
/// captured (at most 4 MiB per stream), stopped after `timeout`. Errors: the
/// program could not be started.
Expected<ProcessResult> run_planned(const PlannedCommand& command, const Environment& env, ProcessRunner& runner,
                                    std::chrono::milliseconds timeout);

}  // namespace torchfix
