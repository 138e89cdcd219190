#!/usr/bin/env bash
# Unzips torchfix-VERSION-windows-x86_64.zip (what .ci/package makes for
# users without pip) and runs its torchfix.exe under Wine: the archive holds
# one folder with torchfix.exe, README.md and LICENSE and nothing else; with
# no share\torchfix beside it the exe reads the tables embedded in it
# (--version says so), and doctor --json and `recipes` run from them.
# Usage: tests/windows/wine_zip.sh ZIP. Exits 1 at the first failed check,
# naming it; 2 on wrong usage or no wine64.
set -euo pipefail
[[ $# -eq 1 ]] || { echo "usage: tests/windows/wine_zip.sh ZIP" >&2; exit 2; }
zip=$1
PATH=$PATH:/usr/lib/wine
command -v wine64 >/dev/null || { echo "wine_zip: wine64 not installed (apt-get install wine64)" >&2; exit 2; }
export WINEDEBUG=-all
tmp=$(mktemp -d)
export WINEPREFIX=$tmp/wine
fail() { echo "wine_zip: $*" >&2; echo "wine_zip: kept $tmp" >&2; exit 1; }
name=$(basename "$zip" .zip)
python3 -m zipfile -e "$zip" "$tmp/unzipped"
listing=$(cd "$tmp/unzipped" && find . -type f | sort | tr '\n' ' ')
[[ $listing == "./$name/LICENSE ./$name/README.md ./$name/torchfix.exe " ]] ||
  fail "$zip holds $listing, not $name/ with torchfix.exe, README.md and LICENSE"
exe=$tmp/unzipped/$name/torchfix.exe
wine64 "$exe" --version | tr -d '\r' >"$tmp/version.txt" || fail "--version exited $?"
cat "$tmp/version.txt"
grep -q '^torchfix .*(torchfix-gpu' "$tmp/version.txt" || fail "--version: no 'torchfix ... (torchfix-gpu' line"
grep -q '^tables embedded in the binary, of ' "$tmp/version.txt" || fail "--version: the tables are not the embedded ones"
rc=0
wine64 "$exe" doctor --json >"$tmp/doctor.json" || rc=$?
((rc <= 1)) || fail "doctor --json exited $rc"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/doctor.json" || fail "doctor --json: not JSON"
wine64 "$exe" recipes | tr -d '\r' >"$tmp/recipes.txt" || fail "recipes exited $?"
[[ -s $tmp/recipes.txt ]] || fail "recipes printed nothing"
head -n 3 "$tmp/recipes.txt"
wineserver -k 2>/dev/null || true  # before its prefix goes, so it saves nothing there
rm -rf "$tmp"
echo "wine_zip: all checks passed"
