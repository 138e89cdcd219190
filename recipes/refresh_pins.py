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
Then replace the [[extension_pin]] rows of recipes/torch-wheels.toml with
the output (docs/knowledge.md, "Extension pins"), keeping the rows with
built_against = true (sgl-kernel): those wheels declare no torch and PyPI
has no sdist of them, so this script cannot read them. Needs pip >= 23 and an
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


def torch_pin(dist, version):
    """Returns the X of an exact Requires-Dist torch==X of dist==version, None without one."""
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        run = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--ignore-installed",
                              "--quiet", "--report", report.name, f"{dist}=={version}"],
                             capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            print(f"refresh_pins: {dist}=={version}: {run.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
        data = json.load(open(report.name))
    for item in data["install"]:
        for text in item["metadata"].get("requires_dist", []):
            req = Requirement(text)
            if req.name != "torch" or req.marker is not None:
                continue
            specs = list(req.specifier)
            if len(specs) == 1 and specs[0].operator == "==" and "*" not in specs[0].version:
                return specs[0].version
    return None


def main(args):
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
