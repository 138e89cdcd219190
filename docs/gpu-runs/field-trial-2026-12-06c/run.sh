#!/bin/bash
# Replays every case of field-trial-2026-12-06c.md through the binary under trial; outputs in out/
cd "$(dirname "$0")"
export ASAN_OPTIONS=detect_leaks=0 NO_COLOR=1
T=${TORCHFIX:-/work/trial4-bin/torchfix}   # the binary under trial
OUT=${OUT:-out}
mkdir -p "$OUT"
run() { local name=$1; shift; echo "\$ torchfix doctor $*" > $OUT/$name.txt; $T doctor "$@" >> $OUT/$name.txt 2>&1; echo "exit=$?" >> $OUT/$name.txt; $T doctor "$@" --json > $OUT/$name.json 2>/dev/null; }
run r01 --snapshot r01-mamba50-ngc2306-torch210a0-causalconv1d102.json
run r02 --snapshot r02-tcnn284-egg-gcc11-torch200-cu117.json
run r03 --snapshot r03-mmdet3991-torch140-cu101-mmcvfull115.json
run r04 --snapshot r04-satflow18-conda-forge-cpu-pytorch190.json
run r05 --snapshot r05-kronos71-container-driver470-torch280.json
run r06 --snapshot r06-qualityscaler9-win10-k80-torch1120-vcredist.json
run r07 --snapshot r07-pytorch94585-compile-lcuda-torch200dev.json
run r08 --snapshot r08-mii277-toolkit117-torch210-cu121.json
run r09 --snapshot r09-vision4180-jetson-torch180-torchvision070a0.json
run r10 --snapshot r10-ultralytics5059-torch210-cu118-torchvision016cpu.json
# what-if forms (values from the reports; GPU and driver as assumed in the snapshots)
run r05w --snapshot bare.json --platform linux-x86_64 --gpu "Tesla T4" --driver 470.182.03 --torch 2.8.0 --python-version 3.11
run r08w --snapshot bare.json --platform linux-x86_64 --gpu A100 --driver 525.105.17 --torch 2.1.0 --with deepspeed==0.12.2 --python-version 3.10
run r10w --snapshot bare.json --platform linux-x86_64 --gpu "RTX 3080" --driver 535.129.03 --torch 2.1.0+cu118 --with torchvision==0.16.0+cpu --python-version 3.10
# variants that separate causes (see the page)
run r01b --snapshot r01b-mamba50-host-torch210a0-causalconv1d102.json
run r02v --snapshot r02v-tcnn284-no-egg.json
