#!/usr/bin/env bash
# On the lent GPU machine: `torchfix tune --model resnet50` beside a
# hand-written loop (bench/tune_model_hand.py) in the same call, so the two
# can be compared (docs/tune.md; issue: within 15%).
# Usage: bench/gpu-tune-model.sh TORCHFIX OUT_DIR   (python3 = the torch to measure)
set -euo pipefail
tf=${1:?usage: gpu-tune-model.sh TORCHFIX OUT_DIR}
out=${2:?usage: gpu-tune-model.sh TORCHFIX OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$tf" tune --model resnet50 --json >"$out/tune-model-resnet50.json" || echo "tune exit $?"
"$tf" tune --model resnet50 --no-batch-search >"$out/tune-model-resnet50.txt" 2>&1 || echo "tune exit $?"
python3 "$here/tune_model_hand.py" 128 >"$out/hand-loop.json"
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
tune = json.load(open(d + "/tune-model-resnet50.json"))
hand = json.load(open(d + "/hand-loop.json"))
runs = [r for r in tune["gpus"][0]["model"]["runs"] if r["kind"] in ("baseline", "cumulative")]
names = ["defaults", "cudnn_benchmark", "tf32", "channels_last", "bf16"]
lines = ["| settings (cumulative) | tune images/s | hand loop images/s | tune / hand |", "|---|---|---|---|"]
for name, run in zip(names, runs):
    t, h = run["per_s"], hand[name]
    lines.append("| %s | %.0f | %.0f | %.3f |" % (name, t, h, t / h))
open(d + "/compare.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
