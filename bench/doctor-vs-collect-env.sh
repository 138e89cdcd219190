#!/usr/bin/env bash
# Times `torchfix doctor` against `python -m torch.utils.collect_env` side by
# side in one run: N rounds, each running both (doctor first, then
# collect_env), and prints the median, min and max wall time of each and the
# ratio of the medians as a markdown table. Also times `doctor --no-binaries`.
# Needs only bash, awk and date (the GPU machine has no bc).
#
# Usage: bench/doctor-vs-collect-env.sh TORCHFIX [N]
#   TORCHFIX  the torchfix binary (recipes/ next to it, or TORCHFIX_DATA_DIR)
#   N         rounds (default 7)
# Env: PYTHON (default: python3 on PATH), OUT (optional: the table is copied there).
set -uo pipefail

torchfix=$(readlink -f "${1:?usage: bench/doctor-vs-collect-env.sh TORCHFIX [N]}")
rounds=${2:-7}
python=${PYTHON:-$(command -v python3)}

# Runs "$@" once with output discarded; prints its wall time in seconds.
time_one() {
  local start end
  start=$(date +%s%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
# Prints "median min max" of the numbers on stdin.
stats() {
  sort -g | awk '{v[NR]=$1} END {m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
                  printf "%.3f %.3f %.3f\n", m, v[1], v[NR]}'
}

# One warm-up of each: page cache and Python bytecode caches, as a user's second run.
"$torchfix" doctor >/dev/null 2>&1
"$python" -m torch.utils.collect_env >/dev/null 2>&1

doctor_times=() fast_times=() collect_times=()
for ((i = 0; i < rounds; i++)); do
  doctor_times+=("$(time_one "$torchfix" doctor)")
  fast_times+=("$(time_one "$torchfix" doctor --no-binaries)")
  collect_times+=("$(time_one "$python" -m torch.utils.collect_env)")
done
read -r d_med d_min d_max < <(printf '%s\n' "${doctor_times[@]}" | stats)
read -r f_med f_min f_max < <(printf '%s\n' "${fast_times[@]}" | stats)
read -r c_med c_min c_max < <(printf '%s\n' "${collect_times[@]}" | stats)

table=$(mktemp)
{
  echo "| command | median s | min s | max s | collect_env / this |"
  echo "|---|---|---|---|---|"
  echo "| torchfix doctor | $d_med | $d_min | $d_max | $(ratio "$c_med" "$d_med")x |"
  echo "| torchfix doctor --no-binaries | $f_med | $f_min | $f_max | $(ratio "$c_med" "$f_med")x |"
  echo "| $python -m torch.utils.collect_env | $c_med | $c_min | $c_max | 1.0x |"
  echo
  echo "$rounds rounds, each command once per round, after one warm-up run of each;"
  echo "$(nproc) CPUs, $(uname -m), $("$python" -c 'import torch; print("torch", torch.__version__)' 2>/dev/null)."
} >"$table"
cat "$table"
if [[ -n ${OUT:-} ]]; then cp "$table" "$OUT/doctor-vs-collect-env.md"; fi
