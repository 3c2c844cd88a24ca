"""Unpacking a Gradescope export that holds a zip bomb: what the TA's process writes and how much memory it takes,
beside the same process listing an honest export of the same shape, in one run.

Run: .venv/bin/python benchmarks/unpack.py [--bomb-mb 1024]. Writes two exports in a temporary folder (one
submission of them a member of BOMB zero bytes, about 1 MB zipped; the other its honest notebook), lists each
with `discover` and hashes each submission as a batch does, in a fresh process, and prints the bytes written under --out and the process's peak resident
memory (VmHWM, its own: not the memory of the process that started it). Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

PROBE = """import json, re, sys
from pathlib import Path
from attn_ref.grade.classroom.discover import content_hash, discover
subs = discover(Path(sys.argv[1]), Path(sys.argv[2]))
hashes = [content_hash(s.path) for s in subs if s.path.exists()]  # what a batch does next (plan_batch)
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1)) << 10
print(json.dumps({"problems": [s.problem for s in subs], "peak": peak}))
"""


def export(path: Path, bomb_bytes: int) -> Path:
    notebook = json.dumps({"cells": [], "metadata": {"otter": {"assignment_name": "lab"}}, "nbformat": 4, "nbformat_minor": 5})
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("e/submission_metadata.yml", yaml.safe_dump({"s1": {":submitters": []}, "s2": {":submitters": []}}))
        archive.writestr("e/s1/lab.ipynb", notebook)
        with archive.open("e/s2/lab.ipynb", "w") as member:
            chunk = bytes(16 << 20)
            for _ in range(bomb_bytes // len(chunk)):
                member.write(chunk)
            if not bomb_bytes:
                member.write(notebook.encode())
    return path


def measure(zipped: Path, out: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, str(zipped), str(out)], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    found["written"] = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bomb-mb", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for label, size in (("honest", 0), (f"bomb ({args.bomb_mb} MB member)", args.bomb_mb << 20)):
            zipped = export(tmp / f"{size}.zip", size)
            found = measure(zipped, tmp / f"out-{size}")
            refused = [p for p in found["problems"] if p]
            print(f"{label:28} zip {zipped.stat().st_size / 2**20:6.2f} MB   written {found['written']:>10,} B   "
                  f"peak {found['peak'] / 2**20:6.1f} MB   refused: {refused[0][:70] if refused else 'none'}")


if __name__ == "__main__":
    main()
