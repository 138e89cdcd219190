#!/usr/bin/env bash
# Runs a cross-built torchfix.exe under Wine (Debian's wine64) through the
# checks the Windows milestone promises (docs/windows.md): the process
# runner (torchfix_process_check.exe beside the exe), --version,
# doctor --json (valid JSON, exit <= 1), inspect on a PE DLL holding a real
# nvcc fatbin, env --shell powershell, and env --shell cmd's snippet run by
# Wine's cmd.exe.
# Builds nothing: give it the exe and the DLL (.ci/package makes both).
# Usage: tests/windows/wine_smoke.sh TORCHFIX_EXE [PE_DLL EXPECTED_ARCH]
# Exits non-zero at the first failed check, naming it.
set -euo pipefail
if [[ $# -ne 1 && $# -ne 3 ]]; then
  echo "usage: tests/windows/wine_smoke.sh TORCHFIX_EXE [PE_DLL EXPECTED_ARCH]" >&2
  exit 2
fi
exe=$1 dll=${2:-} expect=${3:-}
# Debian's wine64 package puts its loader in /usr/lib/wine, not on PATH.
PATH=$PATH:/usr/lib/wine
command -v wine64 >/dev/null || { echo "wine_smoke: wine64 not installed (apt-get install wine64)" >&2; exit 2; }
export WINEDEBUG=-all
# A prefix of its own, so that no user's Wine settings change what runs.
export WINEPREFIX=${WINEPREFIX:-$(mktemp -d)/wine}
out=$(mktemp -d)
fail() { echo "wine_smoke: $*" >&2; exit 1; }
tf() { wine64 "$exe" "$@"; }

# The process runner's own checks (tests/windows/process_check.cpp), built
# beside the exe: real cmd.exe and ping.exe children inside job objects,
# and a Linux ELF program refused.
check_exe=$(dirname "$exe")/torchfix_process_check.exe
if [[ -f $check_exe ]]; then
  wine64 "$check_exe" "Z:$(type -P true | tr / '\\')" || fail "process_check failed (above)"
else
  echo "wine_smoke: no $check_exe; the process runner checks are not run"
fi

tf --version >"$out/version.txt" || fail "--version exited $?"
cat "$out/version.txt"
grep -q '^torchfix .*(torchfix-gpu' "$out/version.txt" || fail "--version: no 'torchfix ... (torchfix-gpu' line"

rc=0
tf doctor --json >"$out/doctor.json" || rc=$?
((rc <= 1)) || fail "doctor --json exited $rc"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out/doctor.json" || fail "doctor --json: not JSON"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("doctor --json: keys", sorted(d)[:8])' \
  "$out/doctor.json"

if [[ -n $dll ]]; then
  rc=0
  # Wine maps the Unix root to Z:, so an absolute path is Z:\ plus it.
  tf inspect "Z:${dll//\//\\}" >"$out/inspect.txt" || rc=$?
  cat "$out/inspect.txt"
  ((rc <= 1)) || fail "inspect exited $rc"
  grep -q "$expect" "$out/inspect.txt" || fail "inspect: no $expect in its output"
fi

rc=0
tf env --shell powershell >"$out/env.txt" 2>"$out/env.err" || rc=$?
head -n 5 "$out/env.txt"
((rc <= 1)) || fail "env --shell powershell exited $rc: $(cat "$out/env.err")"
grep -q '^# Regenerate: torchfix env --shell powershell' "$out/env.txt" || fail "env --shell powershell: no header"

# cmd's snippet, run by Wine's real cmd.exe: every variable it sets has
# the value torchfix meant (the snapshot's values hold ' and $, and PATH is
# prepended). PowerShell is not in Wine; its text is checked on Linux
# (tests/shellenv/env_cli_test.cpp).
root=$(cd "$(dirname "$0")/../.." && pwd)
snapshot=$root/tests/fixtures/snapshots/env-mixed-a6000-5090.json
tf env --shell cmd --snapshot "Z:${snapshot//\//\\}" >"$out/env.cmd" || fail "env --shell cmd exited $?"
# Called twice: the second run must not add PATH's entry again. (No space
# before '&': `set NAME ` would look for "NAME ".)
wine64 cmd /c "@echo off& call Z:${out//\//\\}\\env.cmd& call Z:${out//\//\\}\\env.cmd& set CUDA_HOME& set TORCH_CUDA_ARCH_LIST& set PATH" \
  >"$out/set.txt" 2>&1 || fail "cmd.exe could not run the snippet: $(cat "$out/set.txt")"
tr -d '\r' <"$out/set.txt" >"$out/set-lf.txt"
cat "$out/set-lf.txt"
grep -qxF "CUDA_HOME=/opt/My CUDA's \$dir/12.8" "$out/set-lf.txt" || fail "cmd: CUDA_HOME not set as meant"
grep -qxF "TORCH_CUDA_ARCH_LIST=8.6;12.0+PTX" "$out/set-lf.txt" || fail "cmd: TORCH_CUDA_ARCH_LIST not set as meant"
# On Windows the snapshot's CUDA_HOME gets "\bin" joined, not "/bin".
grep -qiE "^PATH=/opt/My CUDA's \\\$dir/12.8[/\\]bin;C:" "$out/set-lf.txt" || fail "cmd: PATH not prepended"
path_line=$(grep -i '^PATH=' "$out/set-lf.txt")
[[ $(grep -o "My CUDA" <<<"$path_line" | wc -l) == 1 ]] || fail "cmd: run twice, the snippet left two copies in PATH"
rm -rf "$out"
echo "wine_smoke: all checks passed"
