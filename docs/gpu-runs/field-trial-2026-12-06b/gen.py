# Writes the cNN-*.json snapshots of field-trial-2026-12-06b.md (helpers as in ../field-trial-2026-12-06/gen.py).
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
    prov = dict(prov or {"installer": "pip", "owns": [dist.replace("-", "_")]})
    majors = [ext["cudart_major"] for _, _, _, ext in bins if "cudart_major" in ext]
    if majors: prov.setdefault("cuda_major", majors[0])  # as src/binary/scan.cpp records it from the libcudart.so.N
    return {"distribution": dist, "version": ver, "cuda": None, "provenance": prov,
            "binaries": [{"path": path, "groups": [{"images": imgs, "modules": mods}], **ext} for path, imgs, mods, ext in bins]}
def syms(torch, needed, missing, examples):
    return {"torch_symbols": {"torch": torch, "needed": needed, "missing": missing, "examples": examples}}

TORCH_CU126 = ["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"]
TORCH_CU128 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]
L = "/home/u/venv/lib/python3.10/site-packages"

# R1 flash-attention #1696: torch 2.7.0 (cu126), pip install flash-attn 2.7.3 -> prebuilt wheel of an older torch ABI
snap("r01-fa1696-a100-torch270-cu126-fa273-abi.json",
     plat(os_="Ubuntu 22.04 (Azure ML)"), "570.124.06", "12.8", [("NVIDIA A100 80GB PCIe", "8.0")],
     [py("/home/u/venv/bin/python", L, "3.10.12", "2.7.0+cu126", "12.6",
         {"torch": "2.7.0+cu126", "flash-attn": "2.7.3"}, arch_flags=TORCH_CU126,
         kernels=[kern("flash-attn", "2.7.3", [(L + "/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so", ["sm_80", "sm_90"], 80,
                   {"links_torch": True, "cudart_major": 12, **syms("2.7.0+cu126", 300, 1, ["c10::Error::Error(c10::SourceLocation, std::string)"])})],
                   {"installer": "pip", "owns": ["flash_attn", "flash_attn_2_cuda"]})])],
     notes=["Dao-AILab/flash-attention#1696: pip install flash-attn (2.7.3) on torch 2.7.0 CUDA 12.6: undefined symbol _ZN3c105ErrorC2ENS_14Source... (the pre-cxx11-ABI c10::Error ctor, full name in #1644); the reporter: building from source (pip install --no-build-isolation . in a clone) fixes it.",
            "Assumed: GPU (A100; report says Azure ML), driver, the wheel's archs (sm_80, sm_90) and the symbol count; the missing symbol is the report's."])

def torch_entry(site, ver, images, triton_pin, sep="/"):
    lib = site + sep + "torch" + sep + "lib" + sep + ("torch_cuda.dll" if sep == "\\" else "libtorch_cuda.so")
    return kern("torch", ver, [(lib, images, 4000, {})], {"installer": "pip", "owns": ["torch"], "triton_pins": [triton_pin]})
PIN271 = 'triton==3.3.1; platform_system == "Linux" and platform_machine == "x86_64"'
CU128_SASS = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]

# R2 triton-windows #137: ComfyUI portable, RTX 5080, torch 2.7 + triton-windows 3.4.0.post20 -> launch_enter_hook
W = "D:\\ComfyUI_windows_portable\\python_embeded"
snap("r02-tritonwin137-rtx5080-torch271-tritonwin34.json",
     plat(os_="Windows 11 Pro 10.0.26100", windows=True), "576.88", "12.9", [("NVIDIA GeForce RTX 5080", "12.0")],
     [py(W + "\\python.exe", W + "\\Lib\\site-packages", "3.12.10", "2.7.1+cu128", "12.8",
         {"torch": "2.7.1+cu128", "torchvision": "0.22.1+cu128", "torchaudio": "2.7.1+cu128", "triton-windows": "3.4.0.post20"},
         origin="--python", arch_flags=TORCH_CU128,
         kernels=[torch_entry(W + "\\Lib\\site-packages", "2.7.1+cu128", CU128_SASS, PIN271, sep="\\")])],
     notes=["woct0rdho/triton-windows#137: torch.compile -> AttributeError: type object 'CompiledKernel' has no attribute 'launch_enter_hook'; maintainer: Triton 3.4 only works with PyTorch >= 2.8, install triton-windows<3.4; reporter: solved.",
            "Assumed: torch patch release 2.7.1+cu128 (report: 'PyTorch 2.7'), driver, Python 3.12; torch's Requires-Dist line for triton (the Linux-only marker of torch's wheels) is assumed text."])

# R3 oobabooga/textgen PR #7581: Windows, xformers 0.0.33 pins torch==2.9.0 -> update replaced torch 2.9.1+cu128 with PyPI's 2.9.0 (CPU)
T = "C:\\text-generation-webui\\installer_files\\env"
snap("r03-textgen7581-win-rtx4090-torch290cpu-xformers033.json",
     plat(os_="Windows 11 Pro 10.0.26100", windows=True), "581.57", "13.0", [("NVIDIA GeForce RTX 4090", "8.9")],
     [py(T + "\\python.exe", T + "\\Lib\\site-packages", "3.11.13", "2.9.0+cpu", None,
         {"torch": "2.9.0+cpu", "xformers": "0.0.33", "exllamav3": "0.0.34"}, origin="CONDA_PREFIX")],
     notes=["oobabooga/textgen PR #7581 (merged): xformers 0.0.33 hard-pins torch==2.9.0; the update step reinstalled torch 2.9.1+cu128 as PyPI's 2.9.0 (CPU on Windows): torch.cuda.is_available() False, xFormers can't load C++/CUDA extensions. Fix: TORCH_VERSION=2.9.0 so torch 2.9.0 comes from the cu128 index.",
            "Assumed: GPU, driver, Python 3.11, install folder; xformers' kernels not listed (the fix does not depend on them)."])

# R4 jim60105/docker-stable-diffusion-webui #7: image for RTX 5090; xformers 0.0.29.post2 pulled PyPI torch 2.6.0 (cu124) over the cu128 nightly
C = "/usr/local/lib/python3.10/site-packages"
# The mounts a probe records from /proc/self/mountinfo in that container: the image's overlay root and the
# volumes of the project's docker-compose.yml (./data:/data, ./data/config_states:/app/config_states,
# cache:/.cache, repositories:/app/repositories) and Docker's own /etc binds; torch is not on any of them.
# With them the mtime of /.dockerenv (the container's creation) and of torch/version.py (the image's build,
# before it): assumed times, a day apart.
def mnt(point, root, fs, src): return {"point": point, "root": root, "fs_type": fs, "source": src}
R4_MOUNTS = [mnt("/", "/", "overlay", "overlay"), mnt("/data", "/home/u/sd/data", "ext4", "/dev/sdd"),
             mnt("/app/config_states", "/home/u/sd/data/config_states", "ext4", "/dev/sdd"),
             mnt("/.cache", "/docker/volumes/sd_cache/_data", "ext4", "/dev/sdd"),
             mnt("/app/repositories", "/docker/volumes/sd_repositories/_data", "ext4", "/dev/sdd"),
             mnt("/etc/resolv.conf", "/docker/containers/c0/resolv.conf", "ext4", "/dev/sdd"),
             mnt("/etc/hostname", "/docker/containers/c0/hostname", "ext4", "/dev/sdd"),
             mnt("/etc/hosts", "/docker/containers/c0/hosts", "ext4", "/dev/sdd")]
snap("r04-dockersd7-container-rtx5090-torch260-xformers0292.json",
     dict(plat(os_="Debian GNU/Linux 12 (container)", container=True), mounts=R4_MOUNTS, container_created=1738627200), "572.16", "12.8", [("NVIDIA GeForce RTX 5090", "12.0")],
     [py("/usr/local/bin/python", C, "3.10.16", "2.6.0+cu124", "12.4",
         {"torch": "2.6.0+cu124", "xformers": "0.0.29.post2", "torchvision": "0.21.0+cu124"}, origin="PATH",
         arch_flags=["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"])],
     env={"NVIDIA_VISIBLE_DEVICES": "all"},
     notes=["jim60105/docker-stable-diffusion-webui#7: the image's build collected torch 2.7.0.dev+cu128 but xformers==0.0.29.post2 made pip take torch 2.6.0 from PyPI; RTX 5090 generates nothing. Maintainer: remove xformers from the cu128 image (rebuilt image with the cu128 nightly torch).",
            "Assumed: driver (Windows host via Docker Desktop), torchvision's version, Python; kernels of xformers not listed."])

# R5 vllm #44335: torch 2.11.0+cu129 (--torch-backend=cu129), PyPI vllm 0.22.0 built for CUDA 13 -> libcudart.so.13
snap("r05-vllm44335-a6000-torch211-cu129-vllm022-cu13.json",
     plat(os_="Red Hat Enterprise Linux 8.6"), "575.57.08", "12.9", [("NVIDIA RTX A6000", "8.6")],
     [py("/home/u/.venv/bin/python", "/home/u/.venv/lib/python3.12/site-packages", "3.12.12", "2.11.0+cu129", "12.9",
         {"torch": "2.11.0+cu129", "torchvision": "0.26.0+cu129", "torchaudio": "2.11.0+cu129", "vllm": "0.22.0", "flashinfer-python": "0.6.11.post2"},
         kernels=[kern("vllm", "0.22.0", [("/home/u/.venv/lib/python3.12/site-packages/vllm/_C.abi3.so", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"], 200,
                   {"links_torch": True, "cudart_major": 13})])])],
     notes=["vllm-project/vllm#44335 (same as closed #43435): uv pip install vllm --torch-backend=cu129 gives torch cu129 but PyPI's vllm wheel is built for CUDA 13 (VLLM_MAIN_CUDA_VERSION 13.0): ImportError libcudart.so.13. Fix (confirmed by a user): the cu129 vllm wheel, --extra-index-url https://wheels.vllm.ai/<ver>/cu129.",
            "Assumed: GPU (A6000, from #43435), driver 575 (CUDA 12.9), Python, the _C archs."])

# R6 pytorch/torchtitan PR #3022: nightly torch installed alone, old torchvision 0.26.0 stays -> operator torchvision::nms does not exist
N = "/opt/conda/lib/python3.12/site-packages"
tv = [(N + "/torchvision/_C.so", ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], 30,
       {"links_torch": True, "cudart_major": 13, **syms("2.12.0.dev20260417+cu130", 250, 3, ["c10::impl::ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(c10::DispatchKeySet)"])})]
snap("r06-torchtitan3022-h100-torchnightly-torchvision026.json",
     plat(os_="Ubuntu 22.04"), "580.95.05", "13.0", [("NVIDIA H100 80GB HBM3", "9.0")],
     [py("/opt/conda/bin/python", N, "3.12.11", "2.12.0.dev20260417+cu130", "13.0",
         {"torch": "2.12.0.dev20260417+cu130", "torchvision": "0.26.0"}, origin="CONDA_PREFIX",
         arch_flags=["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
         kernels=[kern("torchvision", "0.26.0", tv)])],
     notes=["pytorch/torchtitan PR #3022 (fixed by #3002, like #2959): the 8-GPU CI job installs only the nightly torch, so torchvision 0.26.0 (built for torch 2.11) stays: RuntimeError: operator torchvision::nms does not exist. Fix: install torchvision from the same nightly channel as torch.",
            "Assumed: the nightly date and variant, driver, one GPU shown, torchvision's archs; the missing symbol (count and example) is assumed: the thread shows only the nms error (r06v is the same machine without symbol data)."])
tv_nosym = [(N + "/torchvision/_C.so", ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"], 30, {"links_torch": True, "cudart_major": 13})]
snap("r06v-torchtitan3022-no-symbols.json",
     plat(os_="Ubuntu 22.04"), "580.95.05", "13.0", [("NVIDIA H100 80GB HBM3", "9.0")],
     [py("/opt/conda/bin/python", N, "3.12.11", "2.12.0.dev20260417+cu130", "13.0",
         {"torch": "2.12.0.dev20260417+cu130", "torchvision": "0.26.0"}, origin="CONDA_PREFIX",
         arch_flags=["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
         kernels=[kern("torchvision", "0.26.0", tv_nosym)])],
     notes=["r06 without torch_symbols: what the doctor concludes from the versions alone"])

# R7 LMCache #1294: lmcache 0.3.3 installed editable (pip install -e .), kernels compiled against another torch than the runtime 2.7.0
E = "/home/u/lmc/lib/python3.12/site-packages"
snap("r07-lmcache1294-editable-h100-torch270-lmcache033.json",
     plat(os_="Ubuntu 22.04"), "570.124.06", "12.8", [("NVIDIA H100 80GB HBM3", "9.0")],
     [py("/home/u/lmc/bin/python", E, "3.12.3", "2.7.0+cu126", "12.6",
         {"torch": "2.7.0+cu126", "lmcache": "0.3.3"}, arch_flags=TORCH_CU126,
         kernels=[kern("lmcache", "0.3.3", [("/home/u/LMCache/lmcache/c_ops.cpython-312-x86_64-linux-gnu.so", ["sm_90"], 20,
                   {"links_torch": True, "cudart_major": 12, **syms("2.7.0+cu126", 120, 1, ["c10::Error::Error(c10::SourceLocation, std::string)"])})],
                   {"installer": "pip", "url": "file:///home/u/LMCache", "editable_root": "/home/u/LMCache", "owns": ["lmcache"]})])],
     toolkits=[{"nvcc": "/usr/local/cuda-12.6/bin/nvcc", "origin": "PATH", "version": "12.6.85", "archs": [], "archs_source": "table"}],
     notes=["LMCache/LMCache#1294: pip3 install -e . of lmcache 0.3.3 with torch 2.7.0, CUDA 12.6: c_ops...so: undefined symbol _ZN3c105ErrorC2ENS_14SourceLocationESs. Maintainer: caused by a different torch at the kernels' compile stage than at run time (torch unpinned, build isolation); stay on torch 2.7 (vllm's) and rebuild against it (commit 4660a289; docs PR #1489: --no-build-isolation).",
            "Assumed: GPU, driver, nvcc, the archs of c_ops; the missing symbol is the report's. vllm left out (its version is not in the report; with vllm 0.10.0, which pins torch 2.7.1, the doctor adds a vllm finding)."])

# Variants that separate causes (not reports of their own)
# r02b: r02 on Linux with PyPI's triton 3.4.0 (the distribution torch itself names) beside torch 2.7.1
snap("r02b-linux-rtx5080-torch271-triton340.json",
     plat(os_="Ubuntu 24.04"), "575.57.08", "12.9", [("NVIDIA GeForce RTX 5080", "12.0")],
     [py("/home/u/venv/bin/python", "/home/u/venv/lib/python3.12/site-packages", "3.12.3", "2.7.1+cu128", "12.8",
         {"torch": "2.7.1+cu128", "triton": "3.4.0"}, arch_flags=TORCH_CU128,
         kernels=[torch_entry("/home/u/venv/lib/python3.12/site-packages", "2.7.1+cu128", CU128_SASS, PIN271)])],
     notes=["variant of r02 (woct0rdho/triton-windows#137): Linux, PyPI triton 3.4.0 beside torch 2.7.1 (which requires triton==3.3.1)"])
# r05b: r05 with a driver of CUDA 13.0, so only torch's CUDA 12 vs the extension's libcudart.so.13 differ
snap("r05b-vllm44335-driver580.json",
     plat(os_="Red Hat Enterprise Linux 8.6"), "580.95.05", "13.0", [("NVIDIA RTX A6000", "8.6")],
     [py("/home/u/.venv/bin/python", "/home/u/.venv/lib/python3.12/site-packages", "3.12.12", "2.11.0+cu129", "12.9",
         {"torch": "2.11.0+cu129", "torchvision": "0.26.0+cu129", "torchaudio": "2.11.0+cu129", "vllm": "0.22.0", "flashinfer-python": "0.6.11.post2"},
         kernels=[kern("vllm", "0.22.0", [("/home/u/.venv/lib/python3.12/site-packages/vllm/_C.abi3.so", ["sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"], 200,
                   {"links_torch": True, "cudart_major": 13})])])],
     notes=["variant of r05 with driver 580.95.05 (CUDA 13.0)"])
# r06b: r06v with the released torch 2.12.0+cu130 (torchvision 0.26.0 is torch 2.11's)
snap("r06b-h100-torch2120-torchvision026.json",
     plat(os_="Ubuntu 22.04"), "580.95.05", "13.0", [("NVIDIA H100 80GB HBM3", "9.0")],
     [py("/opt/conda/bin/python", N, "3.12.11", "2.12.0+cu130", "13.0",
         {"torch": "2.12.0+cu130", "torchvision": "0.26.0"}, origin="CONDA_PREFIX",
         arch_flags=["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
         kernels=[kern("torchvision", "0.26.0", tv_nosym)])],
     notes=["variant of r06v with a released torch: does the doctor pair torchvision with torch by version?"])

# R8 vllm #34470 + vLLM troubleshooting doc (PR #31338): Jetson AGX Thor, torch 2.10.0+cu130, Triton's bundled ptxas lacks sm_110a
J = "/home/u/.venv/lib/python3.12/site-packages"
snap("r08-vllm34470-thor-torch2100-cu130-triton36.json",
     plat(machine="aarch64", os_="Ubuntu 24.04.4 LTS", l4t="38.2.0"), "580.00", "13.0", [("NVIDIA Thor", "11.0")],
     [py("/home/u/.venv/bin/python", J, "3.12.3", "2.10.0+cu130", "13.0",
         {"torch": "2.10.0+cu130", "triton": "3.6.0"},
         arch_flags=["sm_80", "sm_90", "sm_100", "sm_110", "sm_120", "compute_120"],
         kernels=[torch_entry(J, "2.10.0+cu130", ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120", "compute_120"], 'triton==3.6.0; platform_system == "Linux"')])],
     toolkits=[{"nvcc": "/usr/local/cuda-13.0/bin/nvcc", "origin": "/usr/local/cuda*", "version": "13.0.48", "archs": [], "archs_source": "table"}],
     notes=["vllm-project/vllm#34470: Jetson Thor (JetPack 7, driver 580.00), torch 2.10.0+cu130: ptxas fatal: Value 'sm_110a' is not defined for option 'gpu-name'. vLLM's troubleshooting page (PR #31338, merged): the ptxas in the triton bundle does not know the device; set TRITON_PTXAS_PATH to the CUDA toolkit's ptxas.",
            "Assumed: L4T 38.2.0, Triton 3.6.0 (torch 2.10's pin; Requires-Dist text assumed), torch's arch list, the CUDA 13.0 toolkit at /usr/local/cuda-13.0 (JetPack 7 ships one). vllm left out: its version is not in the report (with an assumed vllm 0.15.1, pinned to torch 2.9.1, a vllm finding becomes Run first)."])
# r08b: r08 with Triton 3.5.1 (the report does not say which Triton ran)
snap("r08b-thor-torch2100-triton351.json",
     plat(machine="aarch64", os_="Ubuntu 24.04.4 LTS", l4t="38.2.0"), "580.00", "13.0", [("NVIDIA Thor", "11.0")],
     [py("/home/u/.venv/bin/python", J, "3.12.3", "2.10.0+cu130", "13.0",
         {"torch": "2.10.0+cu130", "triton": "3.5.1"},
         arch_flags=["sm_80", "sm_90", "sm_100", "sm_110", "sm_120", "compute_120"],
         kernels=[torch_entry(J, "2.10.0+cu130", ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120", "compute_120"], 'triton==3.6.0; platform_system == "Linux"')])],
     toolkits=[{"nvcc": "/usr/local/cuda-13.0/bin/nvcc", "origin": "/usr/local/cuda*", "version": "13.0.48", "archs": [], "archs_source": "table"}],
     notes=["variant of r08 with Triton 3.5.1: is the fix the same whichever Triton ran?"])

# R10 kvcache-ai/sglang PR #33 (+ kvcache-ai/ktransformers#1960): sgl-kernel 0.3.21 built with torch 2.9.1 beside a newer torch
K = "/home/u/kt/lib/python3.10/site-packages"
snap("r10-sglangkt33-rtxpro6000-torch2100-sglkernel0321.json",
     plat(os_="Ubuntu 22.04"), "580.95.05", "13.0", [("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "12.0")],
     [py("/home/u/kt/bin/python", K, "3.10.12", "2.10.0+cu130", "13.0",
         {"torch": "2.10.0+cu130", "sgl-kernel": "0.3.21+cu130", "sglang-kt": "0.6.1"},
         arch_flags=["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"],
         kernels=[kern("sgl-kernel", "0.3.21+cu130", [(K + "/sgl_kernel/sm100/common_ops.abi3.so", ["sm_90a", "sm_100a", "sm_120a"], 60,
                   {"links_torch": True, "cudart_major": 13, **syms("2.10.0+cu130", 400, 1, ["c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)"])})],
                   {"installer": "pip", "url": "https://github.com/sgl-project/whl/releases/download/v0.3.21/sgl_kernel-0.3.21+cu130-cp310-abi3-manylinux2014_x86_64.whl", "owns": ["sgl_kernel"]})])],
     notes=["kvcache-ai/sglang PR #33 (author: problem solved): after a commit that raised torch, importing sgl-kernel fails with undefined symbol c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool); sgl-kernel is compiled with torch 2.9.1 (the PR author, citing sglang's sgl-kernel README); fix: torch back to 2.9.1. Same symptom in kvcache-ai/ktransformers#1960 (sgl_kernel-0.3.21+cu130 wheel from sgl-project/whl; maintainer: the package set is aligned to torch==2.9.1).",
            "Assumed: the newer torch (2.10.0+cu130), GPU (SM120 is named in ktransformers#1960), driver, Python, the kernels' archs and the symbol count; the missing symbol is the report's."])

# r04: torch/version.py's mtime (the image's build, a day before the container was created)
_r4 = json.load(open("r04-dockersd7-container-rtx5090-torch260-xformers0292.json"))
_r4["pythons"][0]["torch"]["installed_at"] = 1738540800
json.dump(_r4, open("r04-dockersd7-container-rtx5090-torch260-xformers0292.json", "w"), indent=1)
