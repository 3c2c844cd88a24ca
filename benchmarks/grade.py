"""One grading, the Gradescope path: `attn-ref grade` (what the zip's run_autograder calls) beside
`otter run` on a plain otter zip of the same questions, both pinned to one core.

Run: .venv/bin/python benchmarks/grade.py [--repeat 5] [--cpus 0]. Both commands run under
`taskset -c CPUS` (Gradescope's default runner has half a vCPU; one core is the closest this machine has)
and are measured alternately, N times each, in one run. Prints the median wall time, the median CPU time
(user + system of every process in the tree, each as last sampled, every 10 ms: a kernel runs as another
uid and is not always reaped by an ancestor, so getrusage would miss it) and the peak of the summed PSS
(proportional set size: shared pages counted once in total, not once per process as RSS does)
of the whole process tree (grader, grading process, kernel), sampled every 50 ms with psutil from outside
the pinned core. Asserts nothing. As root, `attn-ref grade` runs the kernel as a fresh uid, in its own
namespaces where bubblewrap works, as on Gradescope.
The plain otter zip comes from the same master notebook with otter's own `generate` turned on, so otter
grades the same questions with their public tests (it has no hidden probes to run).
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def tree(root: psutil.Process) -> list[psutil.Process]:
    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def tree_pss(processes: list[psutil.Process]) -> int:
    total = 0
    for p in processes:
        try:
            total += p.memory_full_info().pss
        except psutil.Error:
            pass
    return total


def measure(cmd: list[str], cwd: Path) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, peak summed PSS of the process tree in bytes, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    root = psutil.Process(proc.pid)
    peak, cpu, tick = 0, {}, 0
    while proc.poll() is None:
        processes = tree(root)
        for p in processes:
            try:
                times = p.cpu_times()
                cpu[(p.pid, p.create_time())] = times.user + times.system
            except psutil.Error:
                pass
        if tick % 5 == 0:
            peak = max(peak, tree_pss(processes))
        tick += 1
        time.sleep(0.01)
    return time.perf_counter() - start, sum(cpu.values()), peak, proc.returncode


def plain_otter_zip(tmp: Path) -> Path:
    nb = master(assignment("lab"))
    nb.cells[0].source = nb.cells[0].source.replace("generate: false", "generate: true")
    nbformat.write(nb, str(tmp / "lab.ipynb"))
    subprocess.run([str(BIN / "otter"), "assign", "lab.ipynb", "dist"], cwd=tmp, check=True, capture_output=True)
    return next((tmp / "dist" / "autograder").glob("*.zip"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpus", default="0", help="taskset's CPU list for both commands (default: 0)")
    args = parser.parse_args()
    pin = ["taskset", "-c", args.cpus] if shutil.which("taskset") else []
    # The sampler must not share the measured core.
    others = set(os.sched_getaffinity(0)) - {int(c) for c in args.cpus.split(",") if c.isdigit()}
    if others:
        os.sched_setaffinity(0, others)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        built = build(tmp / "release", COURSE, only="lab")[0]
        solution, ours = built.solution, built.autograder
        otter_zip = plain_otter_zip(tmp)
        commands = {
            "attn-ref grade": [*pin, str(BIN / "attn-ref"), "grade", str(solution), "--autograder", str(ours),
                               "--results", str(tmp / "results.json")],
            "otter run": [*pin, str(BIN / "otter"), "run", "-a", str(otter_zip), "-o", str(tmp / "otter"), str(solution)],
        }
        (tmp / "otter").mkdir()
        runs = {label: [] for label in commands}
        for _ in range(args.repeat):  # alternate, so that drift on the machine touches both sides alike
            for label, cmd in commands.items():
                (tmp / "results.json").unlink(missing_ok=True)
                runs[label].append(measure(cmd, tmp))
        for label, results in runs.items():
            assert all(code == 0 for *_, code in results), f"{label} failed"
    rows = [(label, statistics.median(w for w, *_ in r), min(w for w, *_ in r), statistics.median(c for _, c, *_ in r),
             max(p for _, _, p, _ in r)) for label, r in runs.items()]
    print(f"lab solution, one grading; cores: {'taskset -c ' + args.cpus if pin else 'all'} of {os.cpu_count()}; "
          f"{args.repeat} runs each, alternating")
    print("CPU: user + system of every process in the tree, sampled every 10 ms; memory: peak of the summed PSS, every 50 ms")
    print(f"{'':16} {'median s':>9} {'best s':>8} {'CPU s':>7} {'peak MB':>9}")
    for label, wall, best, cpu, peak in rows:
        print(f"{label:16} {wall:9.2f} {best:8.2f} {cpu:7.2f} {peak / 1e6:9.0f}")
    print(f"otter run / attn-ref grade: {rows[1][1] / rows[0][1]:.2f}x time, {rows[1][3] / rows[0][3]:.2f}x CPU, "
          f"{rows[1][4] / rows[0][4]:.2f}x memory")


if __name__ == "__main__":
    main()
