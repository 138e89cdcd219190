#!/bin/bash
# Replays every case through the trial copy of the binary; outputs in out/
cd "$(dirname "$0")"
export ASAN_OPTIONS=detect_leaks=0 NO_COLOR=1
T=${TORCHFIX:-torchfix}   # the binary under trial
mkdir -p out
run() { local name=$1; shift; echo "\$ torchfix doctor $*" > out/$name.txt; $T doctor "$@" >> out/$name.txt 2>&1; echo "exit=$?" >> out/$name.txt; $T doctor "$@" --json > out/$name.json 2>/dev/null; }
# C1 ComfyUI-Nvidia-Docker #43 (snapshot); c01b: ComfyUI #8708 what-if (Ubuntu, RTX 5080, torch 2.7.1+cu126, driver assumed)
run c01 --snapshot c01-comfyui-nvidia-docker43-container-rtx5090-torch270-cu126.json
run c01b --snapshot bare.json --platform linux-x86_64 --gpu "RTX 5080" --driver 570.153.02 --torch 2.7.1+cu126 --python-version 3.12
run c02 --snapshot c02-comfyui9650-win-portable-gtx1080ti-torch28-cu128.json
run c03 --snapshot c03-a1111-17296-win-rtx5070-torch212-cu121.json
run c04 --snapshot c04-forge2712-win-rtx5080-torch27-cu128-bnb0450.json
run c05 --snapshot c05-sglang5100-h100-torch251-sglkernel011.json
run c06 --snapshot c06-triton5950-rtx5080-torch27nightly-cu128-triton32.json
run c07 --snapshot c07-openral167-thor-jp7-torch291-cu128.json
run c08 --snapshot c08-condaforge527-orin-jp72-pytorch2121-cuda130.json
run c09 --snapshot c09-flashattn1749-rtx3060-driver535-fa281.json
# C10 vLLM #19906: RTX 5080, pip install vllm 0.9.1 pulls PyPI torch 2.7.0 (cu126)
run c10 --snapshot bare.json --platform linux-x86_64 --gpu "RTX 5080" --driver 575.57.08 --torch 2.7.0 --with vllm==0.9.1 --python-version 3.12
run c11 --snapshot c11-fa2168-wsl2-rtx5090-xformers030.json
run c12 --snapshot c12-mamba745-rtx5090-torch271-mamba224.json
# what-if variants
run c05w --snapshot bare.json --platform linux-x86_64 --gpu "H100" --driver 570.124.06 --torch 2.5.1+cu124 --with sgl-kernel==0.1.1
run c07w --snapshot bare.json --platform linux-aarch64 --gpu "Jetson AGX Thor" --driver 580.00 --torch 2.9.1+cu128
run c11w --snapshot bare.json --platform wsl2 --gpu "RTX 5090" --driver 576.88 --torch 2.7.0+cu128 --with xformers==0.0.30
run c04w --snapshot bare-win.json --platform windows --gpu "RTX 5080" --driver 572.47 --torch 2.7.0+cu128 --with bitsandbytes==0.45.0
run c06a --snapshot c06-after-torch270-cu128-triton33.json
