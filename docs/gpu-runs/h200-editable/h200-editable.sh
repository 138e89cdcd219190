#!/usr/bin/env bash
# H200: an extension built for sm_80 only, installed editable, found by the
# doctor; (1) its printed fix run exactly as printed, (2) `torchfix fix --yes`
# on a second copy; doctor --run loads its kernels after each.
set -u
exec > >(tee "$OUT/h200-editable.txt") 2>&1
python3 -m venv /tmp/v && /tmp/v/bin/pip install -q --no-index .gpu-wheel/*.whl || exit 1
T=/tmp/v/bin/torchfix
SRC=$PWD/.gpu-src
$T --version
op() { "$1" -c 'import torch, toyext; print(toyext.add_one(torch.zeros(4, device="cuda")))' 2>&1 | tail -2; }
# break_env: toyext built for 8.0 only (no sm_90 SASS, no PTX), installed
# editable into the machine's torch environment.
PY=$(python3 -c 'import sys; print(sys.executable)')
cp -r "$SRC/toyext" /tmp/toyext
break_env() {
  echo "\$ cd /tmp/toyext && TORCH_CUDA_ARCH_LIST=8.0 $PY -m pip install --no-build-isolation --no-deps -e ."
  local start=$(date +%s)
  (cd /tmp/toyext && TORCH_CUDA_ARCH_LIST=8.0 MAX_JOBS=16 $PY -m pip install -q --no-build-isolation --no-deps -e .) || exit 1
  echo "(built in $(( $(date +%s) - start )) s)"
  echo '$ python -c "import torch, toyext; toyext.add_one(torch.zeros(4, device=\"cuda\"))"'
  op $PY
}
break_env
echo "\$ torchfix doctor --python $PY"
$T doctor --python $PY; echo "rc=$?"
$T doctor --python $PY --json > "$OUT/doctor-before.json"; echo "json rc=$?"
fix=$(python3 "$SRC/first_fix.py" "$OUT/doctor-before.json" toyext)
[ -n "$fix" ] || { echo "no fix printed for toyext"; exit 1; }
echo "== (1) the printed fix, run exactly as printed"
echo "\$ $fix"
start=$(date +%s)
bash -c "$fix" 2>&1 | tail -3
echo "(rc=${PIPESTATUS[0]}, $(( $(date +%s) - start )) s)"
op $PY
$T inspect /tmp/toyext/toyext/_C*.so
echo "\$ torchfix doctor --run --python $PY"
$T doctor --run --python $PY; echo "rc=$?"
echo "== (2) broken again, then torchfix fix --yes"
break_env
echo "\$ torchfix fix --yes --python $PY"
start=$(date +%s)
$T fix --yes --python $PY; echo "rc=$? ($(( $(date +%s) - start )) s)"
op $PY
