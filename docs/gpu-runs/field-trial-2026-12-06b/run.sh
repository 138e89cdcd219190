#!/bin/bash
# Replays every case of field-trial-2026-12-06b.md through the binary under trial; outputs in out/
cd "$(dirname "$0")"
export ASAN_OPTIONS=detect_leaks=0 NO_COLOR=1
T=${TORCHFIX:-/work/trial3-bin/torchfix}   # the binary under trial
mkdir -p out
run() { local name=$1; shift; echo "\$ torchfix doctor $*" > out/$name.txt; $T doctor "$@" >> out/$name.txt 2>&1; echo "exit=$?" >> out/$name.txt; $T doctor "$@" --json > out/$name.json 2>/dev/null; }
run r01 --snapshot r01-fa1696-a100-torch270-cu126-fa273-abi.json
run r02 --snapshot r02-tritonwin137-rtx5080-torch271-tritonwin34.json
run r03 --snapshot r03-textgen7581-win-rtx4090-torch290cpu-xformers033.json
run r04 --snapshot r04-dockersd7-container-rtx5090-torch260-xformers0292.json
run r05 --snapshot r05-vllm44335-a6000-torch211-cu129-vllm022-cu13.json
run r06 --snapshot r06-torchtitan3022-h100-torchnightly-torchvision026.json
run r06v --snapshot r06v-torchtitan3022-no-symbols.json
run r07 --snapshot r07-lmcache1294-editable-h100-torch270-lmcache033.json
run r08 --snapshot r08-vllm34470-thor-torch2100-cu130-triton36.json
run r10 --snapshot r10-sglangkt33-rtxpro6000-torch2100-sglkernel0321.json
# what-if forms (values from the reports; GPU and driver as assumed in the snapshots)
run r01w --snapshot bare.json --platform linux-x86_64 --gpu A100 --driver 570.124.06 --torch 2.7.0+cu126 --with flash-attn==2.7.3 --python-version 3.10
run r02w --snapshot bare-win.json --platform windows --gpu "RTX 5080" --driver 576.88 --torch 2.7.1+cu128 --with triton-windows==3.4.0.post20 --python-version 3.12
run r03w --snapshot bare-win.json --platform windows --gpu "RTX 4090" --driver 581.57 --torch 2.9.0 --with xformers==0.0.33 --python-version 3.11
run r05w --snapshot bare.json --platform linux-x86_64 --gpu "RTX A6000" --driver 575.57.08 --torch 2.11.0+cu129 --with vllm==0.22.0 --python-version 3.12
run r09w --snapshot bare-win.json --platform windows --gpu "RTX 5090" --driver 576.88 --torch 2.7.1+cu128 --with xformers==0.0.32.dev1073 --python-version 3.10
# variants that separate causes (see the page)
run r02b --snapshot r02b-linux-rtx5080-torch271-triton340.json
run r05b --snapshot r05b-vllm44335-driver580.json
run r06b --snapshot r06b-h100-torch2120-torchvision026.json
run r08b --snapshot r08b-thor-torch2100-triton351.json
