#!/usr/bin/env bash
# Runs a cross-built torchfix.exe under Wine on the Windows layouts its
# probes look for (src/probe/*_win.cpp), made for real in a fresh Wine
# prefix, and checks what `doctor --json` found:
#  - Pythons: a venv through VIRTUAL_ENV (Scripts\python.exe beside
#    pyvenv.cfg), python.exe on PATH after the Microsoft Store's
#    WindowsApps alias (skipped), a PEP 514 registry entry made with
#    `reg add` (HKCU\Software\Python\PythonCore\3.12\InstallPath), and
#    ComfyUI portable's python_embeded\python.exe from `--python FOLDER`
#    (named in the one-line refusal, as the stand-in does not probe), and
#    what the Python launcher lists beyond the registry (`py -0p`, origin
#    "py -0p"; its entry for the registry's Python is not listed twice):
#    py.bat on PATH prints the launcher's format (CPython PC/launcher2.c:
#    the tag padded to 16, the default marked " *", then the path);
#  - toolkits: CUDA_PATH_V12_10 before CUDA_PATH_V12_4 (by version, not by
#    name), then %ProgramFiles%\NVIDIA GPU Computing Toolkit\CUDA\v11.8;
#    the inherited Linux CUDA_HOME=/usr/local/cuda is not used;
#  - no NVIDIA driver (nvml.dll, nvcuda.dll, nvidia-smi.exe), said cleanly;
#  - MSVC: vswhere.exe at %ProgramFiles(x86)%\Microsoft Visual
#    Studio\Installer prints the output flutter recorded for a VS Community
#    2022 17.5.4 (tests/fixtures/windows/vswhere-vs2022-17.5.json; it is
#    tests/windows/print_file.c, built with zig cc), and that install's real
#    folders hold VC\Auxiliary\Build\Microsoft.VCToolsVersion.default.txt
#    (14.35.32215) and VC\Tools\MSVC\14.35.32215\bin\Hostx64\x64\cl.exe:
#    the doctor lists that cl.exe as MSVC 19.35.32215, origin vswhere.
# Each python.exe / nvcc.exe is a copy of Wine's hostname.exe: a real
# Windows program that is not Python or nvcc (there is none under Wine), so
# discovery is what is checked; probing an interpreter needs a real
# python.exe, and each reports "cannot probe" here.
# Usage: tests/windows/wine_layouts.sh TORCHFIX_EXE. Exits 1 at the first
# failed check, naming it; 2 on wrong usage, or without wine64 or zig
# (`python3 -m ziglang`, as .ci/package installs it).
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: tests/windows/wine_layouts.sh TORCHFIX_EXE" >&2; exit 2; }
exe=$1
here=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/lib/wine
command -v wine64 >/dev/null || { echo "wine_layouts: wine64 not installed (apt-get install wine64)" >&2; exit 2; }
python3 -c 'import ziglang' 2>/dev/null || { echo "wine_layouts: zig not found (pip install ziglang)" >&2; exit 2; }
export WINEDEBUG=-all
tmp=$(mktemp -d)
python3 -m ziglang cc -target x86_64-windows-gnu "$here/print_file.c" -o "$tmp/print_file.exe" ||
  { echo "wine_layouts: cannot build print_file.exe with zig cc" >&2; exit 1; }
export WINEPREFIX=$tmp/wine
fail() { echo "wine_layouts: $*" >&2; echo "wine_layouts: kept $tmp" >&2; exit 1; }
wine64 cmd /c exit 0 >/dev/null 2>&1  # creates the prefix
c=$WINEPREFIX/drive_c
user=${USER:-$(id -un)}  # Wine names the Windows user after the Unix one
stand_in=$c/windows/system32/hostname.exe
[[ -f $stand_in ]] || fail "no $stand_in in the new prefix"
put() { mkdir -p "$(dirname "$1")" && cp "$stand_in" "$1"; }

put "$c/venvs/sd/Scripts/python.exe"
printf 'home = C:\\Py312\nversion = 3.12.7\n' >"$c/venvs/sd/pyvenv.cfg"
put "$c/users/$user/AppData/Local/Microsoft/WindowsApps/python.exe"
put "$c/tools/py/python.exe"
put "$c/Py312/python.exe"
wine64 reg add 'HKCU\Software\Python\PythonCore\3.12\InstallPath' /ve /d 'C:\Py312' /f >/dev/null 2>&1 ||
  fail "reg add failed"
put "$c/ComfyUI_windows_portable/python_embeded/python.exe"
put "$c/Py313/python.exe"
mkdir -p "$c/tools/launcher"
printf '@echo off\r\necho  -V:3.13 *        C:\\Py313\\python.exe\r\necho  -V:3.12          C:\\Py312\\python.exe\r\n' \
  >"$c/tools/launcher/py.bat"
put "$c/cuda/v12.4/bin/nvcc.exe"
put "$c/cuda/v12.10/bin/nvcc.exe"
put "$c/Program Files/NVIDIA GPU Computing Toolkit/CUDA/v11.8/bin/nvcc.exe"
installer="$c/Program Files (x86)/Microsoft Visual Studio/Installer"
mkdir -p "$installer"
cp "$tmp/print_file.exe" "$installer/vswhere.exe"
cp "$here/../fixtures/windows/vswhere-vs2022-17.5.json" "$installer/vswhere.json"
vs="$c/Program Files/Microsoft Visual Studio/2022/Community/VC"
mkdir -p "$vs/Auxiliary/Build"
printf '14.35.32215\r\n' >"$vs/Auxiliary/Build/Microsoft.VCToolsVersion.default.txt"
put "$vs/Tools/MSVC/14.35.32215/bin/Hostx64/x64/cl.exe"

run_doctor() {
  local rc=0
  env VIRTUAL_ENV='C:\venvs\sd' CUDA_HOME=/usr/local/cuda CUDA_PATH_V12_4='C:\cuda\v12.4' \
    CUDA_PATH_V12_10='C:\cuda\v12.10' WINEPATH="C:\\users\\$user\\AppData\\Local\\Microsoft\\WindowsApps;C:\\tools\\py;C:\\tools\\launcher" \
    wine64 "$exe" doctor --json "$@" >"$tmp/doctor.json" 2>"$tmp/doctor.err" || rc=$?
  ((rc <= 1)) || fail "doctor --json $* exited $rc: $(cat "$tmp/doctor.err")"
}

run_doctor
python3 - "$tmp/doctor.json" <<'PY' || fail "discovery (above)"
import json, sys
s = json.load(open(sys.argv[1]))["snapshot"]
pythons = [(p["interpreter"], p["origin"]) for p in s["pythons"]]
toolkits = [(t["nvcc"], t["origin"]) for t in s["toolkits"]]
print("pythons:", pythons)
print("toolkits:", toolkits)
compilers = [(c["path"], c["origin"], c["family"], c["version"]) for c in s["compilers"]]
print("compilers:", compilers)
print("notes:", [n["message"] for n in s["notes"] if n["probe"] in ("nvml", "cuda", "nvidia-smi", "driver", "vswhere")])
want_compilers = [("C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.35.32215\\bin"
                   "\\Hostx64\\x64\\cl.exe", "vswhere", "msvc", "19.35.32215")]
assert compilers == want_compilers, "compilers: want %r" % want_compilers
assert not [n for n in s["notes"] if n["probe"] == "vswhere"], "vswhere notes"
want_pythons = [("C:\\venvs\\sd\\Scripts\\python.exe", "VIRTUAL_ENV"), ("C:\\tools\\py\\python.exe", "PATH"),
                ("C:\\Py312\\python.exe", "registry (HKCU\\PythonCore\\3.12)"), ("C:\\Py313\\python.exe", "py -0p")]
assert pythons == want_pythons, "pythons: want %r" % want_pythons
want_toolkits = [("C:\\cuda\\v12.10\\bin\\nvcc.exe", "CUDA_PATH_V12_10"), ("C:\\cuda\\v12.4\\bin\\nvcc.exe", "CUDA_PATH_V12_4"),
                 ("C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.8\\bin\\nvcc.exe",
                  "%ProgramW6432%\\NVIDIA GPU Computing Toolkit")]
assert toolkits == want_toolkits, "toolkits: want %r" % want_toolkits
assert all(p["status"] == "not_runnable" for p in s["pythons"]), "a stand-in python.exe was judged runnable"
assert not s["gpus"], "GPUs found under Wine"
text = json.dumps(s["pythons"]) + json.dumps(s["toolkits"]) + json.dumps(s["notes"]) + json.dumps(s["compilers"])
for linux in ("/usr/", "/proc/", "/sys/", ".so.1", "Invalid handle"):
    assert linux not in text, "Linux-shaped text %r in the probes' answers" % linux
PY

# A --python that does not probe is bad input (exit 2, one line): here the
# line names the python.exe found inside the portable folder.
rc=0
wine64 "$exe" doctor --python 'C:\ComfyUI_windows_portable' >/dev/null 2>"$tmp/portable.err" || rc=$?
cat "$tmp/portable.err"
((rc == 2)) || fail "--python FOLDER: exit $rc, want 2 (a stand-in python.exe does not probe)"
grep -qF 'C:\ComfyUI_windows_portable\python_embeded\python.exe' "$tmp/portable.err" ||
  fail "--python FOLDER: python_embeded\\python.exe not found inside it"
rm -rf "$tmp"
echo "wine_layouts: all checks passed"
