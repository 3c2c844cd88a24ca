"""Grading cost of one lab submission: `attn-ref grade` beside `otter run` on a plain otter zip.

Run: .venv/bin/python benchmarks/grade.py [--repeat N]. Prints wall time and peak resident memory of all
processes together (the grader and its kernel), sampled every 20 ms with psutil. Asserts nothing.
The plain otter zip comes from the same master notebook with otter's own `generate` turned on, so otter
grades the same questions with their public tests (it has no hidden probes to run).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil

from attn_ref.release.build import build
from attn_ref.release.notebooks import master

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from course_units import COURSE, assignment  # noqa: E402

BIN = Path(sys.executable).parent


def measure(cmd: list[str], cwd: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS of the whole process tree in bytes, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        total = 0
        try:
            for p in [root, *root.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
        except psutil.Error:
            pass
        peak = max(peak, total)
        time.sleep(0.02)
    return time.perf_counter() - start, peak, proc.returncode


def plain_otter_zip(tmp: Path) -> Path:
    nb = master(assignment("lab"))
    nb.cells[0].source = nb.cells[0].source.replace("generate: false", "generate: true")
    nbformat.write(nb, str(tmp / "lab.ipynb"))
    subprocess.run([str(BIN / "otter"), "assign", "lab.ipynb", "dist"], cwd=tmp, check=True, capture_output=True)
    return next((tmp / "dist" / "autograder").glob("*.zip"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        built = build(tmp / "release", COURSE, only="lab")[0]
        solution, ours = built.solution, built.autograder
        otter_zip = plain_otter_zip(tmp)
        rows = []
        for label, cmd in [
            ("attn-ref grade", [str(BIN / "attn-ref"), "grade", str(solution), "--autograder", str(ours), "--out", str(tmp / "ours")]),
            ("otter run", [str(BIN / "otter"), "run", "-a", str(otter_zip), "-o", str(tmp / "otter"), str(solution)]),
        ]:
            (tmp / "otter").mkdir(exist_ok=True)
            runs = [measure(cmd, tmp) for _ in range(args.repeat)]
            assert all(code == 0 for _, _, code in runs), f"{label} failed"
            rows.append((label, statistics.median(w for w, _, _ in runs), max(p for _, p, _ in runs)))
    print(f"lab solution, {args.repeat} runs each (median wall, max peak RSS of all processes together)")
    print(f"{'':16} {'wall s':>8} {'peak MB':>9}")
    for label, wall, peak in rows:
        print(f"{label:16} {wall:8.2f} {peak / 1e6:9.0f}")
    print(f"ratio otter/ours: {rows[1][1] / rows[0][1]:.2f}x time, {rows[1][2] / rows[0][2]:.2f}x memory")


if __name__ == "__main__":
    main()
