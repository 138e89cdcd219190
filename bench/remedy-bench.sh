#!/usr/bin/env bash
# Time of the doctor on a large but legal snapshot (issue 20: "64
# environments and 64 GPUs in well under a second"): F1's first GPU copied
# 64 times and its first environment 64 times (each at its own path), so
# every environment gets its findings and remedies checked on every GPU.
# Prints the wall time of each of RUNS runs and the findings count.
#
# Usage: bench/remedy-bench.sh TORCHFIX [RUNS]   (results: docs/hostile-inputs.md)
set -u
T=$(realpath "$1")
runs=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$root/tests/fixtures/snapshots/F1-rtx5090d-torch26-cu126.json" "$work/s64.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
b["gpus"] = [dict(b["gpus"][0], index=i) for i in range(64)]
p = b["pythons"][0]
b["pythons"] = [dict(p, interpreter="/home/u/venv%d/bin/python" % i) for i in range(64)]
json.dump(b, open(sys.argv[2], "w"))
PY
echo "snapshot: $(wc -c <"$work/s64.json") bytes, 64 GPUs, 64 environments"
for i in $(seq "$runs"); do
  start=$(date +%s.%N)
  "$T" doctor --snapshot "$work/s64.json" --json >"$work/out.json" 2>/dev/null
  rc=$?
  end=$(date +%s.%N)
  printf 'run %d: rc=%d %.2f s, %s findings\n' "$i" "$rc" "$(echo "$end - $start" | bc)" \
    "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$work/out.json")"
done
