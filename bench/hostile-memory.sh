#!/usr/bin/env bash
# Peak memory of torchfix on the inputs of the second reliability audit's
# memory table (../shared/reviews/reliability-2026-12-01-t3.md §4; goal:
# < 512 MB each). Prints one row per input: label, exit code, wall time,
# peak RSS (GNU time's "Maximum resident set size" of torchfix itself;
# these runs start no probe, so no child is larger). Results:
# docs/hostile-inputs.md "Peak memory on the audit's inputs".
#
# Usage: bench/hostile-memory.sh TORCHFIX [WORK]   (a Release build; WORK is
# a scratch folder, default a fresh mktemp -d, removed at the end)
set -u
T=$(realpath "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
work=${2:-$(mktemp -d)}
keep=${2:+1}
mkdir -p "$work" && cd "$work" || exit 1
S=$root/tests/fixtures/snapshots/h200-torch211-cu130.json
F1=$root/tests/fixtures/snapshots/F1-rtx5090d-torch26-cu126.json

python3 - "$F1" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
def save(name, j):
    with open(name, "w") as f:
        json.dump(j, f)
j = dict(b); j["gpus"] = [dict(b["gpus"][0], index=i) for i in range(160_000)]; save("gpus-160k.json", j)
j = dict(b); j["gpus"] = [dict(b["gpus"][0], index=i) for i in range(1_000_000)]; save("gpus-1m.json", j)
k = dict(b["pythons"][0]); k["kernels"] = [{"path": "/l%d.so" % i, "groups": []} for i in range(1_000_000)]
j = dict(b); j["pythons"] = [k]; save("kernels-1m.json", j)
j = dict(b); j["gpus"] = [dict(b["gpus"][0], name="A" * 200_000_000)]; save("name-200m.json", j)
j = dict(b); j["pythons"] = [dict(b["pythons"][0], distributions={"d%d" % i: "1.0" for i in range(1_000_000)})]
save("dists-1m.json", j)
PY
python3 -c "open('nest-10m.json','w').write('['*10_000_000)"
python3 -c "open('nest-200m.json','w').write('['*200_000_000)"
truncate -s 4G sparse-4g.json
mkdir -p bigdir && for i in 1 2 3 4; do truncate -s 1G bigdir/n$i.json; done && cp "$F1" bigdir/good.json
mkdir -p dd && cp -r "$root/recipes" "$root/templates" dd/ && rm dd/recipes/gpus.toml && ln -s /dev/zero dd/recipes/gpus.toml
mkdir -p ds && cp -r "$root/recipes" "$root/templates" ds/ &&
  python3 -c "open('ds/recipes/gpus.toml','a').write('\nbig = \"'+'A'*300_000_000+'\"\n')"
mkdir -p flood && printf '#!/bin/sh\necho "gpu01|idle"\n' >flood/sinfo &&
  printf '#!/bin/sh\nwhile :; do echo "0: x"; done\n' >flood/srun && chmod +x flood/sinfo flood/srun
mkdir -p floodnl && cp flood/sinfo floodnl/ && printf '#!/bin/sh\nyes ""\n' >floodnl/srun && chmod +x floodnl/srun

row() {  # label, command...
  local label=$1
  shift
  local start end rc
  start=$(date +%s.%N)
  /usr/bin/time -f %M -o "$label.rss" timeout -k 5 120 "$@" >/dev/null 2>"$label.err"
  rc=$?
  end=$(date +%s.%N)
  printf '%-28s rc=%-3s %6.2f s %6d MB  %s\n' "$label" "$rc" "$(echo "$end - $start" | bc)" \
    "$(($(tail -1 "$label.rss") / 1024))" "$(head -c 110 "$label.err" | head -1)"
}
row gpus-160k "$T" doctor --snapshot gpus-160k.json
row gpus-1m-doctor "$T" doctor --snapshot gpus-1m.json
row gpus-1m-fleet "$T" fleet --snapshots gpus-1m.json
row kernels-1m-doctor "$T" doctor --snapshot kernels-1m.json
row kernels-1m-fleet "$T" fleet --snapshots kernels-1m.json
row name-200m-doctor "$T" doctor --snapshot name-200m.json
row name-200m-fleet "$T" fleet --snapshots name-200m.json
row dists-1m "$T" doctor --snapshot dists-1m.json
row nest-10m "$T" doctor --snapshot nest-10m.json
row nest-200m "$T" doctor --snapshot nest-200m.json
row sparse-4g-doctor "$T" doctor --snapshot sparse-4g.json
row sparse-4g-arch "$T" arch --snapshot sparse-4g.json
row sparse-4g-fleet "$T" fleet --snapshots sparse-4g.json
row bigdir-4x1g "$T" fleet --snapshots bigdir
row dev-zero "$T" doctor --snapshot /dev/zero
row data-dir-dev-zero env TORCHFIX_DATA_DIR="$work/dd" "$T" doctor --snapshot "$S"
row what-if-dev-zero env TORCHFIX_WHAT_IF=/dev/zero "$T" doctor --snapshot "$S"
row srun-flood env PATH="$work/flood:$PATH" "$T" fleet --slurm --time 1
row srun-empty-lines env PATH="$work/floodnl:$PATH" "$T" fleet --slurm --time 1
row toml-300m-string env TORCHFIX_DATA_DIR="$work/ds" "$T" doctor --snapshot "$S"
cd / && [[ -z $keep ]] && rm -rf "$work"
