#!/usr/bin/env bash
# Builds the torch CUDA extension in bench/ext through `torchfix build` on a
# GPU machine, checks that it loads and runs on every GPU, and times builds:
# arch list (--arch auto vs the installed torch wheel's own list vs CMake's
# "Common" for this CUDA) and jobs (planner vs nproc vs 1). Prints a markdown
# table; with $OUT set, copies the table, plans and logs there.
#
# Usage: bench/gpu-build.sh TORCHFIX [PHASES]
#   TORCHFIX  the torchfix binary (its recipes/ folder next to it, or TORCHFIX_DATA_DIR)
#   PHASES    comma list of: plan,auto,check,wheel,common,nproc,one   (default: all of them)
#             A full run takes several minutes on 16 cores; split it across
#             calls if one call is limited (e.g. "plan,auto,check,wheel" then "common,nproc,one").
# Env: PYTHON (default /opt/torch/.venv/bin/python3), KERNEL_FILES (default 8 .cu files),
#      WORK (default a new folder under /tmp), OUT (optional results folder).
set -uo pipefail

TORCHFIX=$(readlink -f "${1:?usage: bench/gpu-build.sh TORCHFIX [PHASES]}")
PHASES=${2:-plan,auto,check,wheel,common,nproc,one}
PYTHON=${PYTHON:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-$(mktemp -d /tmp/torchfix-bench.XXXXXX)}
export KERNEL_FILES=${KERNEL_FILES:-8}
mkdir -p "$WORK"
TABLE="$WORK/table.md"

has_phase() { [[ ",$PHASES," == *",$1,"* ]]; }
note() { echo "# $*" >&2; }

# Facts about the machine, in the table's header.
machine_facts() {
  echo "- host: $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM"
  echo "- torch: $("$PYTHON" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)' 2>&1 | tail -1)"
  echo "- nvcc: $(nvcc --version 2>/dev/null | tail -1 || /usr/local/cuda/bin/nvcc --version | tail -1)"
  echo "- GPUs: $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader 2>/dev/null | sort | uniq -c | tr '\n' ';')"
  echo "- ninja for cpp_extension: $("$PYTHON" -c 'from torch.utils.cpp_extension import is_ninja_available as f; print(f())' 2>&1 | tail -1)"
  echo "- setuptools: $("$PYTHON" -c 'import setuptools; print(setuptools.__version__)' 2>&1 | tail -1)"
  echo "- kernel files: $KERNEL_FILES generated .cu (4 dtypes each) + 1 binding .cpp"
}

# The installed torch's own arch list, in TORCH_CUDA_ARCH_LIST form: what
# install guides tell users to export (sm_90 -> 9.0, compute_120 -> 12.0+PTX).
wheel_arch_list() {
  "$PYTHON" - <<'PY'
import torch
flags = torch._C._cuda_getArchFlags().split()
sass = sorted({f[3:] for f in flags if f.startswith("sm_")}, key=lambda s: int(s.rstrip("af")))
ptx = {f[8:] for f in flags if f.startswith("compute_")}
out = []
for s in sass:
    n = s.rstrip("af")
    entry = f"{int(n) // 10}.{int(n) % 10}" + s[len(n):]
    out.append(entry + ("+PTX" if s in ptx else ""))
print(";".join(out))
PY
}

# CMake's "Common" (select_compute_arch.cmake) for CUDA 13.0 is
# 5.0 8.0 8.6 8.9 9.0 9.0a 10.0 10.0a 12.0 12.0a; nvcc 13.0 dropped 5.0, so
# "Common" as written fails; this is the compilable rest.
COMMON_LIST="8.0;8.6;8.9;9.0;9.0a;10.0;10.0a;12.0;12.0a"

echo "| build | arch list | jobs | wall (s) | result | images in _C.so |" > "$TABLE"
echo "|---|---|---|---|---|---|" >> "$TABLE"

# run_build NAME ARGS...: a fresh copy of the extension, built by torchfix.
run_build() {
  local name=$1; shift
  local dir="$WORK/$name"
  rm -rf "$dir" && mkdir -p "$dir"
  cp -r "$HERE/ext" "$dir/src"
  rm -rf "$dir/src/build" "$dir/src/tfext/gen" "$dir/src"/*.egg-info
  note "building $name: torchfix build cuda-extension $*"
  local start end rc
  start=$(date +%s.%N)
  "$TORCHFIX" build cuda-extension --src "$dir/src" --python "$PYTHON" --work-dir "$dir/work" "$@" >"$dir/out.txt" 2>&1
  rc=$?
  end=$(date +%s.%N)
  local secs jobs arch images
  secs=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.1f", b - a}')
  jobs=$(grep -o 'MAX_JOBS=[0-9]*' "$dir/out.txt" | head -1 | cut -d= -f2)
  arch=$(grep -o 'TORCH_CUDA_ARCH_LIST=[^ ]*' "$dir/out.txt" | head -1 | cut -d= -f2)
  images=$(grep -E '_C[^ ]*\.so: ' "$dir/out.txt" | head -1 | sed 's/.*\.so: //')
  local result=ok
  [ $rc -ne 0 ] && result="exit $rc (see $dir/out.txt)"
  echo "| $name | \`${arch:-?}\` | ${jobs:-?} | $secs | $result | ${images:-?} |" >> "$TABLE"
  tail -3 "$dir/out.txt" >&2
}

if has_phase plan; then
  note "plans (dry runs)"
  "$TORCHFIX" build cuda-extension --src "$HERE/ext" --python "$PYTHON" --work-dir "$WORK/plan" --dry-run \
    >"$WORK/plan-extension.txt" 2>&1
  "$TORCHFIX" build pytorch --ref v2.9.1 --work-dir "$WORK/plan" --dry-run >"$WORK/plan-pytorch.txt" 2>&1
  cat "$WORK/plan-extension.txt"
fi
has_phase auto && run_build auto --arch auto
if has_phase check; then
  note "import the auto build and run op0 on every GPU"
  wheel=$(ls "$WORK"/auto/work/wheels/tfext-*.whl 2>/dev/null | head -1)
  if [ -n "$wheel" ]; then
    "$PYTHON" -m pip install --no-deps --no-index --target "$WORK/site" "$wheel" >"$WORK/check.txt" 2>&1
    # Run a copy outside bench/ext: Python puts the script's folder first on
    # sys.path, where the source tfext/ (without _C) would shadow the wheel.
    cp "$HERE/ext/check.py" "$WORK/check.py"
    (cd "$WORK" && PYTHONPATH="$WORK/site" "$PYTHON" "$WORK/check.py") >>"$WORK/check.txt" 2>&1
    echo "check rc=$?" >>"$WORK/check.txt"
  else
    echo "no wheel from the auto build" >"$WORK/check.txt"
  fi
  cat "$WORK/check.txt"
fi
has_phase wheel && run_build wheel-list --arch "$(wheel_arch_list)"
has_phase common && run_build common --arch "$COMMON_LIST"
has_phase nproc && run_build jobs-nproc --arch auto --jobs "$(nproc)"
has_phase one && run_build jobs-1 --arch auto --jobs 1

echo
echo "## torchfix build on $(hostname)"
machine_facts
echo
cat "$TABLE"
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  machine_facts >"$OUT/machine.md"
  cp "$TABLE" "$OUT/" 2>/dev/null
  cp "$WORK"/*.txt "$OUT/" 2>/dev/null
  for d in "$WORK"/*/; do
    n=$(basename "$d")
    [ -f "$d/out.txt" ] && cp "$d/out.txt" "$OUT/$n-out.txt"
    [ -f "$d/work/logs/cuda-extension.log" ] && tail -c 200000 "$d/work/logs/cuda-extension.log" >"$OUT/$n-build.log"
  done
fi
