#!/usr/bin/env bash
# Packs a torchfix binary from a (non-static) build folder with the shared
# libraries it links (all but glibc's), the tables and the templates into one
# folder that the lent GPU machine can run (Ubuntu 24.04 there: newer glibc and
# libstdc++ than Debian 12's, so the copied libraries load).
# Usage: bench/gpu-pack.sh BUILD_DIR OUT_DIR   then, there: OUT_DIR/torchfix ARGS
# BUILD_DIR should be a Release build without sanitizers (-DCMAKE_BUILD_TYPE=Release
# -DTORCHFIX_TESTS=OFF): an ASan build is over 150 MB even stripped.
set -euo pipefail
build=${1:?usage: gpu-pack.sh BUILD_DIR OUT_DIR}
out=${2:?usage: gpu-pack.sh BUILD_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/lib" "$out/share/torchfix"
cp "$build/torchfix" "$out/torchfix.bin"
strip "$out/torchfix.bin"  # the carried tree is at most 64 MiB
# glibc's own libraries stay the machine's; everything else travels.
ldd "$build/torchfix" | awk '/=> \// {print $3}' |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*|libresolv)\.so' |
  while read -r lib; do cp -L "$lib" "$out/lib/" && strip "$out/lib/$(basename "$lib")"; done
rm -rf "$out/share/torchfix/recipes" "$out/share/torchfix/templates"
cp -r "$root/recipes" "$root/templates" "$out/share/torchfix/"
cat >"$out/torchfix" <<'SH'
#!/bin/sh
here=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" TORCHFIX_DATA_DIR="${TORCHFIX_DATA_DIR:-$here/share/torchfix}" \
  exec "$here/torchfix.bin" "$@"
SH
chmod +x "$out/torchfix"
du -sh "$out"
