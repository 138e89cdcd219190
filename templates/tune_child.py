# torchfix's measurement child (torchfix tune, torchfix doctor --run).
#
# Runs inside the user's own Python and torch, started by torchfix through its
# process runner with a timeout. Prints exactly one JSON document on stdout
# (the contract is documented in docs/tune.md and parsed by
# src/core/tune/tune.cpp); progress goes to the file given with --progress, one
# line, overwritten at each step. Every outcome, including "no torch", is a
# JSON document with exit code 0; a non-zero exit means this script failed.
#
# Usage: python3 tune_child.py --mode tune|run|model [--quick] [--gpu-index N]
#        [--package DIST]... [--progress FILE]
#        model mode: --model NAME [--batch-size N] [--steps N] [--warmup N]
#        [--find-batch --batch-limit N] --settings CC=ID,ID... (tune_model.py)

import argparse
import json
import os
import sys
import time
import traceback

SCHEMA = 1

ENV_NAMES = [
    "PYTORCH_ALLOC_CONF",
    "PYTORCH_CUDA_ALLOC_CONF",
    "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE",
    "CUDA_MODULE_LOADING",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_PYTORCH_VERSION",
    "PIP_CONSTRAINT",
]


class Progress:
    def __init__(self, path):
        self.path = path

    def say(self, text):
        if not self.path:
            return
        try:
            # The folder is torchfix's private one (mkdtemp); O_NOFOLLOW and
            # 0600 all the same, so no link is ever written through.
            tmp = self.path + ".tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text + "\n")
            os.replace(tmp, self.path)
        except OSError:
            pass


def error_text(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text.strip().splitlines()[0][:400] if text.strip() else type(exc).__name__


def attribute(obj, name):
    """Returns obj.name, or None: torch's backend objects raise AssertionError for unknown names."""
    try:
        return getattr(obj, name)
    except Exception:
        return None


def settings(torch):
    out = {}
    m = torch.backends.cuda.matmul
    out["matmul_allow_tf32"] = bool(attribute(m, "allow_tf32"))
    out["matmul_fp32_precision"] = attribute(m, "fp32_precision")
    getp = attribute(torch, "get_float32_matmul_precision")
    out["float32_matmul_precision"] = getp() if getp else None
    out["cudnn_allow_tf32"] = bool(torch.backends.cudnn.allow_tf32)
    out["cudnn_benchmark"] = bool(torch.backends.cudnn.benchmark)
    conv = attribute(torch.backends.cudnn, "conv")
    out["cudnn_conv_fp32_precision"] = attribute(conv, "fp32_precision") if conv else None
    return out


def allocator(torch):
    out = {"backend": None, "conf": None, "conf_variable": None}
    for name in ("PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"):
        if os.environ.get(name):
            out["conf"] = os.environ[name]
            out["conf_variable"] = name
            break
    try:
        out["backend"] = torch.cuda.get_allocator_backend()
    except Exception:  # older torch
        pass
    return out


class Tf32:
    """Sets fp32 matmuls to TF32 (or back) with the installed torch's API."""

    def __init__(self, torch, on):
        self.torch = torch
        self.on = on

    def __enter__(self):
        m = self.torch.backends.cuda.matmul
        self.saved = (attribute(m, "fp32_precision"), m.allow_tf32)
        if self.saved[0] is not None:
            m.fp32_precision = "tf32" if self.on else "ieee"
        else:
            m.allow_tf32 = self.on

    def __exit__(self, *exc):
        m = self.torch.backends.cuda.matmul
        if self.saved[0] is not None:
            m.fp32_precision = self.saved[0]
        else:
            m.allow_tf32 = self.saved[1]


def timed(torch, fn, min_seconds, max_iterations):
    """Runs fn after two warm-up calls until min_seconds have passed; returns (iterations, seconds)."""
    fn()
    fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # One timed call sizes the batch so that Python overhead stays out of it.
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end) / 1000.0, 1e-6)
    iterations = int(max(3, min(max_iterations, min_seconds / one)))
    start.record()
    for _ in range(iterations):
        fn()
    end.record()
    end.synchronize()
    return iterations, start.elapsed_time(end) / 1000.0


def matmul(torch, device, dtype_name, n, min_seconds, cc):
    row = {"dtype": dtype_name, "n": n, "iterations": 0, "seconds": None, "tflops": None, "error": None, "skipped": None}
    try:
        if dtype_name == "fp8":
            if cc < (8, 9):
                row["skipped"] = "FP8 tensor cores need compute capability 8.9 or newer"
                return row
            if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
                row["skipped"] = "this torch has no float8 matmul (torch._scaled_mm)"
                return row
            a = torch.randn(n, n, device=device).to(torch.float8_e4m3fn)
            b = torch.randn(n, n, device=device).to(torch.float8_e4m3fn).t()
            one = torch.tensor(1.0, device=device)

            def fn():
                return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
            if dtype_name == "bf16" and cc < (8, 0):
                row["skipped"] = "bf16 tensor cores need compute capability 8.0 or newer"
                return row
            a = torch.randn(n, n, device=device, dtype=dtype)
            b = torch.randn(n, n, device=device, dtype=dtype)

            def fn():
                return torch.mm(a, b)

        if dtype_name == "tf32":
            with Tf32(torch, True):
                iterations, seconds = timed(torch, fn, min_seconds, 200)
        else:
            iterations, seconds = timed(torch, fn, min_seconds, 200)
        row["iterations"] = iterations
        row["seconds"] = seconds
        row["tflops"] = 2.0 * n * n * n * iterations / seconds / 1e12
    except Exception as exc:
        row["error"] = error_text(exc)
    return row


def conv(torch, device, quick, min_seconds):
    batch = 16 if quick else 32
    row = {"shape": "conv2d 3x3, %dx64x56x56 -> 128 channels, fp32" % batch, "benchmark_off_ms": None,
           "benchmark_on_ms": None, "error": None}
    saved = torch.backends.cudnn.benchmark
    try:
        layer = torch.nn.Conv2d(64, 128, 3, padding=1).to(device)
        x = torch.randn(batch, 64, 56, 56, device=device)
        with torch.no_grad():
            for key, flag in (("benchmark_off_ms", False), ("benchmark_on_ms", True)):
                torch.backends.cudnn.benchmark = flag
                iterations, seconds = timed(torch, lambda: layer(x), min_seconds, 200)
                row[key] = 1000.0 * seconds / iterations
    except Exception as exc:
        row["error"] = error_text(exc)
    finally:
        torch.backends.cudnn.benchmark = saved
    return row


def smoke(torch, device):
    start = time.time()
    out = {"ok": False, "error": None, "seconds": None}
    try:
        x = torch.arange(1 << 16, device=device, dtype=torch.float32)
        total = float((x * 2).sum().item())
        expected = float((1 << 16) * ((1 << 16) - 1))
        if abs(total - expected) > expected * 1e-5:
            out["error"] = "wrong result from a torch kernel: %r instead of %r" % (total, expected)
        else:
            out["ok"] = True
    except Exception as exc:
        out["error"] = error_text(exc)
    out["seconds"] = time.time() - start
    return out


# Simple public ops of common CUDA extensions, launched on the GPU. Each gets
# the torch module and the device and returns a description of what ran.
def op_torchvision(torch, device, module):
    import torchvision.ops

    boxes = torch.tensor([[0.0, 0.0, 10.0, 10.0], [1.0, 1.0, 11.0, 11.0]], device=device)
    scores = torch.tensor([0.9, 0.8], device=device)
    keep = torchvision.ops.nms(boxes, scores, 0.5)
    torch.cuda.synchronize()
    return "torchvision.ops.nms (%d kept)" % keep.numel()


def op_flash_attn(torch, device, module):
    from flash_attn import flash_attn_func

    q = torch.randn(1, 128, 4, 64, device=device, dtype=torch.float16)
    flash_attn_func(q, q, q)
    torch.cuda.synchronize()
    return "flash_attn.flash_attn_func (fp16, 1x128x4x64)"


def op_xformers(torch, device, module):
    import xformers.ops

    q = torch.randn(1, 128, 4, 64, device=device, dtype=torch.float16)
    xformers.ops.memory_efficient_attention(q, q, q)
    torch.cuda.synchronize()
    return "xformers.ops.memory_efficient_attention (fp16)"


def op_bitsandbytes(torch, device, module):
    import bitsandbytes.functional as F

    F.quantize_blockwise(torch.randn(4096, device=device))
    torch.cuda.synchronize()
    return "bitsandbytes.functional.quantize_blockwise"


def op_causal_conv1d(torch, device, module):
    from causal_conv1d import causal_conv1d_fn

    x = torch.randn(1, 64, 128, device=device, dtype=torch.float16)
    w = torch.randn(64, 4, device=device, dtype=torch.float16)
    causal_conv1d_fn(x, w)
    torch.cuda.synchronize()
    return "causal_conv1d.causal_conv1d_fn (fp16)"


def op_triton(torch, device, module):
    import triton
    import triton.language as tl

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)

    x = torch.zeros(1024, device=device)
    add_one[(4,)](x, 1024, BLOCK=256)
    torch.cuda.synchronize()
    if float(x.sum().item()) != 1024.0:
        raise RuntimeError("Triton kernel gave a wrong result")
    return "a Triton kernel compiled (ptxas) and launched"


OPS = {
    "torchvision": ("torchvision", op_torchvision),
    "flash-attn": ("flash_attn", op_flash_attn),
    "flash_attn": ("flash_attn", op_flash_attn),
    "xformers": ("xformers", op_xformers),
    "bitsandbytes": ("bitsandbytes", op_bitsandbytes),
    "causal-conv1d": ("causal_conv1d", op_causal_conv1d),
    "causal_conv1d": ("causal_conv1d", op_causal_conv1d),
    "triton": ("triton", op_triton),
    "pytorch-triton": ("triton", op_triton),
}


def import_name(distribution):
    if distribution in OPS:
        return OPS[distribution][0]
    try:
        from importlib import metadata

        top = metadata.distribution(distribution).read_text("top_level.txt")
        if top and top.split():
            return top.split()[0]
    except Exception:
        pass
    return distribution.replace("-", "_")


def extension(torch, device, distribution):
    module_name = import_name(distribution)
    row = {"distribution": distribution, "module": module_name, "imported": False, "launched": None, "op": None,
           "error": None, "check": "launch"}
    try:
        module = __import__(module_name)
        row["imported"] = True
    except Exception as exc:
        row["error"] = error_text(exc)
        return row
    if distribution not in OPS:
        # No public op known: load its CUDA modules on the GPU instead (kernel_load.py).
        row["check"] = "load"
        try:
            import kernel_load

            row["launched"], row["op"], row["error"] = kernel_load.load_modules(torch, device, module)
        except Exception as exc:
            row["op"] = "no simple public op known: import only (its modules could not be loaded: %s)" % error_text(exc)
        return row
    try:
        row["op"] = OPS[distribution][1](torch, device, module)
        row["launched"] = True
    except Exception as exc:
        row["launched"] = False
        row["error"] = error_text(exc)
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["tune", "run", "model"], default="tune")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--gpu-index", type=int, action="append", default=[])
    parser.add_argument("--package", action="append", default=[])
    parser.add_argument("--progress", default="")
    parser.add_argument("--model", choices=["resnet50", "vit_b_16", "transformer"], default="resnet50")
    parser.add_argument("--batch-size", type=int, default=0)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--find-batch", action="store_true")
    parser.add_argument("--batch-limit", type=int, default=8192)
    parser.add_argument("--settings", action="append", default=[], help="CC=ID,ID,... (decided by torchfix)")
    args = parser.parse_args()
    model_settings = {}
    for item in args.settings:
        cc, _, ids = item.partition("=")
        model_settings[cc] = [i for i in ids.split(",") if i]
    progress = Progress(args.progress)
    began = time.time()
    result = {"schema": SCHEMA, "mode": args.mode, "quick": args.quick, "status": "ok", "message": None,
              "python": sys.version.split()[0], "torch": None, "settings": None, "allocator": None,
              "environment": {name: os.environ.get(name) for name in ENV_NAMES}, "gpus": []}

    def finish():
        result["elapsed_seconds"] = time.time() - began
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()

    progress.say("importing torch")
    try:
        import torch
    except ImportError as exc:
        result["status"] = "no_torch"
        result["message"] = "torch is not installed in %s (%s)" % (sys.executable, error_text(exc))
        return finish()
    except Exception as exc:
        result["status"] = "import_failed"
        result["message"] = "import torch failed: " + error_text(exc)
        return finish()
    result["torch"] = {"version": torch.__version__, "cuda": torch.version.cuda,
                       "hip": getattr(torch.version, "hip", None), "location": os.path.dirname(torch.__file__)}
    try:
        result["torch"]["cudnn"] = torch.backends.cudnn.version()
    except Exception:
        result["torch"]["cudnn"] = None
    result["settings"] = settings(torch)
    if not torch.version.cuda:
        result["status"] = "cpu_only"
        result["message"] = "torch %s is a %s build: it cannot use an NVIDIA GPU" % (
            torch.__version__, "ROCm" if result["torch"]["hip"] else "CPU-only")
        return finish()
    try:
        count = torch.cuda.device_count()
        available = torch.cuda.is_available()
    except Exception as exc:
        count, available = 0, False
        result["message"] = error_text(exc)
    if not available or count == 0:
        result["status"] = "no_gpu"
        result["message"] = "torch %s sees no CUDA GPU%s" % (
            torch.__version__, (": " + result["message"]) if result["message"] else "")
        return finish()
    indexes = args.gpu_index or list(range(count))
    bad = [i for i in indexes if i < 0 or i >= count]
    if bad:
        result["status"] = "bad_gpu_index"
        result["message"] = "--gpu-index %d: torch sees %d GPU(s), numbered 0 to %d" % (bad[0], count, count - 1)
        return finish()
    result["allocator"] = allocator(torch)
    n = 4096 if args.quick else 8192
    min_seconds = 0.25 if args.quick else 1.0
    for index in indexes:
        device = torch.device("cuda", index)
        props = torch.cuda.get_device_properties(index)
        cc = (props.major, props.minor)
        gpu = {"index": index, "name": props.name, "cc": "%d.%d" % cc,
               "sm_count": getattr(props, "multi_processor_count", None),
               "memory_bytes": getattr(props, "total_memory", None), "smoke": None, "extensions": [],
               "matmul": [], "conv": None}
        label = "GPU %d (%s)" % (index, props.name)
        torch.cuda.set_device(index)
        progress.say(label + ": smoke test")
        gpu["smoke"] = smoke(torch, device)
        for distribution in args.package:
            progress.say(label + ": " + distribution)
            gpu["extensions"].append(extension(torch, device, distribution))
        if args.mode == "model" and gpu["smoke"]["ok"]:
            import tune_model
            ids = model_settings.get(gpu["cc"])
            if ids is None:
                gpu["model"] = {"name": args.model, "error": "torchfix gave no settings for compute capability " +
                                gpu["cc"], "runs": []}
            else:
                gpu["model"] = tune_model.measure(torch, device, label, args, ids, progress.say)
        if args.mode == "tune" and gpu["smoke"]["ok"]:
            for dtype_name in ("fp32", "tf32", "bf16", "fp16", "fp8"):
                progress.say("%s: matmul %s %dx%d" % (label, dtype_name, n, n))
                gpu["matmul"].append(matmul(torch, device, dtype_name, n, min_seconds, cc))
                torch.cuda.empty_cache()
            progress.say(label + ": conv2d, cudnn.benchmark off and on")
            gpu["conv"] = conv(torch, device, args.quick, min_seconds / 2)
            torch.cuda.empty_cache()
        result["gpus"].append(gpu)
    return finish()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        sys.stderr.write(traceback.format_exc())
        sys.exit(3)
