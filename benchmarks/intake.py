"""What a submission's bytes cost the grader's memory: one honest lab submission beside hostile ones, each graded
by `attn-ref grade` (the Gradescope path), and the peak of each process measured.

Run: .venv/bin/python benchmarks/intake.py [--release DIR]. For each submission, prints the peak resident memory
(VmHWM, read from /proc every 10 ms while it lives) of the attn-ref process (the supervisor) and of its grading
process (the fork that reads the notebook and scores it; the kernel runs another interpreter and is not counted),
the peak of the summed PSS of the whole tree (supervisor, grading process, kernel: what one grading costs the
machine, as benchmarks/grade.py measures it), each tree peak's ratio to the honest submission's, and what the
results say. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grade import tree_pss  # noqa: E402

BIN = Path(sys.executable).parent


def _nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def submissions(solution: Path) -> dict[str, dict | str]:
    """{label: the notebook as JSON-like data, or raw text}: the honest one first."""
    honest = json.loads(solution.read_text())
    first = next(i for i, c in enumerate(honest["cells"]) if c["cell_type"] == "code")

    def with_output(text: str) -> dict:
        nb = json.loads(json.dumps(honest))
        nb["cells"][first]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
        return nb

    values = json.dumps(honest)[:-1] + ', "x": [' + ",".join(["{}"] * (4 << 20)) + "]}"
    return {
        "honest (the solution)": honest,
        "a 60 MB output": with_output("x" * (60 << 20)),
        "a 60 MB output, one emoji": with_output("\U0001F600" + "x" * (60 << 20)),
        "900,000 output lines": with_output(["ab\n"] * 900_000),
        "8 MB of empty objects": values,
        "nested 5,000 deep": json.dumps(honest)[:-1] + ', "x": ' + "[" * 5000 + "]" * 5000 + "}",
        "a cell whose source is 5": {**honest, "cells": [*honest["cells"][:first], {**honest["cells"][first], "source": 5}]},
    }


def _peak(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"VmHWM:\s+(\d+) kB", status)
    return int(found.group(1)) << 10 if found else 0


def measure(cmd: list[str]) -> tuple[int, int, int, int]:
    """(peak of the root process, peak of its grading processes, peak summed PSS of the tree, exit code), sampled
    every 10 ms (the tree's PSS every 50 ms: reading it costs more)."""
    proc = psutil.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    exe = os.path.realpath(sys.executable)
    root = grading = tree = tick = 0
    while proc.poll() is None:
        root = max(root, _peak(proc.pid))
        try:
            children = proc.children(recursive=True)
        except psutil.Error:
            children = []
        tick += 1
        if tick % 5 == 0:
            tree = max(tree, tree_pss([proc, *children]))
        for child in children:
            try:
                ours = os.path.realpath(child.exe()) == exe
            except psutil.Error:
                continue
            if ours:
                grading = max(grading, _peak(child.pid))
        time.sleep(0.01)
    return root, grading, tree, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release", type=Path, help="a built release (attn-ref build --out DIR) instead of a new one")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        release = args.release
        if release is None:
            from attn_ref.release.build import build

            release = tmp / "release"
            build(release, Path(__file__).resolve().parents[1] / "course", only="lab")
        autograder = release / "autograder/lab-autograder.zip"
        rows = []
        for label, nb in submissions(release / "solutions/lab/lab.ipynb").items():
            path = tmp / "lab.ipynb"
            path.write_text(nb if isinstance(nb, str) else json.dumps(nb, ensure_ascii=False))
            results = tmp / "results.json"
            results.unlink(missing_ok=True)
            root, grading, tree, code = measure([str(BIN / "attn-ref"), "grade", str(path), "--autograder", str(autograder),
                                           "--results", str(results)])
            said = json.loads(results.read_text()) if results.is_file() else {}
            extra = said.get("extra_data", {})
            rows.append((label, path.stat().st_size, root, grading, tree, said.get("score"), extra.get("outcome"),
                         str(extra.get("status", f"exit {code}"))[:60]))
    honest = rows[0]
    print("one `attn-ref grade` per submission; peak resident memory (VmHWM) of the attn-ref process and of its grading "
          "process, and peak summed PSS of the whole tree (kernel included), MB; x honest: the honest one's multiple")
    print(f"{'submission':28} {'file MB':>8} {'attn-ref':>9} {'grading':>8} {'x honest':>9} {'tree':>6} {'x honest':>9}"
          "  score  outcome     status")
    for label, size, root, grading, tree, score, outcome, status in rows:
        print(f"{label:28} {size / 2**20:8.1f} {root / 2**20:9.0f} {grading / 2**20:8.0f} {grading / honest[3]:9.2f} "
              f"{tree / 2**20:6.0f} {tree / honest[4]:9.2f}  {score!s:5}  {outcome!s:11} {status}")


if __name__ == "__main__":
    main()
