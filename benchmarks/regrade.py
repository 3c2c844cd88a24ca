"""Regrading a class: `attn-ref grade DIR --jobs 2` (kernels from one kernel image, and
with `--kernel-image off` every kernel started afresh) and `--cluster local:2` beside a loop of `otter run`.

Run: .venv/bin/python benchmarks/regrade.py [--n 20] [--jobs 2]. Builds the lab release in a temporary folder, writes
N lab submissions that otter can finish (correct, partly wrong, blank: no infinite loops, since otter has
no timeout), grades them both ways in one run and prints both times and the ratio. Asserts nothing.
The otter side uses a plain otter zip of the same questions (the master with otter's own `generate` on).
"""

from __future__ import annotations

import argparse
import copy
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from course_units import COURSE, N_SETS, bug_set  # noqa: E402
from grade import plain_otter_zip  # noqa: E402

from attn_ref.release.build import build  # noqa: E402

BIN = Path(sys.executable).parent


def submissions(solution: Path, blank: Path, folder: Path, n: int) -> list[Path]:
    base = nbformat.read(str(solution), as_version=4)
    empty = nbformat.read(str(blank), as_version=4)
    paths = []
    for i in range(n):
        kind = i % (N_SETS + 2)
        if kind == 0:
            nb = copy.deepcopy(base)
        elif kind == 1:
            nb = copy.deepcopy(empty)
        else:
            nb = copy.deepcopy(base)
            for _, marker, source, _ in bug_set(kind - 2).values():
                for cell in nb.cells:
                    if cell.cell_type == "code" and marker in cell.source:
                        cell.source = source
        nb.cells.append(nbformat.v4.new_markdown_cell(f"student {i}"))
        path = folder / f"student_{i:02d}.ipynb"
        nbformat.write(nb, str(path))
        paths.append(path)
    return paths


def grades(path: Path) -> list[tuple[str, str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return sorted((row["name"], row["total"], row["status"]) for row in csv.DictReader(f))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-cluster", action="store_true", help="skip the --cluster local:JOBS row")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        built = build(tmp / "release", COURSE, only="lab")[0]
        (tmp / "class").mkdir()
        paths = submissions(built.solution, built.student, tmp / "class", args.n)
        otter_zip = plain_otter_zip(tmp)
        grade = [str(BIN / "attn-ref"), "grade", str(tmp / "class"), "--autograder", str(built.autograder)]
        rows = []

        start = time.perf_counter()
        subprocess.run([*grade, "--out", str(tmp / "jobs"), "--jobs", str(args.jobs)], check=True, capture_output=True)
        rows.append((f"attn-ref grade --jobs {args.jobs}", time.perf_counter() - start))

        start = time.perf_counter()  # every kernel started afresh (before the kernel image)
        subprocess.run([*grade, "--out", str(tmp / "fresh"), "--jobs", str(args.jobs), "--kernel-image", "off"], check=True,
                       capture_output=True)
        rows.append(("  the same, --kernel-image off", time.perf_counter() - start))
        same_fresh = grades(tmp / "jobs/grades.csv") == grades(tmp / "fresh/grades.csv")

        if not args.no_cluster:
            start = time.perf_counter()
            subprocess.run([*grade, "--out", str(tmp / "cluster"), "--cluster", f"local:{args.jobs}"], check=True,
                           capture_output=True)
            rows.append((f"attn-ref grade --cluster local:{args.jobs}", time.perf_counter() - start))
            same = grades(tmp / "jobs/grades.csv") == grades(tmp / "cluster/grades.csv")

        start = time.perf_counter()
        for path in paths:
            out = tmp / "otter" / path.stem
            out.mkdir(parents=True)
            subprocess.run([str(BIN / "otter"), "run", "-a", str(otter_zip), "-o", str(out), str(path)], capture_output=True)
        otter = time.perf_counter() - start
    print(f"{args.n} lab submissions (right, blank and {N_SETS} kinds of bugs); {len(os.sched_getaffinity(0))} cores; "
          "one run of each, wall time")
    for label, seconds in rows:
        print(f"{label:34} {seconds:7.1f} s  {seconds / args.n:5.2f} s per submission  {otter / seconds:5.2f}x the otter loop")
    print(f"{'otter run, one by one':34} {otter:7.1f} s  {otter / args.n:5.2f} s per submission")
    print(f"grades.csv with and without the kernel image identical: {same_fresh}")
    if not args.no_cluster:
        print(f"grades.csv of --jobs and --cluster identical: {same}")


if __name__ == "__main__":
    main()
