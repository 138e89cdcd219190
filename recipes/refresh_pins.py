#!/usr/bin/env python3
"""Regenerates recipes/torch-wheels.toml's [[extension_pin]] rows from the
packages' real metadata: for each release of each distribution named, pip
resolves its METADATA without downloading the wheel (`pip install --dry-run
--no-deps --report`, PEP 658) and an exact `Requires-Dist: torch==X` pin
becomes a row whose source says so and when it was read. Releases that pin
no exact torch (a range, or none) are left out: the resolver moves only
extensions tied to one torch release.

Usage: recipes/refresh_pins.py DIST[>=MIN] ... > rows.toml
  e.g. recipes/refresh_pins.py 'xformers>=0.0.28' 'vllm>=0.6.2'
       recipes/refresh_pins.py --triton 'torch>=2.1' > rows.toml
With --triton, each torch release's own `triton==X` (or `~=X.Y.0`) Requires-Dist
becomes a [[torch_triton]] row of recipes/triton-ptxas.toml (the Triton
torch.compile is built for); its marker is kept in the source.
Then replace the [[extension_pin]] rows of recipes/torch-wheels.toml with
the output (docs/knowledge.md, "Extension pins"), keeping the rows with
built_against = true (sgl-kernel): those wheels declare no torch and PyPI
has no sdist of them. Their rows come from the application that ships them:
  recipes/refresh_pins.py --paired sgl-kernel 'sglang>=0.4.6.post4' > rows.toml
reads each sglang release's Requires-Dist (no extra, or its `srt` extra) and
writes, per sgl-kernel release it pins, a built_against row of the torch it
pins beside it, naming every sglang release that pairs them. Needs pip >= 23 and an
index (PyPI, or PIP_INDEX_URL); prints a line on stderr for each release
it could not read.
"""
import datetime
import json
import re
import subprocess
import sys
import tempfile

try:
    from packaging.requirements import Requirement
    from packaging.version import Version
except ImportError:  # pip carries its own copy
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.version import Version


def versions(dist):
    """Returns the releases of `dist` on the index, oldest first."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", dist],
                         capture_output=True, text=True, timeout=120)
    match = re.search(r"Available versions: (.*)", out.stdout)
    if not match:
        raise SystemExit(f"refresh_pins: pip index versions {dist} listed nothing: {out.stderr.strip()}")
    return sorted((Version(v) for v in match.group(1).split(", ")))


def requires_dist(dist, version):
    """Returns the Requires-Dist lines of dist==version (pip's dry-run report), [] when pip cannot read it."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        run = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
                              "--quiet", "--report", report.name, f"{dist}=={version}"],
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            print(f"refresh_pins: {dist}=={version}: {run.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return []
        data = json.load(open(report.name))
    return [text for item in data["install"] for text in item["metadata"].get("requires_dist", [])]


def torch_pin(dist, version):
    """Returns the X of an exact Requires-Dist torch==X of dist==version, None without one."""
    for text in requires_dist(dist, version):
        req = Requirement(text)
        if req.name != "torch" or req.marker is not None:
            continue
        specs = list(req.specifier)
        if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
            return specs[0].version
    return None


def requirement_pins(dist, version):
    """Returns {name: exact version} of the Requires-Dist of dist==version with no marker or the `srt` extra's."""
    pins = {}
    for text in requires_dist(dist, version):
        req = Requirement(text)
        if req.marker is not None and str(req.marker) != 'extra == "srt"':
            continue
        specs = list(req.specifier)
        if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
            pins[req.name] = specs[0].version
    return pins


def paired(kernel, app_arg):
    """Prints a built_against row per release of `kernel` that releases of the app pin beside an exact torch."""
    today = datetime.date.today().isoformat()
    app = Requirement(app_arg)
    rows = {}  # kernel release -> (torch, [app releases])
    for version in versions(app.name):
        if version.is_prerelease or (app.specifier and version not in app.specifier):
            continue
        pins = requirement_pins(app.name, version)
        if kernel in pins and "torch" in pins:
            rows.setdefault(pins[kernel], (pins["torch"], []))[1].append(str(version))
    for release, (torch, apps) in rows.items():
        print("[[extension_pin]]")
        print(f'distribution = "{kernel}"')
        print(f'version = "{release}"')
        print(f'torch = "{torch}"')
        print("built_against = true")
        print(f'source = "{app.name} {", ".join(apps)} Requires-Dist: {kernel}=={release} beside torch=={torch} '
              f'(pip install --dry-run --no-deps --report, {today})"')
        print()


def triton_pin(version):
    """Returns (X, line) of torch==version's Requires-Dist triton==X (one release) or
    triton~=X.Y.0 (X = "X.Y": any X.Y.z, torch 2.14 on), None without either."""
    for text in requires_dist("torch", version) or []:
        req = Requirement(text)
        specs = list(req.specifier)
        if req.name != "triton" or len(specs) != 1:
            continue
        if specs[0].operator == "==":
            return specs[0].version, text
        if specs[0].operator == "~=" and len(Version(specs[0].version).release) == 3:
            return ".".join(str(part) for part in Version(specs[0].version).release[:2]), text
    return None


def triton_rows(arg):
    """Prints a [[torch_triton]] row per torch release that pins its Triton exactly."""
    today = datetime.date.today().isoformat()
    req = Requirement(arg)
    for version in versions(req.name):
        if version.is_prerelease or (req.specifier and version not in req.specifier):
            continue
        pin = triton_pin(version)
        if pin is None:
            continue
        line = pin[1].replace('"', "'")
        print("[[torch_triton]]")
        print(f'torch = "{version}"')
        print('distribution = "triton"')
        print(f'triton = "{pin[0]}"')
        print(f'source = "torch {version} METADATA: Requires-Dist {line} (pip install --dry-run --report, {today})"')
        print()
        sys.stdout.flush()


def main(args):
    if args[0] == "--paired":
        if len(args) != 3:
            raise SystemExit(__doc__)
        paired(args[1], args[2])
        return
    if args[0] == "--triton":
        for arg in args[1:]:
            triton_rows(arg)
        return
    today = datetime.date.today().isoformat()
    for arg in args:
        req = Requirement(arg)
        for version in versions(req.name):
            if version.is_prerelease or (req.specifier and version not in req.specifier):
                continue
            pin = torch_pin(req.name, version)
            if pin is None:
                continue
            print("[[extension_pin]]")
            print(f'distribution = "{req.name}"')
            print(f'version = "{version}"')
            print(f'torch = "{pin}"')
            print(f'source = "{req.name} {version} METADATA: Requires-Dist torch=={pin} '
                  f'(pip install --dry-run --report, {today})"')
            print()
            sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    main(sys.argv[1:])
