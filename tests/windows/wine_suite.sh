#!/usr/bin/env bash
# Runs the test suite of a Windows build tree (cmake/zig-x86_64-windows.cmake
# with -DTORCHFIX_TESTS=ON -DCMAKE_CROSSCOMPILING_EMULATOR=/usr/lib/wine/wine64)
# under Wine: ctest, one test per binary (tests/CMakeLists.txt), then a count
# from GoogleTest's XML reports: passed, skipped, and among the skipped the
# Linux-only ones (tests/support/linux_only.hpp), plus the Linux-only tests
# not compiled for Windows at all.
# Builds nothing: .ci/package builds the tree. Exits non-zero when a test
# fails (ctest's exit status), naming the failures.
# Usage: tests/windows/wine_suite.sh BUILD_DIR [JOBS]
set -euo pipefail
if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: tests/windows/wine_suite.sh BUILD_DIR [JOBS]" >&2
  exit 2
fi
tree=$(cd "$1" && pwd) jobs=${2:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
# Debian's wine64 package puts its loader in /usr/lib/wine, not on PATH.
PATH=$PATH:/usr/lib/wine
command -v wine64 >/dev/null || { echo "wine_suite: wine64 not installed (apt-get install wine64)" >&2; exit 2; }
export WINEDEBUG=-all
# A prefix of its own, so that no user's Wine settings change what runs.
tmp=$(mktemp -d)
export WINEPREFIX=$tmp/wine
reports=$tmp/reports
mkdir -p "$reports"
# GoogleTest writes BINARY.xml into this folder (Z: is Wine's drive for /).
export GTEST_OUTPUT="xml:Z:${reports//\//\\}\\"
# One wineserver for the whole run (persistent: each binary's start then
# skips starting one), and the prefix made once, before the binaries race for it.
mkdir -p "$WINEPREFIX"
wineserver -p
trap 'wineserver -k 2>/dev/null || true; rm -rf "$tmp"' EXIT
wine64 cmd /c exit 0

rc=0
ctest --test-dir "$tree" -j "$jobs" --output-on-failure || rc=$?

python3 - "$reports" "$root/tests" <<'EOF'
import pathlib, re, sys
import xml.etree.ElementTree as ET
reports, tests = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
counts = {"passed": 0, "skipped": 0, "linux_only": 0, "failed": 0}
failed = []
for report in sorted(reports.glob("*.xml")):
    for case in ET.parse(report).iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        skipped = case.find("skipped")
        if case.find("failure") is not None:
            counts["failed"] += 1
            failed.append(name)
        elif skipped is not None or case.get("result") == "skipped":
            counts["skipped"] += 1
            text = (skipped.get("message", "") + (skipped.text or "")) if skipped is not None else ""
            counts["linux_only"] += "Linux-only: " in text
        else:
            counts["passed"] += 1
marked = sum(len(re.findall(r'TORCHFIX_LINUX_ONLY\("', p.read_text())) for p in tests.rglob("*.cpp"))
total = counts["passed"] + counts["skipped"] + counts["failed"]
print(f"wine_suite: {total} tests under Wine: {counts['passed']} passed, "
      f"{counts['skipped']} skipped ({counts['linux_only']} of them Linux-only), {counts['failed']} failed; "
      f"{marked} tests are marked Linux-only in tests/ ({marked - counts['linux_only']} of them not compiled for Windows)")
for name in failed:
    print(f"wine_suite: failed: {name}")
EOF
exit "$rc"
