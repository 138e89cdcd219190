#!/usr/bin/env python3
"""Writes N node snapshots for `torchfix fleet --snapshots` benchmarks.

Usage: fleet_snapshots.py TEMPLATE.json OUT_DIR N [--distinct]

Each node is the template (a real doctor snapshot, e.g. the H200 fixture with
its kernel scan, 43 KB) with one of 8 GPU/driver kinds and its own free
memory, as nodes of a real partition differ. --distinct also gives every node
its own value of an environment variable, so no two files are alike and every
one must be parsed (the worst case).
"""
import copy
import json
import os
import random
import sys

KINDS = [
    ("Tesla V100-SXM2-32GB", "7.0", "570.133.20", "12.8"),
    ("NVIDIA A100-SXM4-80GB", "8.0", "570.133.20", "12.8"),
    ("NVIDIA A100-SXM4-80GB", "8.0", "580.95.05", "13.0"),
    ("NVIDIA H100 80GB HBM3", "9.0", "580.95.05", "13.0"),
    ("NVIDIA H200", "9.0", "580.159.04", "13.0"),
    ("NVIDIA L40S", "8.9", "580.95.05", "13.0"),
    ("NVIDIA B200", "10.0", "580.159.04", "13.0"),
    ("NVIDIA GeForce RTX 4090", "8.9", "570.133.20", "12.8"),
]


def main() -> int:
    template_path, out_dir, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    distinct = "--distinct" in sys.argv[4:]
    with open(template_path, encoding="utf-8") as f:
        template = json.load(f)
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(12)
    for i in range(count):
        name, cc, driver, cuda = KINDS[i % len(KINDS)]
        s = copy.deepcopy(template)
        s["gpus"] = [{"index": g, "name": name, "compute_capability": cc, "memory_bytes": 85899345920,
                      "source": "nvml"} for g in range(8)]
        s["driver"] = {"version": driver, "cuda_version": cuda, "source": "nvml"}
        s["platform"]["memory_available_bytes"] = rng.randrange(200, 2000) * 2**30
        if distinct:
            s["environment"]["SLURM_JOB_ID"] = str(1000000 + i)
        with open(os.path.join(out_dir, "gpu%05d.json" % i), "w", encoding="utf-8") as f:
            json.dump(s, f, indent=2, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
