#!/usr/bin/env bash
# The long fuzz runs of docs/hostile-inputs.md ("Fuzzing"), on a machine with
# more cores than this one and without the toolchain (the lent GPU machine).
#
#   bench/gpu-fuzz.sh pack          # here, after `.ci/fuzz` built build-fuzz/:
#                                   # the four targets, their seed folders and the
#                                   # shared libraries they load -> .gpu-fuzz/fuzz.tar.xz
#   bench/gpu-fuzz.sh run [SECONDS] # there (carry .gpu-fuzz and bench/): runs the
#                                   # four side by side, SECONDS (585) each; logs
#                                   # and any crashing input go to $OUT
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
case ${1:-} in
pack)
  stage=$(mktemp -d) && trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/fuzz/lib" "$root/.gpu-fuzz"
  cp "$root"/build-fuzz/tests/fuzz/fuzz_* "$stage/fuzz/"
  cp -r "$root"/build-fuzz/{seeds,size-seeds,snapshot-seeds,index-page-seeds} "$stage/fuzz/"
  # Every library but glibc's and the C++ runtime, which the other machine has.
  ldd "$stage"/fuzz/fuzz_* | awk '$3 ~ /^\// {print $3}' | sort -u |
    grep -Ev '/(libc|libm|libgcc_s|libstdc\+\+)\.so' | xargs -I{} cp -L {} "$stage/fuzz/lib/"
  tar -C "$stage" -cJf "$root/.gpu-fuzz/fuzz.tar.xz" fuzz
  ls -l "$root/.gpu-fuzz/fuzz.tar.xz"
  ;;
run)
  secs=${2:-585} w=/tmp/torchfix-fuzz
  rm -rf "$w" && mkdir -p "$w" && tar -C "$w" -xJf "$root/.gpu-fuzz/fuzz.tar.xz"
  cd "$w/fuzz"
  export LD_LIBRARY_PATH=$w/fuzz/lib ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  out=${OUT:-$w/out} && mkdir -p "$out" art
  common=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
  echo "$(nproc) cores, $(date -u)"
  for t in binary_reader:seeds:65536 size_paths:size-seeds:65536 snapshot:snapshot-seeds:262144 \
    index_page:index-page-seeds:65536; do
    IFS=: read -r name seeds len <<<"$t"
    mkdir -p "corpus-$name"
    "./fuzz_$name" "${common[@]}" -max_len="$len" -artifact_prefix="art/$name-" "corpus-$name" "$seeds" \
      >"$out/$name.log" 2>&1 &
  done
  wait
  for f in "$out"/*.log; do echo "== $f" && grep -E 'DONE|ERROR|SUMMARY|stat::' "$f" | tail -8; done
  cp art/* "$out/" 2>/dev/null || echo "no crashing input"
  ;;
*) echo "usage: bench/gpu-fuzz.sh pack | run [SECONDS]" >&2 && exit 2 ;;
esac
