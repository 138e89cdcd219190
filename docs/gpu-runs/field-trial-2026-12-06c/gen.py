# Writes the r*-*.json snapshots of field-trial-2026-12-06c.md (helpers as in ../field-trial-2026-12-06b/gen.py).
import json
def plat(machine="x86_64", os_="Ubuntu 22.04", windows=False, wsl2=False, container=False, l4t=None, extra=None):
    p = {"machine": machine, "os": os_, "wsl2": wsl2, "container": container,
         "nvidia_device_nodes": not windows, "libcuda_loadable": True,
         "cuda_visible_devices": None, "cpus": 16, "memory_available_bytes": 68719476736}
    if windows: p["windows"] = True
    if l4t: p["l4t"] = l4t
    if extra: p.update(extra)
    return p
def snap(name, platform, driver, cuda, gpus, pythons, toolkits=(), compilers=(), env=None, notes=()):
    d = {"schema_version": 1, "torchfix_version": "0.1.0", "what_if": False,
         "platform": platform, "driver": {"version": driver, "cuda_version": cuda, "source": "nvml" if driver else "cuda_driver"},
         "gpus": [{"index": i, "name": n, "compute_capability": cc, "memory_bytes": None, "source": "nvml"} for i, (n, cc) in enumerate(gpus)],
         "toolkits": list(toolkits), "compilers": list(compilers), "pythons": pythons,
         "environment": env or {}, "notes": list(notes)}
    json.dump(d, open(name, "w"), indent=1)
def py(interp, site, pyver, torch, tcuda, dists, kernels=(), arch_flags=(), origin="VIRTUAL_ENV", loc=None):
    return {"interpreter": interp, "origin": origin, "status": "ok", "error": "", "python_version": pyver,
            "site_packages": site,
            "torch": {"version": torch, "cuda": tcuda, "hip": None, "arch_flags": list(arch_flags), "cudnn": None,
                      "location": loc or (site + "/torch")},
            "distributions": dists, "kernels": list(kernels)}
def kern(dist, ver, bins, prov=None):
    prov = dict(prov or {"installer": "pip", "owns": [dist.replace("-", "_")]})
    majors = [ext["cudart_major"] for _, _, _, ext in bins if "cudart_major" in ext]
    if majors: prov.setdefault("cuda_major", majors[0])  # as src/binary/scan.cpp records it from the libcudart.so.N
    return {"distribution": dist, "version": ver, "cuda": None, "provenance": prov,
            "binaries": [{"path": path, "groups": [{"images": imgs, "modules": mods}], **ext} for path, imgs, mods, ext in bins]}
def syms(torch, needed, missing, examples):
    return {"torch_symbols": {"torch": torch, "needed": needed, "missing": missing, "examples": examples}}
def nvcc(path, version, origin="PATH"):
    return {"nvcc": path, "origin": origin, "version": version, "archs": [], "archs_source": "table"}
GCC = lambda v: {"family": "gcc", "path": "/usr/bin/g++", "version": v}

# R1 state-spaces/mamba#50: NGC pytorch:23.06 container (torch 2.1.0a0+4136153), causal-conv1d 1.0.2 release wheel built for torch 2.1 -> undefined symbol
N = "/usr/local/lib/python3.10/dist-packages"
snap("r01-mamba50-ngc2306-torch210a0-causalconv1d102.json",
     plat(os_="Ubuntu 22.04 (container)", container=True), "535.104.05", "12.2", [("NVIDIA A100-SXM4-80GB", "8.0")],
     [py("/usr/bin/python", N, "3.10.6", "2.1.0a0+4136153", "12.1",
         {"torch": "2.1.0a0+4136153", "causal-conv1d": "1.0.2", "mamba-ssm": "1.0.1"}, origin="PATH",
         arch_flags=["sm_52", "sm_60", "sm_61", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_90", "compute_90"],
         kernels=[kern("causal-conv1d", "1.0.2", [(N + "/causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so", ["sm_70", "sm_80", "sm_87", "sm_90"], 12,
                   {"links_torch": True, "cudart_major": 12, **syms("2.1.0a0+4136153", 150, 1, ["c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)"])})],
                   {"installer": "pip", "owns": ["causal_conv1d", "causal_conv1d_cuda"],
                    "url": "https://github.com/Dao-AILab/causal-conv1d/releases/download/v1.0.2/causal_conv1d-1.0.2+cu122torch2.1cxx11abiTRUE-cp310-cp310-linux_x86_64.whl"})])],
     toolkits=[nvcc("/usr/local/cuda/bin/nvcc", "12.1.105")], compilers=[GCC("11.3.0")],
     env={"NVIDIA_PYTORCH_VERSION": "23.06", "NVIDIA_VISIBLE_DEVICES": "all"},
     notes=["state-spaces/mamba#50: in an NGC 23.06 container (torch 2.1.0a0+4136153, nvcc 12.1) the wheel causal_conv1d-1.0.2+cu122torch2.1cxx11abiTRUE-cp310-cp310-linux_x86_64.whl fails to import (undefined symbol). Reporter: installation is ok after building from source in the container (export MAMBA_FORCE_BUILD=TRUE; pip install .).",
            "Assumed: GPU, driver, mamba-ssm version, the .so's archs, the missing symbol (the report shows it only as a screenshot) and its count; the release URL is assumed to be the wheel's download address (the report names only the file)."])

# R2 NVlabs/tiny-cuda-nn#284: python setup.py install (egg), gcc 11.3, torch 2.0.0, CUDA 11.7 -> undefined std::__exception_ptr::exception_ptr::_M_addref
C = "/home/u/miniconda3/envs/nerf/lib/python3.8/site-packages"
E = C + "/tinycudann-1.7-py3.8-linux-x86_64.egg"
snap("r02-tcnn284-egg-gcc11-torch200-cu117.json",
     plat(os_="Ubuntu 22.04.2 LTS"), "530.30.02", "12.1", [("NVIDIA GeForce RTX 3090", "8.6")],
     [py("/home/u/miniconda3/envs/nerf/bin/python", C, "3.8.5", "2.0.0+cu117", "11.7",
         {"torch": "2.0.0+cu117", "tinycudann": "1.7"}, origin="CONDA_PREFIX",
         arch_flags=["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"],
         kernels=[kern("tinycudann", "1.7", [(E + "/tinycudann_bindings/_86_C.cpython-38-x86_64-linux-gnu.so", ["sm_86"], 40,
                   {"links_torch": True, "cudart_major": 11, **syms("2.0.0+cu117", 180, 0, [])})],
                   {"installer": "", "owns": ["tinycudann", "tinycudann_bindings"]})])],
     toolkits=[nvcc("/usr/local/cuda-11.7/bin/nvcc", "11.7.99")], compilers=[GCC("11.3.0")],
     notes=["NVlabs/tiny-cuda-nn#284: bindings/torch installed with python setup.py install (an egg) under PyTorch 2.0.0, CUDA 11.7, GCC 11.3; import fails: _86_C...so: undefined symbol _ZNSt15__exception_ptr13exception_ptr9_M_addrefEv. Reporter: resolved by downgrading gcc/g++ 11 to 9 (and rebuilding).",
            "The missing name is libstdc++'s, not torch's, so torch_symbols counts none missing (the probe checks names torch exports). Assumed: GPU (the _86_C module says 8.6), driver, the conda env, torch's local tag, counts. Whether the probe sees an egg install at all is not assumed here: this snapshot lists it."])

# R3 open-mmlab/mmdetection#3991: mmcv 1.1.5 (with ops) beside pytorch 1.4.0, CUDA 10.1 -> undefined symbol c10::Symbol::fromQualString
M = "/home/ubuntu/miniconda3/envs/py37-cuda101/lib/python3.7/site-packages"
snap("r03-mmdet3991-torch140-cu101-mmcvfull115.json",
     plat(os_="Ubuntu 18.04"), "440.100", "10.2", [("NVIDIA GeForce RTX 2080 Ti", "7.5")],
     [py("/home/ubuntu/miniconda3/envs/py37-cuda101/bin/python", M, "3.7.9", "1.4.0", "10.1",
         {"torch": "1.4.0", "torchvision": "0.5.0", "mmcv-full": "1.1.5", "mmdet": "2.5.0"}, origin="CONDA_PREFIX",
         arch_flags=["sm_35", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "compute_75"],
         kernels=[kern("mmcv-full", "1.1.5", [(M + "/mmcv/_ext.cpython-37m-x86_64-linux-gnu.so", ["sm_60", "sm_70", "sm_75"], 90,
                   {"links_torch": True, "cudart_major": 10, **syms("1.4.0", 300, 1, ["c10::Symbol::fromQualString(std::string const&)"])})],
                   {"installer": "pip", "owns": ["mmcv"]})])],
     toolkits=[nvcc("/usr/local/cuda-10.1/bin/nvcc", "10.1.243")], compilers=[GCC("7.5.0")],
     notes=["open-mmlab/mmdetection#3991: pytorch 1.4.0, cuda 10.1, mmcv 1.1.5: import fails, mmcv/_ext...so: undefined symbol _ZN3c106Symbol14fromQualStringERKSs. Maintainer: mmcv-full built for another torch (e.g. torch upgraded after installing mmcv-full); reporter: solved by recompiling mmcv on the machine.",
            "Assumed: the distribution name mmcv-full (the report says mmcv 1.1.5; its _ext exists only in the ops build), GPU, driver, mmdet version, the _ext archs and the symbol count; the missing symbol is the report's."])

# R4 openclimatefix satflow#18: conda-forge solved pytorch to its CPU build -> torch.cuda.is_available() False
S = "/home/u/miniconda3/envs/satflow/lib/python3.9/site-packages"
snap("r04-satflow18-conda-forge-cpu-pytorch190.json",
     plat(os_="Ubuntu 20.04"), "465.19.01", "11.3", [("NVIDIA GeForce RTX 3090", "8.6")],
     [py("/home/u/miniconda3/envs/satflow/bin/python", S, "3.9.5", "1.9.0", None,
         {"pytorch": "1.9.0", "torchvision": "0.10.0", "pytorch-lightning": "1.3.7"}, origin="CONDA_PREFIX",
         kernels=[kern("pytorch", "1.9.0", [], {"installer": "conda", "conda_channel": "conda-forge",
                                                 "conda_build": "cpu_py39h0a8e9e2_1", "owns": ["torch"]})])],
     notes=["openclimatefix satflow#18: an environment.yml with rasterio, cfgrib, cartopy, satpy and PyTorch from conda-forge gave torch.cuda.is_available() False (conda-forge's CPU build was chosen). Fix (JackKelly; reporter: that fixed it): conda install pytorch::pytorch (the pytorch channel's CUDA build).",
            "Assumed: pytorch 1.9.0 and its conda-forge build string, Python, GPU, driver, the other packages."])

# R5 shiyu-coder/Kronos#71: project container on a host driver of CUDA 11.4, requirements leave torch unpinned -> newest torch (CUDA 12) cannot init
K = "/opt/python11Venv/lib/python3.11/site-packages"
snap("r05-kronos71-container-driver470-torch280.json",
     plat(os_="Debian GNU/Linux 12 (container)", container=True), "470.182.03", "11.4", [("Tesla T4", "7.5")],
     [py("/opt/python11Venv/bin/python", K, "3.11.13", "2.8.0+cu128", "12.8",
         {"torch": "2.8.0+cu128", "numpy": "2.3.2", "pandas": "2.3.1"}, origin="VIRTUAL_ENV",
         arch_flags=["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"])],
     env={"NVIDIA_VISIBLE_DEVICES": "all"},
     notes=["shiyu-coder/Kronos#71: started the project in a container; CUDA initialization: The NVIDIA driver on your system is too old (found version 11040); the host driver cannot be updated. Reporter: after changing requirements.txt to numpy<2 and torch==1.13.1 the install succeeded and it runs.",
            "Assumed: the torch pip resolved from the unpinned requirement (2.8.0, PyPI's default build, CUDA 12.8), driver 470.182.03 (the report gives CUDA 11.4), GPU, Python, numpy/pandas versions."])

# R6 Djdefrag/QualityScaler#9: fresh Windows 10 VM (K80): import torch fails loading caffe2_detectron_ops.dll (its VC++ runtime is missing)
Q = "C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python310\\lib\\site-packages"
qs = py("C:\\Users\\u\\AppData\\Local\\Programs\\Python\\Python310\\python.exe", Q, "3.10.5", "1.12.0+cu113", "11.3",
        {"torch": "1.12.0+cu113", "torchvision": "0.13.0+cu113"}, origin="PATH",
        arch_flags=["sm_37", "sm_50", "sm_60", "sm_61", "sm_70", "sm_75", "sm_80", "sm_86", "compute_37"], loc=Q + "\\torch")
qs["status"] = "import_failed"
qs["error"] = 'OSError: [WinError 126] The specified module could not be found. Error loading "' + Q + '\\torch\\lib\\caffe2_detectron_ops.dll" or one of its dependencies.'
snap("r06-qualityscaler9-win10-k80-torch1120-vcredist.json",
     plat(os_="Windows 10 Pro 10.0.19044 (Azure VM)", windows=True), "472.98", "11.4", [("Tesla K80", "3.7")],
     [qs],
     notes=["Djdefrag/QualityScaler#9: on a fresh Windows 10 install (K80 VM) QualityScaler fails: The specified module could not be found. Error loading torch\\lib\\caffe2_detectron_ops.dll or one of its dependencies. Reporter: resolved by installing https://aka.ms/vs/16/release/vc_redist.x64.exe (the Visual C++ runtime); maintainer: indeed a dependency on the Visual C++ libraries.",
            "Assumed: torch 1.12.0+cu113 and torchvision (the report gives no versions), Python, driver (K80's last branch, R470), the message's path (the report gives it relative to site-packages)."])

# R7 pytorch/pytorch#94585: torch.compile: /usr/bin/ld: cannot find -lcuda (only libcuda.so.1 exists); a user's fix: link libcuda.so
P = "/mnt/data2/wwh/anaconda3/envs/wwh/lib/python3.8/site-packages"
snap("r07-pytorch94585-compile-lcuda-torch200dev.json",
     plat(os_="Ubuntu 20.04"), "525.60.13", "12.0", [("NVIDIA A100-PCIE-40GB", "8.0")],
     [py("/mnt/data2/wwh/anaconda3/envs/wwh/bin/python", P, "3.8.16", "2.0.0.dev20230209+cu117", "11.7",
         {"torch": "2.0.0.dev20230209+cu117", "torchvision": "0.15.0.dev20230209+cu117", "pytorch-triton": "2.0.0+0d7e753227"}, origin="CONDA_PREFIX",
         arch_flags=["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"])],
     compilers=[GCC("9.4.0")],
     notes=["pytorch/pytorch#94585: resnet18 runs on the GPU, torch.compile fails: /usr/bin/ld: cannot find -lcuda (Triton links its launcher with -lcuda). A user's fix in the thread: ldconfig -p | grep libcuda shows only libcuda.so.1; ln -s .../libcuda.so.1 .../libcuda.so; the maintainers closed it as resolved (a duplicate of #92745).",
            "Assumed: the nightly date, GPU (the TF32 warning says Ampere or newer), driver, gcc. Whether a libcuda.so without .1 is on the link path is not a snapshot field."])

# R8 deepspeedai/DeepSpeed-MII#277: toolkit 11.7 beside torch 2.1.0 (CUDA 12.1): DeepSpeed op build refuses (CUDA major mismatch)
D = "/home/u/mii/lib/python3.10/site-packages"
snap("r08-mii277-toolkit117-torch210-cu121.json",
     plat(os_="Ubuntu 20.04"), "525.105.17", "12.0", [("NVIDIA A100-SXM4-80GB", "8.0")],
     [py("/home/u/mii/bin/python", D, "3.10.13", "2.1.0", "12.1",
         {"torch": "2.1.0", "deepspeed": "0.12.2", "deepspeed-mii": "0.1.1"},
         arch_flags=["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"])],
     toolkits=[nvcc("/usr/local/cuda-11.7/bin/nvcc", "11.7.99")], compilers=[GCC("9.4.0")],
     env={"CUDA_HOME": "/usr/local/cuda-11.7"},
     notes=["deepspeedai/DeepSpeed-MII#277: pip3 install deepspeed-mii, then inference: DeepSpeed Op Builder: Installed CUDA version 11.7 does not match the version torch was compiled with 12.1. Maintainer: the majors must match; pip3 uninstall torch torchaudio torchvision -y; pip3 install torch --index-url https://download.pytorch.org/whl/cu118. Reporter: got it; closed as resolved.",
            "Assumed: torch 2.1.0 (PyPI's default, CUDA 12.1, in November 2023), deepspeed and mii versions, GPU, driver (the report's screenshot), Python."])

# R9 pytorch/vision#4180 (+ #1405): Jetson, detectron2 demo: No such operator torchvision::nms (torchvision 0.7.0a0 egg without its C++ ops)
J = "/usr/local/lib/python3.6/dist-packages"
snap("r09-vision4180-jetson-torch180-torchvision070a0.json",
     plat(machine="aarch64", os_="Ubuntu 18.04.5 LTS", l4t="32.5.1"), None, "10.2", [("Xavier", "7.2")],
     [py("/usr/bin/python3", J, "3.6.9", "1.8.0", "10.2",
         {"torch": "1.8.0", "torchvision": "0.7.0a0+78ed10c", "detectron2": "0.4"}, origin="PATH",
         arch_flags=["sm_53", "sm_62", "sm_72"])],
     toolkits=[nvcc("/usr/local/cuda-10.2/bin/nvcc", "10.2.89", origin="/usr/local/cuda*")], compilers=[GCC("7.5.0")],
     notes=["pytorch/vision#4180 (and the same user in #1405): Jetson, detectron2 demo: RuntimeError: No such operator torchvision::nms, with torchvision-0.7.0a0+78ed10c-py3.6-linux-aarch64.egg. Maintainers: an old torchvision; no Jetson binaries; compile torchvision from source so that the C++ operators are there (closed as answered).",
            "Assumed: torch 1.8.0 (NVIDIA's JetPack 4.5 wheel), the Jetson (Xavier, 7.2), L4T 32.5.1, detectron2's version; torchvision's egg is listed without a kernels entry (it has no _C)."])

# R10 ultralytics/ultralytics#5059: torchvision CPU build beside a CUDA torch: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend
U = "/home/u/yolo/lib/python3.10/site-packages"
snap("r10-ultralytics5059-torch210-cu118-torchvision016cpu.json",
     plat(os_="Ubuntu 22.04"), "535.129.03", "12.2", [("NVIDIA GeForce RTX 3080", "8.6")],
     [py("/home/u/yolo/bin/python", U, "3.10.12", "2.1.0+cu118", "11.8",
         {"torch": "2.1.0+cu118", "torchvision": "0.16.0+cpu", "ultralytics": "8.0.200"},
         arch_flags=["sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_37", "sm_90"],
         kernels=[kern("torchvision", "0.16.0+cpu", [(U + "/torchvision/_C.so", [], 0, {"links_torch": True})],
                       {"installer": "pip", "owns": ["torchvision"], "local_version": "cpu",
                        "url": "https://download.pytorch.org/whl/cpu"})])],
     notes=["ultralytics/ultralytics#5059: NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend. A user (S-Gaurisankar): the torchvision was the CPU build; removed it and installed pip install torchvision --index-url https://download.pytorch.org/whl/cu118 (maintainer thanks; closed).",
            "Assumed: the versions (torch 2.1.0+cu118, torchvision 0.16.0+cpu), GPU, driver, Python; the provenance url is the index the CPU torchvision came from (assumed)."])

# Variants that separate causes (not reports of their own)
# r02v: r02 without the egg in the snapshot (what a probe that does not read eggs would record)
snap("r02v-tcnn284-no-egg.json",
     plat(os_="Ubuntu 22.04.2 LTS"), "530.30.02", "12.1", [("NVIDIA GeForce RTX 3090", "8.6")],
     [py("/home/u/miniconda3/envs/nerf/bin/python", C, "3.8.5", "2.0.0+cu117", "11.7",
         {"torch": "2.0.0+cu117", "tinycudann": "1.7"}, origin="CONDA_PREFIX",
         arch_flags=["sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86"])],
     toolkits=[nvcc("/usr/local/cuda-11.7/bin/nvcc", "11.7.99")], compilers=[GCC("11.3.0")],
     notes=["variant of r02 with no kernels entry for the egg"])
# r01b: r01 outside a container (the same venv on a host): does the fix change with the container?
snap("r01b-mamba50-host-torch210a0-causalconv1d102.json",
     plat(os_="Ubuntu 22.04"), "535.104.05", "12.2", [("NVIDIA A100-SXM4-80GB", "8.0")],
     [py("/usr/bin/python", N, "3.10.6", "2.1.0a0+4136153", "12.1",
         {"torch": "2.1.0a0+4136153", "causal-conv1d": "1.0.2", "mamba-ssm": "1.0.1"}, origin="PATH",
         arch_flags=["sm_52", "sm_60", "sm_61", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_90", "compute_90"],
         kernels=[kern("causal-conv1d", "1.0.2", [(N + "/causal_conv1d_cuda.cpython-310-x86_64-linux-gnu.so", ["sm_70", "sm_80", "sm_87", "sm_90"], 12,
                   {"links_torch": True, "cudart_major": 12, **syms("2.1.0a0+4136153", 150, 1, ["c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >)"])})],
                   {"installer": "pip", "owns": ["causal_conv1d", "causal_conv1d_cuda"],
                    "url": "https://github.com/Dao-AILab/causal-conv1d/releases/download/v1.0.2/causal_conv1d-1.0.2+cu122torch2.1cxx11abiTRUE-cp310-cp310-linux_x86_64.whl"})])],
     toolkits=[nvcc("/usr/local/cuda/bin/nvcc", "12.1.105")], compilers=[GCC("11.3.0")],
     notes=["variant of r01 with container false"])
