#!/usr/bin/env bash
# Measures the peak resident memory (maximum RSS: /usr/bin/time -v, else
# Python's getrusage of the child) and wall
# time of `torchfix inspect WHEEL` for each wheel given, and prints a
# markdown table with the wheel's size and its largest member.
#
# Usage: bench/wheel-memory.sh TORCHFIX WHEEL...
# Env: OUT (optional: the table is copied there).
set -uo pipefail

torchfix=$(readlink -f "${1:?usage: bench/wheel-memory.sh TORCHFIX WHEEL...}")
shift
[[ $# -gt 0 ]] || { echo "usage: bench/wheel-memory.sh TORCHFIX WHEEL..." >&2; exit 2; }

# Prints "peak_rss_MB wall_s exit" of `torchfix inspect WHEEL`: GNU time -v
# when installed, else Python's getrusage of its child (the same kernel counter).
measure() {
  if [[ -x /usr/bin/time ]]; then
    local log
    log=$(mktemp)
    /usr/bin/time -v "$torchfix" inspect "$1" >/dev/null 2>"$log"
    awk -F': ' '/Maximum resident set size/ {rss = $2 / 1024}
                /Elapsed \(wall clock\)/ {n = split($2, t, ":"); wall = (n == 3) ? t[1] * 3600 + t[2] * 60 + t[3] : t[1] * 60 + t[2]}
                /Exit status/ {rc = $2}
                END {printf "%.1f %.2f %s\n", rss, wall, rc}' "$log"
    rm -f "$log"
  else
    python3 - "$torchfix" "$1" <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
rc = subprocess.run([sys.argv[1], "inspect", sys.argv[2]], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.monotonic() - start
print("%.1f %.2f %d" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, wall, rc))
PY
  fi
}

table=$(mktemp)
echo "| wheel | wheel MB | largest member MB | peak RSS MB | wall s | exit |" >"$table"
echo "|---|---|---|---|---|---|" >>"$table"
for wheel in "$@"; do
  size=$(($(stat -c %s "$wheel") / 1000000))
  largest=$(python3 -c 'import sys, zipfile; print(max(i.file_size for i in zipfile.ZipFile(sys.argv[1]).infolist()) // 1000000)' "$wheel" 2>/dev/null || echo "?")
  read -r rss wall rc < <(measure "$wheel")
  echo "| $(basename "$wheel") | $size | $largest | $rss | $wall | $rc |" >>"$table"
done
cat "$table"
if [[ -n ${OUT:-} ]]; then cp "$table" "$OUT/wheel-memory.md"; fi
