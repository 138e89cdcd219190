#!/usr/bin/env bash
# Times reading the arch inventory of torch's libtorch_cuda.so three ways on
# the same file, same machine, same run, and scans a whole site-packages:
#   1. torchfix inspect libtorch_cuda.so        (fatbin headers only)
#   2. cuobjdump --list-elf libtorch_cuda.so    (decompresses every image)
#   3. python -c "import torch; torch._C._cuda_getArchFlags()"
#   4. torchfix inspect --json <site-packages>  (files/s, GB/s)
# Prints a markdown table. Needs only bash and the given python (for timing
# and RSS through getrusage); cuobjdump is taken from PATH or
# /usr/local/cuda/bin and its row is skipped when absent.
#
# Usage: bench/inspect.sh TORCHFIX PYTHON [RUNS]
set -euo pipefail

torchfix=${1:?usage: bench/inspect.sh TORCHFIX PYTHON [RUNS]}
python=${2:?usage: bench/inspect.sh TORCHFIX PYTHON [RUNS]}
runs=${3:-3}

# Find torch without importing it.
torch_dir=$("$python" -c 'import importlib.util, os; s = importlib.util.find_spec("torch"); print(os.path.dirname(s.origin) if s else "")')
[[ -n $torch_dir ]] || { echo "torch is not installed for $python" >&2; exit 2; }
lib=$torch_dir/lib/libtorch_cuda.so
[[ -f $lib ]] || { echo "no $lib (a CPU build of torch?)" >&2; exit 2; }
site=$(dirname "$torch_dir")
cuobjdump=$(command -v cuobjdump || true)
[[ -z $cuobjdump && -x /usr/local/cuda/bin/cuobjdump ]] && cuobjdump=/usr/local/cuda/bin/cuobjdump

# measure NAME RUNS CMD...: prints "median_s max_rss_mb exit_code" for CMD run RUNS times.
measure() {
  local runs=$1
  shift
  "$python" - "$runs" "$@" <<'PY'
import resource, statistics, subprocess, sys, time
runs = int(sys.argv[1]); cmd = sys.argv[2:]
times, rss, code = [], 0, 0
for _ in range(runs):
    # Each run in a fresh child of a fresh wrapper, so ru_maxrss is that run's.
    wrapper = ("import resource, subprocess, sys, time\n"
               "t = time.perf_counter(); r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
               "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.returncode)")
    out = subprocess.run([sys.executable, "-c", wrapper] + cmd, capture_output=True, text=True).stdout.split()
    times.append(float(out[0])); rss = max(rss, int(out[1])); code = int(out[2])
print(f"{statistics.median(times):.3f} {rss / 1024:.1f} {code}")
PY
}

lib_mb=$(( $(stat -c %s "$lib") / 1000000 ))
echo "## torchfix inspect benchmark"
echo
echo "- host: $(uname -n), $(nproc) CPUs; $(date -u +%FT%TZ)"
echo "- file: \`$lib\` ($lib_mb MB); torch $("$python" -c 'import importlib.metadata as m; print(m.version("torch"))')"
echo "- torchfix: $("$torchfix" --version 2>&1 | head -1); cuobjdump: ${cuobjdump:-absent}"
echo "- median of $runs runs (cuobjdump: 1 run); max RSS over the runs"
echo
echo "| what | median s | max RSS MB | exit | torchfix is faster by |"
echo "|---|---:|---:|---:|---:|"
read -r t_tf m_tf c_tf < <(measure "$runs" "$torchfix" inspect "$lib")
echo "| \`torchfix inspect libtorch_cuda.so\` | $t_tf | $m_tf | $c_tf | 1x |"
ratio() { "$python" -c "import sys; a, b = map(float, sys.argv[1:]); print(f'{a / b:.0f}x' if b > 0 else 'n/a')" "$1" "$2"; }
if [[ -n $cuobjdump ]]; then
  read -r t_cu m_cu c_cu < <(measure 1 "$cuobjdump" --list-elf "$lib")
  echo "| \`cuobjdump --list-elf libtorch_cuda.so\` | $t_cu | $m_cu | $c_cu | $(ratio "$t_cu" "$t_tf") |"
else
  echo "| \`cuobjdump --list-elf\` | - | - | - | (cuobjdump not found) |"
fi
read -r t_py m_py c_py < <(measure "$runs" "$python" -c "import torch; torch._C._cuda_getArchFlags()")
echo "| \`python -c \"import torch; torch._C._cuda_getArchFlags()\"\` | $t_py | $m_py | $c_py | $(ratio "$t_py" "$t_tf") |"

# Whole site-packages: every regular file is walked, ELF/fatbin files are
# opened and their headers read.
json=$(mktemp)
trap 'rm -f "$json"' EXIT
read -r t_site m_site c_site < <(measure 1 "$torchfix" inspect --json "$site")
"$torchfix" inspect --json "$site" >"$json" || true
"$python" - "$site" "$json" "$t_site" "$m_site" <<'PY'
import json, os, sys
site, path, seconds, rss = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
walked = sum(len(files) for _, _, files in os.walk(site))
walked_bytes = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(site) for f in fs
                   if not os.path.islink(os.path.join(d, f)))
files = json.load(open(path))["files"]
cuda_bytes = sum(f.get("bytes", 0) for f in files)
print()
print(f"| site-packages scan (`torchfix inspect --json {site}`) | value |")
print("|---|---:|")
print(f"| wall time, s | {seconds:.3f} |")
print(f"| max RSS, MB | {rss} |")
print(f"| files walked | {walked} ({walked_bytes / 1e9:.2f} GB) |")
print(f"| CUDA binaries read | {len(files)} ({cuda_bytes / 1e9:.2f} GB), {sum(1 for f in files if 'error' in f)} with errors |")
print(f"| files/s (walked) | {walked / seconds:,.0f} |")
print(f"| GB/s (CUDA binaries, headers read in place) | {cuda_bytes / 1e9 / seconds:.1f} |")
print(f"| GB/s (all files walked) | {walked_bytes / 1e9 / seconds:.1f} |")
PY
