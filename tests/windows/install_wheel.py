#!/usr/bin/env python3
"""Installs torchfix's win_amd64 wheel into PREFIX laid out as a Windows venv.

Usage: tests/windows/install_wheel.py WHEEL PREFIX

What pip does on Windows, done here on Linux so that Wine can run the result
(tests/windows/wine_wheel.sh):
  1. pip itself installs the wheel for win_amd64 (`pip install --platform
     win_amd64 --only-binary=:all: --target`): pip accepts the tag as a
     Windows one (it refuses a manylinux wheel there);
  2. the wheel is unpacked by the binary distribution format's rules into
     the Windows venv scheme: <name>.data/scripts -> PREFIX/Scripts,
     <name>.data/data -> PREFIX, purelib/platlib and the .dist-info ->
     PREFIX/Lib/site-packages, with every file's sha256 and size checked
     against RECORD and every member listed in RECORD;
  3. the files pip put under --target (bin/ there is Scripts/ here) are the
     same files as in PREFIX.
Prints the installed files. Exits 1 naming the first check that failed, 2 on
wrong usage.
"""

import base64
import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile


def fail(message):
    print(f"install_wheel: {message}", file=sys.stderr)
    sys.exit(1)


def record_rows(wheel, dist_info):
    """Returns {member: (hash, size)} from the wheel's RECORD."""
    rows = {}
    for line in wheel.read(f"{dist_info}/RECORD").decode().splitlines():
        if not line:
            continue
        name, digest, size = line.rsplit(",", 2)
        rows[name] = (digest, size)
    return rows


def check_wheel_file(wheel, dist_info):
    text = wheel.read(f"{dist_info}/WHEEL").decode()
    if "Tag: py3-none-win_amd64" not in text.splitlines():
        fail(f"{dist_info}/WHEEL has no 'Tag: py3-none-win_amd64' line:\n{text}")
    if "Root-Is-Purelib: false" not in text.splitlines():
        fail(f"{dist_info}/WHEEL: Root-Is-Purelib is not false:\n{text}")


def target_of(member, data_dir, prefix):
    """Returns where `member` goes in the Windows venv scheme."""
    site = prefix / "Lib" / "site-packages"
    if not member.startswith(data_dir + "/"):
        return site / member
    scheme, _, rest = member[len(data_dir) + 1 :].partition("/")
    places = {"scripts": prefix / "Scripts", "data": prefix, "purelib": site, "platlib": site,
              "headers": prefix / "Include"}
    if scheme not in places:
        fail(f"{member}: unknown scheme {scheme!r} in the .data folder")
    return places[scheme] / rest


def unpack(wheel_path, prefix):
    """Unpacks the wheel into prefix, checking RECORD; returns the files' paths relative to prefix."""
    installed = []
    with zipfile.ZipFile(wheel_path) as wheel:
        names = [n for n in wheel.namelist() if not n.endswith("/")]
        dist_info = next((n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")), None)
        if dist_info is None:
            fail(f"{wheel_path}: no .dist-info folder")
        check_wheel_file(wheel, dist_info)
        rows = record_rows(wheel, dist_info)
        record = f"{dist_info}/RECORD"
        if sorted(rows) != sorted(names):
            fail(f"RECORD and the wheel's members differ: {sorted(set(rows) ^ set(names))}")
        data_dir = dist_info.removesuffix(".dist-info") + ".data"
        for member in names:
            data = wheel.read(member)
            digest, size = rows[member]
            if member != record:
                actual = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                if digest != actual or size != str(len(data)):
                    fail(f"{member}: RECORD says {digest} {size} bytes, the file is {actual} {len(data)} bytes")
            path = target_of(member, data_dir, prefix)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            installed.append(path.relative_to(prefix).as_posix())
    (prefix / "pyvenv.cfg").write_text("home = C:\\Python312\ninclude-system-site-packages = false\n")
    return sorted(installed)


def pip_target(wheel_path, target):
    """Installs with pip for win_amd64 into target; returns its files, bin/ named Scripts/."""
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--root-user-action=ignore", "--platform",
                    "win_amd64", "--only-binary=:all:", "--target", str(target), str(wheel_path)], check=True)
    files = []
    for path in target.rglob("*"):
        relative = path.relative_to(target).as_posix()
        if path.is_file() and ".dist-info/" not in relative:
            files.append("Scripts/" + relative[4:] if relative.startswith("bin/") else relative)
    return sorted(files)


def main():
    if len(sys.argv) != 3:
        print("usage: tests/windows/install_wheel.py WHEEL PREFIX", file=sys.stderr)
        sys.exit(2)
    wheel_path, prefix = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    prefix.mkdir(parents=True, exist_ok=True)
    installed = unpack(wheel_path, prefix)
    if "Scripts/torchfix.exe" not in installed:
        fail(f"no Scripts/torchfix.exe among {installed}")
    with tempfile.TemporaryDirectory() as tmp:
        by_pip = pip_target(wheel_path, pathlib.Path(tmp))
    # pip writes its own .dist-info (INSTALLER, REQUESTED, a new RECORD): compared without it.
    ours = [f for f in installed if ".dist-info/" not in f]
    if by_pip != ours:
        fail(f"pip --target installed other files: only pip {sorted(set(by_pip) - set(ours))}, "
             f"only here {sorted(set(ours) - set(by_pip))}")
    print(f"install_wheel: {len(installed)} files in {prefix} (pip --platform win_amd64 installs the same)")
    for name in installed:
        print(f"  {name}")
    os.chmod(prefix / "Scripts" / "torchfix.exe", 0o755)


if __name__ == "__main__":
    main()
