#!/bin/bash
# Times the torch-symbol check of `torchfix doctor` (issue 16): a venv whose
# fake torch package has TORCH_LIB (a real torch/lib folder) as its lib, and
# one C++ extension linking libc10.so, doctored with and without that lib
# folder. The difference is reading every libc10*/libtorch*.so .dynsym once
# and checking the extension's undefined symbols against it.
#   bench/torch-symbols.sh TORCHFIX TORCH_LIB [RUNS]
# e.g. bench/torch-symbols.sh build/torchfix /usr/lib/python3/dist-packages/torch/lib 5
set -euo pipefail
tf=$(realpath "$1"); lib=$(realpath "$2"); runs=${3:-5}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
python3 -m venv --without-pip "$tmp/v"
site=$(echo "$tmp"/v/lib/python3*/site-packages)
mkdir -p "$site/torch" "$site/kext" "$site/kext-0.1.dist-info"
printf "__version__ = '2.6.0+cu126'\ncuda = '12.6'\nhip = None\n" > "$site/torch/version.py"
echo "from .version import __version__" > "$site/torch/__init__.py"
echo 'namespace c10 { void kept(); } extern "C" int op() { c10::kept(); return 0; }' > "$tmp/ext.cpp"
echo 'namespace c10 { void kept() {} }' > "$tmp/c10.cpp"
g++ -shared -fPIC -o "$tmp/libc10.so" "$tmp/c10.cpp"
g++ -shared -fPIC -o "$site/kext/_C.so" "$tmp/ext.cpp" -Xlinker --no-as-needed -L"$tmp" -lc10
printf "Metadata-Version: 2.1\nName: kext\nVersion: 0.1\n\n" > "$site/kext-0.1.dist-info/METADATA"
printf "kext/_C.so,sha256=x,1\nkext-0.1.dist-info/RECORD,,\n" > "$site/kext-0.1.dist-info/RECORD"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_doctor() {
  for _ in $(seq "$runs"); do
    s=$(date +%s%N); "$tf" doctor --python "$tmp/v/bin/python" --gpu H100 >/dev/null 2>&1 || true; e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
  done | median
}
without=$(time_doctor)
ln -s "$lib" "$site/torch/lib"
with=$(time_doctor)
names=$(for f in "$lib"/libc10*.so "$lib"/libtorch*.so; do nm -D --defined-only "$f" 2>/dev/null || true; done | wc -l)
size=$(du -chL "$lib"/libc10*.so "$lib"/libtorch*.so 2>/dev/null | tail -1 | cut -f1 || true)
echo "| torch lib | exported names (nm -D, with duplicates) | doctor without lib/ (ms) | with lib/ (ms) | check (ms) |"
echo "|---|---|---|---|---|"
echo "| $lib ($size) | $names | $without | $with | $((with - without)) |"
