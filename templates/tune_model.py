# torchfix tune --model: one training step of a real model, timed under each
# runtime setting (imported by tune_child.py; the JSON it returns is parsed by
# src/core/tune/tune_model.cpp and documented in docs/tune.md).
#
# Which settings apply to a GPU is decided by torchfix (core/tune_model), and
# handed over as --settings CC=ID,ID,...; this file only applies and times them.
# Timing: CUDA events around `steps` training steps after `warmup` steps, the
# same method as a hand-written loop; memory: torch.cuda.max_memory_allocated
# after torch.cuda.reset_peak_memory_stats.

import gc
import time

# Per model: the torchvision builder or our own transformer, the input shape
# per sample, the unit of throughput and the default batch.
MODELS = {
    "resnet50": {"unit": "images", "batch": 128, "shape": (3, 224, 224), "classes": 1000},
    "vit_b_16": {"unit": "images", "batch": 64, "shape": (3, 224, 224), "classes": 1000},
    "transformer": {"unit": "tokens", "batch": 16, "seq": 512, "width": 1024, "heads": 16, "layers": 8},
}


def error_text(exc):
    text = "%s: %s" % (type(exc).__name__, exc)
    return text.strip().splitlines()[0][:400] if text.strip() else type(exc).__name__


def build(torch, name):
    spec = MODELS[name]
    if name == "transformer":
        layer = torch.nn.TransformerEncoderLayer(spec["width"], spec["heads"], dim_feedforward=4 * spec["width"],
                                                 batch_first=True)
        return torch.nn.TransformerEncoder(layer, spec["layers"])
    import torchvision
    return getattr(torchvision.models, name)(weights=None)


def batch_of(torch, name, batch, device, channels_last):
    spec = MODELS[name]
    if name == "transformer":
        x = torch.randn(batch, spec["seq"], spec["width"], device=device)
        return x, None
    x = torch.randn((batch,) + spec["shape"], device=device)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    y = torch.randint(0, spec["classes"], (batch,), device=device)
    return x, y


def new_api(torch):
    """True on torch 2.9+, where fp32_precision replaces allow_tf32 (mixing the two raises there)."""
    try:
        return isinstance(torch.backends.cuda.matmul.fp32_precision, str)
    except Exception:
        return False


def read_tf32(torch):
    b = torch.backends
    if new_api(torch):
        return (b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision)
    return (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)


def write_tf32(torch, values):
    b = torch.backends
    if new_api(torch):
        b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision = values
    else:
        b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = values


class Settings:
    """Applies a set of setting ids for a `with` block; a setting not named
    keeps the value torch had when the child started (the user's defaults)."""

    def __init__(self, torch, ids, defaults):
        self.torch, self.ids, self.defaults = torch, set(ids), defaults

    def __enter__(self):
        benchmark, tf32 = self.defaults
        self.torch.backends.cudnn.benchmark = True if "cudnn_benchmark" in self.ids else benchmark
        if "tf32" in self.ids:
            write_tf32(self.torch, ("tf32", "tf32") if new_api(self.torch) else (True, True))
        else:
            write_tf32(self.torch, tf32)
        return self

    def __exit__(self, *exc):
        self.torch.backends.cudnn.benchmark, tf32 = self.defaults
        write_tf32(self.torch, tf32)
        return False


def grad_scaler(torch):
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


class Trainer:
    """One model on one GPU, trained for a few steps under chosen settings."""

    def __init__(self, torch, name, model, device, defaults):
        self.torch, self.name, self.model, self.device, self.defaults = torch, name, model, device, defaults

    def steps(self, batch, ids, steps, warmup):
        """Runs warmup + steps training steps; returns (milliseconds per step, peak bytes)."""
        torch, name, model, device = self.torch, self.name, self.model, self.device
        channels_last = "channels_last" in ids and name != "transformer"
        dtype = torch.bfloat16 if "bf16" in ids else torch.float16 if "fp16" in ids else None
        model.to(memory_format=torch.channels_last if channels_last else torch.contiguous_format)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        scaler = grad_scaler(torch) if dtype is torch.float16 else None
        x, y = batch_of(torch, name, batch, device, channels_last)

        def step():
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                out = model(x)
                loss = out.float().mean() if y is None else torch.nn.functional.cross_entropy(out, y)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()
                optimizer.step()

        with Settings(torch, ids, self.defaults):
            torch.cuda.reset_peak_memory_stats(device)
            for _ in range(warmup):
                step()
            torch.cuda.synchronize(device)
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(steps):
                step()
            end.record()
            end.synchronize()
            peak = torch.cuda.max_memory_allocated(device)
        return start.elapsed_time(end) / steps, peak

    def measure(self, batch, ids, steps, warmup):
        """Returns one run entry (docs/tune.md); memory is freed whatever happens."""
        entry = {"settings": list(ids), "batch": batch, "step_ms": None, "per_s": None, "max_memory_bytes": None,
                 "error": None}
        try:
            ms, peak = self.steps(batch, ids, steps, warmup)
            per_step = batch * MODELS[self.name].get("seq", 1)
            entry.update(step_ms=ms, per_s=per_step * 1000.0 / ms if ms > 0 else None, max_memory_bytes=peak)
        except Exception as exc:
            entry["error"] = ("out of memory: " if is_oom(self.torch, exc) else "") + error_text(exc)
        gc.collect()
        self.torch.cuda.empty_cache()
        return entry

    def fits(self, batch, ids):
        return self.measure(batch, ids, 1, 1)["error"] is None

    def largest_batch(self, start, ids, limit, say):
        """Doubles from `start` until a step fails, then bisects to within 1/16;
        returns (batch, tries, capped): capped when `limit` was reached first."""
        low, high, tries, batch = 0, None, 0, start
        while high is None and batch <= limit:
            say("largest batch: trying %d" % batch)
            tries += 1
            if self.fits(batch, ids):
                low, batch = batch, batch * 2
            else:
                high = batch
        if high is None:
            return low, tries, True
        while high - low > max(1, low // 16):
            mid = (low + high) // 2
            say("largest batch: trying %d (between %d and %d)" % (mid, low, high))
            tries += 1
            if self.fits(mid, ids):
                low = mid
            else:
                high = mid
        return low, tries, False


def is_oom(torch, exc):
    oom = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom is not None and isinstance(exc, oom)) or "out of memory" in str(exc)


def plan_of(settings_ids):
    """The runs: defaults, each setting added to the ones before, each setting alone."""
    plan = [("baseline", [])]
    for i, sid in enumerate(settings_ids):
        plan.append(("cumulative", settings_ids[:i + 1]))
        if i > 0:
            plan.append(("alone", [sid]))
    return plan


def measure(torch, device, label, args, settings_ids, say):
    """Returns the "model" object of one GPU (docs/tune.md)."""
    name = args.model
    batch = args.batch_size or MODELS[name]["batch"]
    result = {"name": name, "unit": MODELS[name]["unit"], "batch": batch, "steps": args.steps,
              "warmup": args.warmup, "settings": settings_ids, "runs": [], "max_batch": None, "error": None}
    try:
        model = build(torch, name).to(device).train()
    except Exception as exc:
        result["error"] = "cannot build %s: %s" % (name, error_text(exc))
        return result
    trainer = Trainer(torch, name, model, device, (torch.backends.cudnn.benchmark, read_tf32(torch)))
    for kind, ids in plan_of(settings_ids):
        say("%s: %s, batch %d, %s" % (label, name, batch, "+".join(ids) or "defaults"))
        entry = trainer.measure(batch, ids, args.steps, args.warmup)
        entry["kind"] = kind
        result["runs"].append(entry)
    if args.find_batch:
        started = time.time()
        found, tries, capped = trainer.largest_batch(batch, settings_ids, args.batch_limit,
                                                     lambda text: say("%s: %s" % (label, text)))
        entry = None
        if found > 0:
            say("%s: %s, batch %d, every setting" % (label, name, found))
            entry = trainer.measure(found, settings_ids, args.steps, args.warmup)
        result["max_batch"] = {"batch": found, "tries": tries, "capped": capped, "limit": args.batch_limit,
                               "seconds": time.time() - started, "run": entry}
    del trainer, model
    gc.collect()
    torch.cuda.empty_cache()
    return result
