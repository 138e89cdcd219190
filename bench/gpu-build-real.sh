#!/usr/bin/env bash
# Builds real CUDA projects with `torchfix build --src DIR --arch auto` on a
# GPU machine (no network: the trees are carried), uses each from Python on
# the GPU, reads its kernels back with `torchfix inspect`, and times the
# build: wall seconds and CPU seconds of the build and all its children
# (getrusage RUSAGE_CHILDREN; for one-process-per-file compiles the CPU time
# is what a build with one job would take). Appends a markdown table row per
# build to $OUT/table.md and keeps each build's output in $OUT/NAME.txt.
#
# Usage: bench/gpu-build-real.sh TORCHFIX SRC_ROOT PHASES
#   TORCHFIX  the torchfix binary (bench/gpu-pack.sh output)
#   SRC_ROOT  folder with causal-conv1d/, pytorch_scatter/, bitsandbytes/,
#             cuda-samples/ (git archive of each; see docs/gpu-runs/h200-build-real.md)
#   PHASES    comma list of: causal-conv1d, pytorch_scatter, bitsandbytes,
#             cuda-samples (--arch auto), cuda-samples-default (the project's
#             own CMAKE_CUDA_ARCHITECTURES, --keep-project-archs)
# Env: PYTHON (default /opt/torch/.venv/bin/python3), WORK (default
#      /tmp/torchfix-real), OUT (default $WORK/out).
set -uo pipefail
TF=$(readlink -f "${1:?usage: gpu-build-real.sh TORCHFIX SRC_ROOT PHASES}")
SRC=$(readlink -f "${2:?SRC_ROOT}")
PHASES=${3:?PHASES}
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
WORK=${WORK:-/tmp/torchfix-real}
OUT=${OUT:-$WORK/out}
mkdir -p "$WORK/trees" "$WORK/site" "$OUT"
has_phase() { [[ ",$PHASES," == *",$1,"* ]]; }

cat >"$WORK/timed.py" <<'PY'
import resource, subprocess, sys, time
start = time.time()
rc = subprocess.run(sys.argv[2:]).returncode
used = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write(f"{rc} {time.time() - start:.0f} {used.ru_utime + used.ru_stime:.0f}\n")
sys.exit(rc)
PY

# build NAME RECIPE LABEL [torchfix build options...]: one timed build of a fresh copy.
build() {
  local name=$1 recipe=$2 label=$3
  shift 3
  local tree="$WORK/trees/${name%%/*}-$label"
  rm -rf "$tree" && cp -r "$SRC/${name%%/*}" "$tree"
  local dir=$tree${name#"${name%%/*}"}
  echo "## $name $label: torchfix build $recipe --src $dir $*" | tee -a "$OUT/${name%%/*}.txt"
  "$PY" "$WORK/timed.py" "$WORK/t" "$TF" build $recipe --src "$dir" --work-dir "$WORK/w-$label" --python "$PY" "$@" \
    >>"$OUT/${name%%/*}.txt" 2>&1
  read -r rc wall cpu <"$WORK/t"
  echo "| $name | $label | $* | $rc | $wall | $cpu |" | tee -a "$OUT/table.md"
  BUILT=$dir
}

# use NAME PYTHON-CODE: runs the code on the GPU with the built package importable.
use() {
  echo "## $1 on the GPU" >>"$OUT/${1%%/*}.txt"
  if PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}" "$PY" -c "$2" >>"$OUT/${1%%/*}.txt" 2>&1; then
    echo "| $1 | used on the GPU | ok |" | tee -a "$OUT/table.md"
  else
    echo "| $1 | used on the GPU | FAILED |" | tee -a "$OUT/table.md"
  fi
}

inspect() {
  echo "## torchfix inspect $2" >>"$OUT/$1.txt"
  "$TF" inspect "$2" >>"$OUT/$1.txt" 2>&1
}

install_wheel() {
  "$PY" -m pip install -q --no-deps --no-index --target "$WORK/site" "$WORK"/w-auto/wheels/*/"$1"*.whl \
    >>"$OUT/$2.txt" 2>&1
}

[ -s "$OUT/table.md" ] || echo "| project | build | options | exit | wall s | CPU s |" >"$OUT/table.md"

if has_phase causal-conv1d; then
  build causal-conv1d causal-conv1d auto --arch auto
  install_wheel causal_conv1d causal-conv1d
  inspect causal-conv1d "$(ls "$WORK"/w-auto/wheels/*/causal_conv1d*.whl | head -1)"
  use causal-conv1d '
import torch, torch.nn.functional as F
from causal_conv1d import causal_conv1d_fn
x = torch.randn(2, 64, 256, device="cuda"); w = torch.randn(64, 4, device="cuda"); b = torch.randn(64, device="cuda")
out = causal_conv1d_fn(x, w, b)
ref = F.conv1d(F.pad(x, (3, 0)), w.unsqueeze(1), b, groups=64)
print("causal_conv1d_fn max error", (out - ref).abs().max().item()); assert torch.allclose(out, ref, atol=1e-3)'
fi

if has_phase pytorch_scatter; then
  build pytorch_scatter cuda-extension auto --arch auto
  install_wheel torch_scatter pytorch_scatter
  inspect pytorch_scatter "$(ls "$WORK"/w-auto/wheels/*/torch_scatter*.whl | head -1)"
  use pytorch_scatter '
import torch, torch_scatter
src = torch.randn(1000, 16, device="cuda"); index = torch.randint(0, 50, (1000,), device="cuda")
out = torch_scatter.scatter_add(src, index, dim=0, dim_size=50)
ref = torch.zeros(50, 16, device="cuda").index_add_(0, index, src)
print("scatter_add max error", (out - ref).abs().max().item()); assert torch.allclose(out, ref, atol=1e-4)
print("scatter_max", torch_scatter.scatter_max(src, index, dim=0)[0].shape)'
fi

if has_phase bitsandbytes; then
  build bitsandbytes bitsandbytes auto --arch auto
  inspect bitsandbytes "$(ls "$BUILT"/bitsandbytes/libbitsandbytes_cuda*.so | head -1)"
  cp -r "$BUILT/bitsandbytes" "$WORK/site/"
  use bitsandbytes '
import torch, bitsandbytes.functional as F
a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
q, state = F.quantize_4bit(a, quant_type="nf4")
back = F.dequantize_4bit(q, state)
print("nf4 round trip mean error", (a - back).abs().mean().item()); assert (a - back).abs().mean() < 0.2'
fi

if has_phase cuda-samples; then
  build cuda-samples/Samples/0_Introduction/matrixMul cuda-extension auto --arch auto
  inspect cuda-samples "$WORK"/w-auto/build-cuda-extension-matrixMul-*/matrixMul
  cp "$WORK"/w-auto/build-cuda-extension-matrixMul-*/matrixMul "$WORK/matrixMul-auto"
  use cuda-samples "
import subprocess
r = subprocess.run(['$WORK/matrixMul-auto'], capture_output=True, text=True)
print(r.stdout[-400:]); assert r.returncode == 0 and 'Result = PASS' in r.stdout"
fi

if has_phase cuda-samples-default; then
  build cuda-samples/Samples/0_Introduction/matrixMul cuda-extension default --arch auto --keep-project-archs
  inspect cuda-samples "$WORK"/w-default/build-cuda-extension-matrixMul-*/matrixMul
fi
cat "$OUT/table.md"
