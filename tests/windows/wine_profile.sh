#!/usr/bin/env bash
# Checks `torchfix env --install --shell powershell` on the PowerShell
# profile for real under Wine (Debian's wine64), in a fresh prefix whose
# HOME is a temporary folder (Wine may link the Documents folder to $HOME):
#  - started by pwsh.exe, the block goes into the profile PowerShell 7 reads,
#    <Documents>\PowerShell\Microsoft.PowerShell_profile.ps1, the Documents
#    folder being the one SHGetKnownFolderPath(FOLDERID_Documents) names;
#    started by powershell.exe, into <Documents>\WindowsPowerShell\ (5.1);
#  - an existing profile (CRLF lines, no final newline, non-ASCII text) gets
#    the block with CRLF line ends, a backup of its old bytes, and a lock
#    file beside it; a second install writes nothing and leaves the file
#    byte-identical; uninstall gives back the original bytes exactly;
#  - a hard-linked profile is edited in place, so both names see the block;
#  - a profile that did not exist (folder included) is created, and
#    uninstall leaves it without the block;
#  - started by cmd.exe, --install without --rc is refused in one line (exit 2).
# There is no PowerShell under Wine: pwsh.exe and powershell.exe are copies
# of tests/windows/shell_host.c (built here with zig cc), which runs its
# command line as a child; torchfix reads its parent's image name from a
# Toolhelp32 snapshot. The cmd.exe case runs under Wine's own cmd.exe.
# Usage: tests/windows/wine_profile.sh TORCHFIX_EXE. Exits 1 at the first
# failed check, naming it; 2 on wrong usage, or without wine64 or zig
# (`python3 -m ziglang`, as .ci/package installs it).
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: tests/windows/wine_profile.sh TORCHFIX_EXE" >&2; exit 2; }
exe=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
PATH=$PATH:/usr/lib/wine
command -v wine64 >/dev/null || { echo "wine_profile: wine64 not installed (apt-get install wine64)" >&2; exit 2; }
python3 -c 'import ziglang' 2>/dev/null || { echo "wine_profile: zig not found (pip install ziglang)" >&2; exit 2; }
export WINEDEBUG=-all
tmp=$(mktemp -d)
fail() { echo "wine_profile: $*" >&2; echo "wine_profile: kept $tmp" >&2; exit 1; }
# Before HOME moves: zig's cache (under HOME unless ZIG_GLOBAL_CACHE_DIR)
# already holds the MinGW runtime the Windows build made; a fresh one takes
# a minute and a half.
python3 -m ziglang cc -target x86_64-windows-gnu "$here/shell_host.c" -o "$tmp/shell_host.exe" ||
  fail "cannot build shell_host.exe with zig cc"
export WINEPREFIX=$tmp/wine HOME=$tmp/home
mkdir -p "$HOME"
winpath() { local p=${1//\//\\}; echo "Z:$p"; }
wine64 cmd /c exit 0 >/dev/null 2>&1  # creates the prefix
c=$WINEPREFIX/drive_c
for host in pwsh powershell; do
  mkdir -p "$c/shells/$host" && cp "$tmp/shell_host.exe" "$c/shells/$host/$host.exe"
done
# Runs torchfix env ARGS... as a child of the shell $1 (pwsh, powershell or
# cmd); stdout to $tmp/out.txt (LF), exit code to $rc.
from() {
  local host=$1 run=()
  shift
  if [[ $host == cmd ]]; then
    run=('C:\windows\system32\cmd.exe' /c)
  else
    run=("C:\\shells\\$host\\$host.exe")
  fi
  rc=0
  wine64 "${run[@]}" "$(winpath "$exe")" env "$@" >"$tmp/out.raw" 2>"$tmp/err.raw" || rc=$?
  tr -d '\r' <"$tmp/out.raw" >"$tmp/out.txt"
  tr -d '\r' <"$tmp/err.raw" >"$tmp/err.txt"
}
# Runs `from` and fails unless torchfix exited 0.
from_ok() { from "$@"; ((rc == 0)) || fail "env ${*:2} from $1.exe exited $rc: $(cat "$tmp/err.txt")"; }
# The Unix path of the Windows path $1 (Wine's own answer, links followed).
unix_of() { wine64 winepath.exe -u "$1" 2>/dev/null | tr -d '\r'; }

documents=$(wine64 cmd /c echo '%USERPROFILE%' | tr -d '\r')\\Documents
docs_unix=$(readlink -f "$(unix_of "$documents")")
[[ -d $docs_unix ]] || fail "no Documents folder at $documents ($docs_unix)"
case $docs_unix in "$tmp"/*) ;; *) fail "Documents is $docs_unix, outside the test's folder: refusing to write there" ;; esac

# PowerShell 7, an existing profile with CRLF lines, no final newline, non-ASCII.
profile=$docs_unix/PowerShell/Microsoft.PowerShell_profile.ps1
mkdir -p "$(dirname "$profile")"
printf 'Set-Alias ll Get-ChildItem\r\n# caf\xc3\xa9 \xe2\x80\x94 mine\r\n$env:EDITOR = '"'"'code'"'"'' >"$profile"
cp "$profile" "$tmp/original.ps1"
from_ok pwsh --install --shell powershell
cat "$tmp/out.txt"
grep -qF 'PowerShell\Microsoft.PowerShell_profile.ps1' "$tmp/out.txt" || fail "install did not name the PowerShell 7 profile"
grep -q '^open a new PowerShell, or run: \. ' "$tmp/out.txt" || fail "no dot-source hint after the install"
grep -qa $'^# >>> torchfix >>>\r$' "$profile" || fail "no CRLF begin marker in $profile"
grep -qa "^\\\$env:MAX_JOBS = '[0-9]*'"$'\r$' "$profile" || fail "no \$env:MAX_JOBS line in $profile"
head -c "$(stat -c %s "$tmp/original.ps1")" "$profile" | cmp -s - "$tmp/original.ps1" ||
  fail "the lines before the block changed"
cmp -s "$profile.torchfix-backup" "$tmp/original.ps1" || fail "the backup is not the original profile"
[[ -f $(dirname "$profile")/.Microsoft.PowerShell_profile.ps1.torchfix-lock ]] || fail "no lock file beside the profile"
cp "$profile" "$tmp/installed.ps1"
from_ok pwsh --install --shell powershell
grep -q 'already up to date; nothing written' "$tmp/out.txt" || fail "second install: $(cat "$tmp/out.txt")"
cmp -s "$profile" "$tmp/installed.ps1" || fail "a second install changed the profile"
from_ok pwsh --uninstall --shell powershell
cat "$tmp/out.txt"
cmp "$profile" "$tmp/original.ps1" || fail "uninstall did not restore the profile byte for byte"

# A profile with a second name (a hard link) is edited in place: both names
# see the block, and uninstall gives the original bytes back to both.
ln "$profile" "$tmp/second-name.ps1"
from_ok pwsh --install --shell powershell
grep -q 'it has 2 hard links, so it was edited in place' "$tmp/out.txt" || fail "hard link: $(cat "$tmp/out.txt")"
grep -qa '^# >>> torchfix >>>' "$tmp/second-name.ps1" || fail "the profile's second name does not see the block"
from_ok pwsh --uninstall --shell powershell
cmp -s "$tmp/second-name.ps1" "$tmp/original.ps1" && cmp -s "$profile" "$tmp/original.ps1" ||
  fail "uninstall did not restore both names of the hard-linked profile"
rm "$tmp/second-name.ps1"

# Windows PowerShell 5.1, no profile and no folder yet.
profile51=$docs_unix/WindowsPowerShell/Microsoft.PowerShell_profile.ps1
from_ok powershell --install --shell powershell
[[ -f $profile51 ]] || fail "no $profile51 after an install from powershell.exe"
grep -qa '^# >>> torchfix >>>' "$profile51" || fail "no block in $profile51"
from_ok powershell --uninstall --shell powershell
! grep -qa 'torchfix' "$profile51" || fail "the block is still in $profile51"

# cmd.exe reads no profile and is no PowerShell: refused in one line.
from cmd --install --shell powershell
((rc == 2)) || fail "install from cmd.exe exited $rc, want 2"
cat "$tmp/err.txt"
grep -q "started by 'cmd.exe'.*pass --rc \$PROFILE" "$tmp/err.txt" || fail "install from cmd.exe: $(cat "$tmp/err.txt")"

# --shell auto (the default) follows the shell that started torchfix: set
# lines from cmd.exe, $env: lines from pwsh.exe (SHELL, which Wine would
# pass on from Linux, emptied as on Windows).
SHELL= from_ok cmd --for all
head -n 4 "$tmp/out.txt"
grep -q '^set "MAX_JOBS=[0-9]*"$' "$tmp/out.txt" || fail "env from cmd.exe wrote no set line: $(head -n 5 "$tmp/out.txt")"
! grep -q '^\$env:' "$tmp/out.txt" || fail "env from cmd.exe wrote PowerShell lines"
SHELL= from_ok pwsh --for all
grep -q "^\\\$env:MAX_JOBS = '[0-9]*'$" "$tmp/out.txt" || fail "env from pwsh.exe wrote no \$env: line: $(head -n 5 "$tmp/out.txt")"
wineserver -k 2>/dev/null || true
rm -rf "$tmp"
echo "wine_profile: all checks passed"
