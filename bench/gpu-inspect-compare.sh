#!/usr/bin/env bash
# Compares the per-arch image counts of `torchfix inspect --json` with
# `cuobjdump --list-elf` and `--list-ptx` on torch's CUDA libraries (and the
# nvidia-* libraries next to it): the same counts mean the fatbin reader sees
# every image cuobjdump sees. Prints a markdown table; exits 1 on a mismatch,
# 2 when torch or cuobjdump is missing.
#
# Usage: bench/gpu-inspect-compare.sh TORCHFIX PYTHON [LIBRARY...]
#   Without LIBRARY arguments: every *.so* under torch/lib and nvidia/*/lib.
set -euo pipefail

torchfix=${1:?usage: bench/gpu-inspect-compare.sh TORCHFIX PYTHON [LIBRARY...]}
python=${2:?usage: bench/gpu-inspect-compare.sh TORCHFIX PYTHON [LIBRARY...]}
shift 2
cuobjdump=$(command -v cuobjdump || true)
[[ -z $cuobjdump && -x /usr/local/cuda/bin/cuobjdump ]] && cuobjdump=/usr/local/cuda/bin/cuobjdump
[[ -n $cuobjdump ]] || { echo "cuobjdump not found (PATH or /usr/local/cuda/bin)" >&2; exit 2; }

libraries=("$@")
if ((${#libraries[@]} == 0)); then
  torch_dir=$("$python" -c 'import importlib.util, os; s = importlib.util.find_spec("torch"); print(os.path.dirname(s.origin) if s else "")')
  [[ -n $torch_dir ]] || { echo "torch is not installed for $python" >&2; exit 2; }
  site=$(dirname "$torch_dir")
  mapfile -t libraries < <(find "$torch_dir/lib" "$site"/nvidia/*/lib -maxdepth 1 -type f -name '*.so*' 2>/dev/null | sort)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
echo "| library | arch | torchfix images | cuobjdump images | same |"
echo "|---|---|---:|---:|---|"
for lib in "${libraries[@]}"; do
  "$torchfix" inspect --json "$lib" >"$work/tf.json" 2>/dev/null || true
  "$cuobjdump" --list-elf "$lib" >"$work/elf.txt" 2>/dev/null || true
  "$cuobjdump" --list-ptx "$lib" >"$work/ptx.txt" 2>/dev/null || true
  "$python" - "$lib" "$work/tf.json" "$work/elf.txt" "$work/ptx.txt" <<'PY' || status=1
import collections, json, os, re, sys
lib, tf_path, elf_path, ptx_path = sys.argv[1:]
# Loadable images (.nv_fatbin) plus pre-link copies (__nv_relfatbin), which
# cuobjdump lists too.
ours = collections.Counter()
try:
    for f in json.load(open(tf_path))["files"]:
        if "error" in f:
            print(f"| {os.path.basename(lib)} | error | {f['error']} | | no |"); sys.exit(1)
        for a in f.get("archs", []):
            ours[a["arch"]] += a["entries"]
        for arch, n in f.get("relocatable_entries", {}).items():
            ours[arch] += n
except (ValueError, KeyError):
    pass
theirs = collections.Counter()
for path, kind in ((elf_path, "sm"), (ptx_path, "compute")):
    for line in open(path, errors="replace"):
        m = re.search(r"\.sm_(\d+[af]?)\.(cubin|ptx)\s*$", line.strip())
        if m:
            theirs[f"{kind}_{m.group(1)}"] += 1
if not ours and not theirs:
    sys.exit(0)  # no kernels in this library
bad = False
for arch in sorted(set(ours) | set(theirs), key=lambda a: (a.startswith("compute"), int(re.sub(r"\D", "", a)), a)):
    same = ours[arch] == theirs[arch]
    bad |= not same
    print(f"| {os.path.basename(lib)} | {arch} | {ours[arch]} | {theirs[arch]} | {'yes' if same else '**NO**'} |")
sys.exit(1 if bad else 0)
PY
done
exit $status
