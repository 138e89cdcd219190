#!/usr/bin/env bash
# Installs the win_amd64 wheel of torchfix-gpu into a folder laid out as a
# Windows venv (tests/windows/install_wheel.py: Scripts\torchfix.exe, the
# tables in share\torchfix, the .dist-info in Lib\site-packages) and runs the
# installed torchfix.exe under Wine (Debian's wine64):
#  - --version names the installed tables (share\torchfix of this prefix,
#    found through GetModuleFileNameW: probe/data_dir.cpp), not the copy
#    embedded in the binary;
#  - doctor --json is JSON (exit <= 1) and reads its tables from there;
#  - inspect on nvjpeg64_12.dll, a real Windows CUDA DLL from the PyPI wheel
#    nvidia_nvjpeg_cu12-12.4.0.76-py3-none-win_amd64.whl (NVJPEG_WHEEL, the
#    one .ci/test downloads): its SASS for sm_120 is found (skipped, saying
#    so, without that wheel);
#  - env --shell powershell prints the PowerShell block;
#  - a template edited in the installed share\torchfix changes what it prints;
#  - env --install/--uninstall --shell powershell edit the PowerShell profile
#    (tests/windows/wine_profile.sh, in a prefix of its own).
# Usage: tests/windows/wine_wheel.sh WHEEL [NVJPEG_WHEEL]
# Exits 1 at the first failed check, naming it; 2 on wrong usage or no wine64.
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: tests/windows/wine_wheel.sh WHEEL [NVJPEG_WHEEL]" >&2
  exit 2
fi
wheel=$1 nvjpeg=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/lib/wine  # Debian's wine64 keeps its loader there
command -v wine64 >/dev/null || { echo "wine_wheel: wine64 not installed (apt-get install wine64)" >&2; exit 2; }
export WINEDEBUG=-all
tmp=$(mktemp -d)
export WINEPREFIX=$tmp/wine
fail() { echo "wine_wheel: $*" >&2; echo "wine_wheel: kept $tmp" >&2; exit 1; }
# Wine maps the Unix root to Z:, so an absolute path is Z:\ plus it.
winpath() { local p=${1//\//\\}; echo "Z:$p"; }

venv=$tmp/venv
python3 "$here/install_wheel.py" "$wheel" "$venv" || fail "install_wheel.py failed (above)"
exe=$venv/Scripts/torchfix.exe
tf() { wine64 "$exe" "$@"; }

tf --version >"$tmp/version.txt" || fail "--version exited $?"
tr -d '\r' <"$tmp/version.txt" >"$tmp/version-lf.txt"
cat "$tmp/version-lf.txt"
grep -q '^torchfix .*(torchfix-gpu' "$tmp/version-lf.txt" || fail "--version: no 'torchfix ... (torchfix-gpu' line"
share=$(winpath "$venv/share/torchfix")
grep -qiF "tables from $share, files of " "$tmp/version-lf.txt" ||
  fail "--version: the tables are not those installed in $share"

rc=0
tf doctor --json >"$tmp/doctor.json" || rc=$?
((rc <= 1)) || fail "doctor --json exited $rc"
python3 - "$tmp/doctor.json" <<'EOF' || fail "doctor --json: not JSON, or no platform"
import json, sys
d = json.load(open(sys.argv[1]))
print("doctor --json: keys", sorted(d)[:8])
EOF

if [[ -n $nvjpeg && -f $nvjpeg ]]; then
  python3 -m zipfile -e "$nvjpeg" "$tmp/nvjpeg"
  dll=$tmp/nvjpeg/nvidia/nvjpeg/bin/nvjpeg64_12.dll
  [[ -f $dll ]] || fail "no nvidia/nvjpeg/bin/nvjpeg64_12.dll in $nvjpeg"
  rc=0
  tf inspect "$(winpath "$dll")" >"$tmp/inspect.txt" || rc=$?
  tr -d '\r' <"$tmp/inspect.txt" | tee "$tmp/inspect-lf.txt"
  ((rc <= 1)) || fail "inspect exited $rc"
  grep -q 'sm_120' "$tmp/inspect-lf.txt" || fail "inspect: no sm_120 in its output for nvjpeg64_12.dll"
else
  echo "wine_wheel: SKIP inspect on a real Windows CUDA DLL: no nvjpeg wheel given (pip download --platform win_amd64" \
    "--no-deps --only-binary=:all: nvidia-nvjpeg-cu12==12.4.0.76; .ci/test puts it in build-asan/win-wheels)"
fi

rc=0
tf env --shell powershell >"$tmp/env.txt" 2>"$tmp/env.err" || rc=$?
tr -d '\r' <"$tmp/env.txt" >"$tmp/env-lf.txt"
head -n 5 "$tmp/env-lf.txt"
((rc <= 1)) || fail "env --shell powershell exited $rc: $(cat "$tmp/env.err")"
grep -q '^# Regenerate: torchfix env --shell powershell' "$tmp/env-lf.txt" || fail "env --shell powershell: no header"

# The installed template is the one used: a line added to its header shows up.
sed -i 's/^@@ header$/&\n# edited in the installed share\\torchfix/' "$venv/share/torchfix/templates/env.ps1"
tf env --shell powershell | tr -d '\r' >"$tmp/env2.txt" || true
grep -q '^# edited in the installed share\\torchfix$' "$tmp/env2.txt" ||
  fail "env --shell powershell did not use $venv/share/torchfix/templates/env.ps1"
wineserver -k 2>/dev/null || true  # before its prefix goes, so it saves nothing there
"$here/wine_profile.sh" "$exe" || fail "the PowerShell profile edit (wine_profile.sh, above)"
rm -rf "$tmp"
echo "wine_wheel: all checks passed"
