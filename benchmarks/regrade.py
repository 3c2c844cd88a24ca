"""Regrading a class: `attn-ref grade DIR --jobs 2` (kernels from one kernel image; with `--fresh`, also
`--kernel-image off`, every kernel started afresh) and `--cluster local:2` (a grader and a kernel image per
worker) beside a loop of `otter run`.

Run: .venv/bin/python benchmarks/regrade.py [--n 20] [--jobs 2] [--fresh] [--shm] [--no-cluster]. Builds the lab release in a
temporary folder, writes N lab submissions that otter can finish (correct, partly wrong, blank: no infinite loops,
since otter has no timeout), grades them every way in one run and prints, for each, the wall time, the CPU
seconds of every process (cpu_stages.py: the tree sampled every 20 ms; the otter loop: getrusage of its reaped
children), both per submission, and the ratio to the otter loop; then where the CPU of each attn-ref run went,
per stage and per submission. Asserts nothing. The otter side uses a plain otter zip of the same questions (the
master with otter's own `generate` on).
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
from cpu_stages import STAGES, Sampled, run_sampled  # noqa: E402
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


def breakdown(label: str, run: Sampled, n: int) -> None:
    print(f"{label}: CPU seconds per submission, by stage (total {run.total / n:.2f}; wall {run.wall / n:.2f} s)")
    for stage in STAGES:
        if run.stages.get(stage):
            print(f"  {stage:30} {run.stages[stage] / n:6.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--fresh", action="store_true", help="also --jobs JOBS with --kernel-image off")
    parser.add_argument("--no-cluster", action="store_true", help="skip the --cluster local:JOBS row")
    parser.add_argument("--shm", action="store_true", help="also --jobs JOBS with TMPDIR=/dev/shm (the kernels' folders in memory)")
    args = parser.parse_args()
    n = args.n
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        built = build(tmp / "release", COURSE, only="lab")[0]
        (tmp / "class").mkdir()
        paths = submissions(built.solution, built.student, tmp / "class", n)
        otter_zip = plain_otter_zip(tmp)
        grade = [str(BIN / "attn-ref"), "grade", str(tmp / "class"), "--autograder", str(built.autograder)]
        runs = {f"attn-ref grade --jobs {args.jobs}": (grade + ["--out", str(tmp / "jobs"), "--jobs", str(args.jobs)], "jobs")}
        if args.shm:
            runs["  the same, TMPDIR=/dev/shm"] = (grade + ["--out", str(tmp / "shm"), "--jobs", str(args.jobs)], "shm")
        if args.fresh:  # every kernel started afresh (before the kernel image)
            runs["  the same, --kernel-image off"] = (grade + ["--out", str(tmp / "fresh"), "--jobs", str(args.jobs),
                                                              "--kernel-image", "off"], "fresh")
        if not args.no_cluster:
            runs[f"attn-ref grade --cluster local:{args.jobs}"] = (grade + ["--out", str(tmp / "cluster"), "--cluster",
                                                                            f"local:{args.jobs}"], "cluster")
        sampled = {}
        for label, (cmd, out) in runs.items():
            env = {**os.environ, "TMPDIR": "/dev/shm"} if out == "shm" else None
            sampled[label] = run_sampled(cmd, env=env)
            assert sampled[label].returncode == 0, f"{label} failed"
        same = {label: grades(tmp / out / "grades.csv") == grades(tmp / "jobs/grades.csv") for label, (_, out) in runs.items()}

        before = os.times()
        start = time.perf_counter()
        for path in paths:
            out = tmp / "otter" / path.stem
            out.mkdir(parents=True)
            subprocess.run([str(BIN / "otter"), "run", "-a", str(otter_zip), "-o", str(out), str(path)], capture_output=True)
        otter = time.perf_counter() - start
        after = os.times()
        otter_cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    print(f"{n} lab submissions (right, blank and {N_SETS} kinds of bugs); {len(os.sched_getaffinity(0))} cores "
          f"(load average now {os.getloadavg()[0]:.1f}); one run of each")
    print(f"{'':38} {'wall s':>7} {'s/sub':>6} {'CPU s/sub':>9} {'x otter (wall)':>14} {'x otter (CPU)':>13}")
    for label, run in sampled.items():
        print(f"{label:38} {run.wall:7.1f} {run.wall / n:6.2f} {run.total / n:9.2f} {otter / run.wall:14.2f} "
              f"{otter_cpu / run.total:13.2f}")
    print(f"{'otter run, one by one':38} {otter:7.1f} {otter / n:6.2f} {otter_cpu / n:9.2f}")
    for label, run in sampled.items():
        print(f"grades.csv of {label.strip()} identical to --jobs {args.jobs}: {same[label]}")
    print()
    for label, run in sampled.items():
        breakdown(label.strip(), run, n)


if __name__ == "__main__":
    main()
