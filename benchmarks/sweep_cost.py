"""What the seed sweep of `attn-ref check` costs per call, with torch's thread pool (OMP_NUM_THREADS=2, as the
sweep's runner ran before) beside the kernels' one thread (OMP_NUM_THREADS=1, as it runs now), in one run.

Run: .venv/bin/python benchmarks/sweep_cost.py --autograder ZIP [--task c3] [--seeds 10] [--repeat 2]
ZIP: a built lab autograder (`attn-ref build --no-check --out DIR`: DIR/autograder/lab-autograder.zip). The
task's solution, mutants and stubs are swept under seeds 0 .. N-1 (every line under every seed), the two
settings alternately, N times each. Prints per setting the calls made, the wall time and the CPU time (this
process and its runner: getrusage of self + children), per call, and the ratio. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

from attn_ref.grade.proofs.sweep import sweep
from attn_ref.release.course import load_assignment, load_registry

COURSE = Path(__file__).resolve().parents[1] / "course"


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def once(autograder: Path, task: str, seeds: int, threads: str) -> tuple[int, float, float]:
    """(calls, wall seconds, CPU seconds) of one sweep of ``task`` with OMP_NUM_THREADS=threads."""
    assignment = load_assignment(COURSE, next(e for e in load_registry(COURSE) if e.name == "lab"))
    mutants = {t.name: [(m.label, m.source) for m in t.mutants] for t in assignment.tasks if t.name == task}
    os.environ["OMP_NUM_THREADS"] = threads  # the runner's, through sandbox.trusted_runner_env
    started, cpu = time.monotonic(), _cpu()
    found = sweep(autograder, mutants, range(seeds), tasks={task})
    calls = sum(v["passed"] + v["failed"] for t in found.values() for lines in t["lines"].values() for v in lines.values())
    return calls, time.monotonic() - started, _cpu() - cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--autograder", type=Path, required=True)
    parser.add_argument("--task", default="c3")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    totals = {"2": [0, 0.0, 0.0], "1": [0, 0.0, 0.0]}
    for _ in range(args.repeat):
        for threads in totals:
            for i, value in enumerate(once(args.autograder, args.task, args.seeds, threads)):
                totals[threads][i] += value
    for threads, (calls, wall, cpu) in totals.items():
        print(f"OMP_NUM_THREADS={threads}: {calls} calls, wall {wall:.1f} s, CPU {cpu:.1f} s "
              f"({1000 * cpu / calls:.2f} ms CPU per call, runner start included)")
    print(f"CPU ratio (2 threads / 1): {totals['2'][2] / totals['1'][2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
