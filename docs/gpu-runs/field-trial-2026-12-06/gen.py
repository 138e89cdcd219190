import json
def plat(machine="x86_64", os_="Ubuntu 24.04", windows=False, wsl2=False, container=False, l4t=None):
    p = {"machine": machine, "os": os_, "wsl2": wsl2, "container": container,
         "nvidia_device_nodes": not windows, "libcuda_loadable": True,
         "cuda_visible_devices": None, "cpus": 16, "memory_available_bytes": 68719476736}
    if windows: p["windows"] = True
    if l4t: p["l4t"] = l4t
    return p
def snap(name, platform, driver, cuda, gpus, pythons, toolkits=(), env=None, notes=()):
    d = {"schema_version": 1, "torchfix_version": "0.1.0", "what_if": False,
         "platform": platform, "driver": {"version": driver, "cuda_version": cuda, "source": "nvml"},
         "gpus": [{"index": i, "name": n, "compute_capability": cc, "memory_bytes": None, "source": "nvml"} for i, (n, cc) in enumerate(gpus)],
         "toolkits": list(toolkits), "compilers": [], "pythons": pythons,
         "environment": env or {}, "notes": list(notes)}
    json.dump(d, open(name, "w"), indent=1)
def py(interp, site, pyver, torch, tcuda, dists, kernels=(), arch_flags=(), origin="VIRTUAL_ENV", loc=None, extra=None):
    p = {"interpreter": interp, "origin": origin, "status": "ok", "error": "", "python_version": pyver,
         "site_packages": site,
         "torch": {"version": torch, "cuda": tcuda, "hip": None, "arch_flags": list(arch_flags), "cudnn": None,
                   "location": loc or (site + ("\\torch" if "\\" in site else "/torch"))},
         "distributions": dists, "kernels": list(kernels)}
    if extra: p.update(extra)
    return p
def kern(dist, ver, bins, prov=None):
    return {"distribution": dist, "version": ver, "cuda": None, "provenance": prov or {"installer": "pip", "owns": [dist.replace("-", "_")]},
            "binaries": [{"path": path, "groups": [{"images": imgs, "modules": mods}], **ext} for path, imgs, mods, ext in bins]}

W = "C:\\Users\\u\\ComfyUI_windows_portable\\python_embeded"
# C2 ComfyUI #9650: Windows portable, GTX 1080 Ti, torch 2.8.0+cu128
snap("c02-comfyui9650-win-portable-gtx1080ti-torch28-cu128.json",
     plat(os_="Windows 10 Pro 10.0.19045", windows=True), "580.97", "13.0", [("NVIDIA GeForce GTX 1080 Ti", "6.1")],
     [py(W + "\\python.exe", W + "\\Lib\\site-packages", "3.12.10", "2.8.0+cu128", "12.8",
         {"torch": "2.8.0+cu128", "torchvision": "0.23.0+cu128", "torchaudio": "2.8.0+cu128"}, origin="--python")],
     notes=["Comfy-Org/ComfyUI#9650: portable >= v0.3.44 ships torch 2.8.0+cu128 (no sm_61); driver assumed 580.97"])
A = "C:\\stable-diffusion-webui\\venv"
# C3 A1111 #17296: Windows, RTX 5070, A1111 master torch 2.1.2+cu121
snap("c03-a1111-17296-win-rtx5070-torch212-cu121.json",
     plat(os_="Windows 11 Pro 10.0.26100", windows=True), "576.80", "12.9", [("NVIDIA GeForce RTX 5070", "12.0")],
     [py(A + "\\Scripts\\python.exe", A + "\\Lib\\site-packages", "3.10.6", "2.1.2+cu121", "12.1",
         {"torch": "2.1.2+cu121", "torchvision": "0.16.2+cu121"}, origin="VIRTUAL_ENV")],
     notes=["AUTOMATIC1111/stable-diffusion-webui#17296: master installs torch 2.1.2+cu121; dev branch torch 2.7.0+cu128 fixed it; GPU model and driver assumed"])
F = "C:\\StabilityMatrix\\Packages\\stable-diffusion-webui-forge\\venv"
# C4 Forge PR #2712: Windows, RTX 5080, torch 2.7.0 nightly cu128, bitsandbytes 0.45.0 (no cuda128 dll)
bnb_bins = [(F + "\\Lib\\site-packages\\bitsandbytes\\libbitsandbytes_cuda%s.dll" % v,
             ["sm_50", "sm_52", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"], 40, {"cudart_major": int(v[:2])})
            for v in ("118", "120", "121", "122", "123", "124", "125", "126")]
snap("c04-forge2712-win-rtx5080-torch27-cu128-bnb0450.json",
     plat(os_="Windows 11 Pro 10.0.26100", windows=True), "572.47", "12.8", [("NVIDIA GeForce RTX 5080", "12.0")],
     [py(F + "\\Scripts\\python.exe", F + "\\Lib\\site-packages", "3.10.11", "2.7.0.dev20250301+cu128", "12.8",
         {"torch": "2.7.0.dev20250301+cu128", "torchvision": "0.22.0.dev20250301+cu128", "bitsandbytes": "0.45.0"},
         kernels=[kern("bitsandbytes", "0.45.0", bnb_bins, {"installer": "pip", "owns": ["bitsandbytes"]})],
         arch_flags=["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"])],
     notes=["lllyasviel/stable-diffusion-webui-forge PR #2712: bitsandbytes < 0.45.3 has no libbitsandbytes_cuda128.dll, falls back to CPU with cu128 torch; archs of its dlls assumed (sm_50..sm_90)"])
# C5 sglang #5100: torch 2.5.1+cu124 with sgl-kernel 0.1.1 built against torch 2.6
L = "/home/u/venv/lib/python3.10/site-packages"
snap("c05-sglang5100-h100-torch251-sglkernel011.json",
     plat(os_="Ubuntu 22.04"), "570.124.06", "12.8", [("NVIDIA H100 80GB HBM3", "9.0")],
     [py("/home/u/venv/bin/python", L, "3.10.12", "2.5.1+cu124", "12.4",
         {"torch": "2.5.1+cu124", "sglang": "0.4.6", "sgl-kernel": "0.1.1", "flashinfer-python": "0.2.5"},
         kernels=[kern("sgl-kernel", "0.1.1", [(L + "/sgl_kernel/common_ops.abi3.so", ["sm_80", "sm_89", "sm_90", "sm_90a", "sm_100a"], 60, {"links_torch": True, "cudart_major": 12})])])],
     notes=["sgl-project/sglang#5100: sgl-kernel 0.1.1 (built with torch 2.6) on torch 2.5.1: undefined symbol _ZN5torch3jit17parseSchemaOrNameERKSsb; fix torch 2.6.0 (or sgl-kernel 0.1.0). GPU assumed H100"])
# C6 triton #5950: RTX 5080, torch nightly cu128 (Feb/Mar 2025) with pytorch-triton 3.2.0 -> ptxas has no sm_120
snap("c06-triton5950-rtx5080-torch27nightly-cu128-triton32.json",
     plat(os_="Ubuntu 24.04"), "570.86.16", "12.8", [("NVIDIA GeForce RTX 5080", "12.0")],
     [py("/home/u/venv/bin/python", L, "3.12.3", "2.7.0.dev20250226+cu128", "12.8",
         {"torch": "2.7.0.dev20250226+cu128", "pytorch-triton": "3.2.0+git4b3bb1f8"},
         arch_flags=["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
         extra={})],
     notes=["triton-lang/triton#5950 (g0t4): torch cu128 nightly with Triton 3.2.0 fails on sm_120 (ptxas); nightly that pins pytorch-triton 3.3.0 fixed it"])
# C7 OpenRAL #167: Jetson AGX Thor JetPack 7 (L4T 38.4), torch 2.9.1+cu128 aarch64
snap("c07-openral167-thor-jp7-torch291-cu128.json",
     plat(machine="aarch64", os_="Ubuntu 24.04.3 LTS", l4t="38.4.0"), "580.00", "13.0", [("NVIDIA Thor", "11.0")],
     [py("/home/u/.venv/bin/python", "/home/u/.venv/lib/python3.12/site-packages", "3.12.3", "2.9.1+cu128", "12.8",
         {"torch": "2.9.1+cu128"}, arch_flags=["sm_80", "sm_90", "sm_100", "sm_120"])],
     notes=["OpenRAL/openral PR #167 (merged): torch 2.9.1+cu128 on Thor: no sm_110, no PTX; fix: cu130 wheel"])
# C8 conda-forge pytorch-cpu-feedstock #527: Orin on JetPack 7.2 (L4T 39.2, CUDA 13), conda-forge pytorch 2.12.1 cuda130 w/o sm_87
C = "/home/u/micromamba/envs/pytorch_12"
snap("c08-condaforge527-orin-jp72-pytorch2121-cuda130.json",
     plat(machine="aarch64", os_="Ubuntu 24.04", l4t="39.2.0"), "580.00", "13.2", [("Orin", "8.7")],
     [py(C + "/bin/python", C + "/lib/python3.14/site-packages", "3.14.0", "2.12.1", "13.0",
         {"pytorch": "2.12.1", "triton": "3.7.1"}, origin="CONDA_PREFIX",
         arch_flags=["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_110", "sm_120", "compute_120"])],
     notes=["conda-forge/pytorch-cpu-feedstock#527, fixed by PR #531 (8.7 added to the aarch64 CUDA 13 arch list, build bumped); pytorch 2.10 worked meanwhile. Driver version assumed (JetPack 7.2 CUDA 13.2); arch list assumed"])
# C9 flash-attn #1749: RTX 3060, driver 535.247.01, flash-attn 2.8.1 (compressed fatbins need driver >= 550)
snap("c09-flashattn1749-rtx3060-driver535-fa281.json",
     plat(os_="Ubuntu 22.04.5 LTS"), "535.247.01", "12.2", [("NVIDIA GeForce RTX 3060", "8.6")],
     [py("/home/u/venv/bin/python", L, "3.10.12", "2.7.1+cu126", "12.6",
         {"torch": "2.7.1+cu126", "flash-attn": "2.8.1"},
         kernels=[kern("flash-attn", "2.8.1", [(L + "/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so", ["sm_80", "sm_90", "sm_100", "sm_120"], 80, {"links_torch": True, "cudart_major": 12})], {"installer": "pip", "owns": ["flash_attn", "flash_attn_2_cuda"]})])],
     notes=["Dao-AILab/flash-attention#1749 (+#1750/PR #1751): 2.8.1 wheels built with nvcc device-code compression need driver >= 550; 2.8.0.post2 works; torch version assumed"])
# C11 flash-attention #2168 WSL2: RTX 5090, torch 2.7.0+cu128, xformers 0.0.30 (FA3 hopper dispatch), flash-attn 2.7.3 built for 12.0
snap("c11-fa2168-wsl2-rtx5090-xformers030.json",
     plat(os_="Ubuntu 22.04", wsl2=True), "576.88", "12.9", [("NVIDIA GeForce RTX 5090", "12.0")],
     [py("/home/u/venv/bin/python", L, "3.10.12", "2.7.0+cu128", "12.8",
         {"torch": "2.7.0+cu128", "xformers": "0.0.30", "flash-attn": "2.7.3"},
         kernels=[kern("xformers", "0.0.30", [(L + "/xformers/_C.so", ["sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], 392, {"links_torch": True, "cudart_major": 12}),
                                               (L + "/xformers/flash_attn_3/_C.so", ["sm_90a"], 100, {"links_torch": True, "cudart_major": 12})]),
                  kern("flash-attn", "2.7.3", [(L + "/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so", ["sm_120"], 80, {"links_torch": True, "cudart_major": 12})], {"installer": "pip", "owns": ["flash_attn", "flash_attn_2_cuda"]})])],
     toolkits=[{"nvcc": "/usr/local/cuda-12.8/bin/nvcc", "origin": "PATH", "version": "12.8.61", "archs": [], "archs_source": "table"}],
     notes=["Dao-AILab/flash-attention#2168: the failing kernel is xformers 0.0.30's hopper FA3 (flash_fwd_launch_template.h), chosen for cc >= 9.0 (unsloth#4338); fix xformers >= 0.0.33 or xformers built without FA. xformers module split assumed"])
# C12 mamba #745: RTX 5090, torch 2.7.1+cu128, PyPI mamba-ssm 2.2.4 + causal-conv1d 1.5.0.post8 wheels (sm_75..sm_90)
snap("c12-mamba745-rtx5090-torch271-mamba224.json",
     plat(os_="Ubuntu 22.04"), "570.153.02", "12.8", [("NVIDIA GeForce RTX 5090", "12.0")],
     [py("/home/u/venv/bin/python", L, "3.10.12", "2.7.1+cu128", "12.8",
         {"torch": "2.7.1+cu128", "mamba-ssm": "2.2.4", "causal-conv1d": "1.5.0.post8"},
         kernels=[kern("mamba-ssm", "2.2.4", [(L + "/selective_scan_cuda.cpython-310-x86_64-linux-gnu.so", ["sm_53", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_87", "sm_90"], 60, {"links_torch": True, "cudart_major": 12})], {"installer": "pip", "owns": ["mamba_ssm", "selective_scan_cuda"]}),
                  kern("causal-conv1d", "1.5.0.post8", [(L + "/causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so", ["sm_53", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_87", "sm_90"], 10, {"links_torch": True, "cudart_major": 12})], {"installer": "pip", "owns": ["causal_conv1d", "causal_conv1d_cuda"]})])],
     toolkits=[{"nvcc": "/usr/local/cuda-12.8/bin/nvcc", "origin": "PATH", "version": "12.8.93", "archs": [], "archs_source": "table"}],
     notes=["state-spaces/mamba#745: PyPI wheels lack sm_120 (mamba#1019: prebuilt for sm_75-sm_90); fix: build both from source with TORCH_CUDA_ARCH_LIST=12.0 and compute_120 in mamba setup.py"])
# C1 mmartial/ComfyUI-Nvidia-Docker #43: CUDA 12.8 image, ComfyUI's requirements pulled PyPI torch 2.7.0 (cu126) into the mounted venv, RTX 5090
V = "/comfy/mnt/venv/lib/python3.12/site-packages"
snap("c01-comfyui-nvidia-docker43-container-rtx5090-torch270-cu126.json",
     plat(os_="Ubuntu 24.04", container=True), "570.133.07", "12.8", [("NVIDIA GeForce RTX 5090", "12.0")],
     [py("/comfy/mnt/venv/bin/python", V, "3.12.3", "2.7.0+cu126", "12.6",
         {"torch": "2.7.0+cu126", "torchvision": "0.22.0+cu126", "torchaudio": "2.7.0+cu126"})],
     env={"CUDA_VERSION": "12.8.1", "NVIDIA_VISIBLE_DEVICES": "all", "VIRTUAL_ENV": "/comfy/mnt/venv"},
     notes=["mmartial/ComfyUI-Nvidia-Docker#43: ubuntu24_cuda12.8 image; ComfyUI's pip install -r requirements.txt took PyPI torch 2.7.0 (cu126) into the venv under the mounted /comfy/mnt; maintainer: install cu128 torch from a user script run before ComfyUI's requirements. Driver assumed"])
