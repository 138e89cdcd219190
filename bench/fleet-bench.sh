#!/usr/bin/env bash
# Times `torchfix fleet --snapshots` on 10,000 generated node snapshots
# (bench/fleet_snapshots.py from the H200 fixture, 43 KB each with its kernel
# scan): wall time, CPU time and peak memory (rusage), for nodes of 8 kinds as a real
# cluster has them, and for 10,000 all-different files (the worst case).
# Usage: bench/fleet-bench.sh [TORCHFIX] [N]; numbers go to docs/fleet.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
torchfix=${1:-$root/build/torchfix}
n=${2:-10000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
template=$root/tests/fixtures/snapshots/h200-torch211-cu130.json
python3 "$root/bench/fleet_snapshots.py" "$template" "$work/kinds" "$n"
python3 "$root/bench/fleet_snapshots.py" "$template" "$work/distinct" "$n" --distinct
echo "snapshots: $n, $(du -sh "$work/kinds" | cut -f1) per set; $(nproc) CPUs"
for set in kinds distinct; do
  # Warm the page cache once, then measure.
  cat "$work/$set"/*.json >/dev/null
  # Python's rusage, not GNU time: the GPU machine has no /usr/bin/time.
  python3 - "$set" "$torchfix" fleet --snapshots "$work/$set" --json <<'PY'
import resource, subprocess, sys, time
start = time.monotonic()
rc = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL).returncode
wall = time.monotonic() - start
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{sys.argv[1]}: {wall:.2f} s wall, {u.ru_utime:.2f} s user + {u.ru_stime:.2f} s sys, "
      f"{u.ru_maxrss / 1024:.1f} MB peak RSS, exit {rc}")
PY
done
