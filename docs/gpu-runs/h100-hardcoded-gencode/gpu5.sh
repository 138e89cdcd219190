#!/bin/bash
# Session 20: an extension whose setup.py hard-codes -gencode for sm_80
# (cpp_extension then ignores TORCH_CUDA_ARCH_LIST), installed editable into
# the image's torch venv; the doctor's Run first line run exactly as printed;
# then `torchfix build --src` of a fresh copy (torchfix stands in for nvcc).
set -u
exec > >(tee "$OUT/gpu5.txt") 2>&1
T=$PWD/.gpu-carry/torchfix
PY=$(python3 -c 'import sys; print(sys.executable)')
$T --version; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-}"
op() { (cd / && "$PY" -c 'import torch, gencext; print(gencext.add_one(torch.zeros(4, device="cuda")))' 2>&1 | tail -1); }
rm -rf /tmp/gencext; cp -r .gpu-carry/gencext /tmp/gencext
echo "== break: \$ cd /tmp/gencext && $PY -m pip install --no-build-isolation --no-deps -e ."
s=$(date +%s); (cd /tmp/gencext && MAX_JOBS=16 "$PY" -m pip install -q --no-build-isolation --no-deps -e .) || exit 1
echo "(built in $(( $(date +%s) - s )) s)"; op
$T inspect /tmp/gencext/gencext/_C*.so
echo "== \$ torchfix doctor --python $PY"
$T doctor --python "$PY" > $OUT/before.txt 2>&1; echo "rc=$?"; cat $OUT/before.txt
fix=$(grep '^Run first: ' $OUT/before.txt | sed 's/^Run first: //')
[ -n "$fix" ] || { echo "no Run first"; exit 1; }
echo "== the Run first line, run exactly as printed"; echo "\$ $fix"
s=$(date +%s); bash -c "$fix" > $OUT/fix-log.txt 2>&1; echo "(rc=$?, $(( $(date +%s) - s )) s)"; tail -2 $OUT/fix-log.txt
op
$T inspect /tmp/gencext/gencext/_C*.so
echo "== \$ torchfix doctor --run --python $PY"
$T doctor --run --python "$PY" > $OUT/after.txt 2>&1; echo "rc=$?"; cat $OUT/after.txt
echo "== \$ torchfix build --src /tmp/gencext2 --arch auto --python $PY (fresh copy, not installed)"
rm -rf /tmp/gencext2 /tmp/tfb; cp -r .gpu-carry/gencext /tmp/gencext2
s=$(date +%s); $T build --src /tmp/gencext2 --arch auto --python "$PY" --work-dir /tmp/tfb > $OUT/build.txt 2>&1; echo "rc=$? ($(( $(date +%s) - s )) s)"; tail -25 $OUT/build.txt
grep -rh 'torchfix nvcc:' /tmp/tfb 2>/dev/null | head -3
for w in $(find /tmp/tfb -name 'gencext*.whl'); do $T inspect "$w"; done
