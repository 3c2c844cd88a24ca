"""What naming mistakes costs: one lab grading with the mutants in checks.json beside the same zip without
them, for a failing submission (c3 scales by d, c8 the signed gradient: the mutants' process starts and
runs on each failed CPU probe) and for a passing one (no probe fails, so no process starts).

Run: .venv/bin/python benchmarks/mistakes.py [--release DIR] [--repeat 5] [--cpus 0]. Builds the lab into
a temporary folder unless --release names a built one. Each grading is `attn-ref grade` under
`taskset -c CPUS`, the four cases measured alternately, N times each, in one run; prints the median wall
time of each and the difference. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import nbformat  # noqa: E402
from conftest import edit_notebook  # noqa: E402
from course_units import COURSE  # noqa: E402

from attn_ref.release.build import build  # noqa: E402


def without_mistakes(source: Path, target: Path) -> Path:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            data = old.read(item)
            if item.filename == "checks.json":
                checks = json.loads(data)
                for unit in checks["units"]:
                    unit.pop("mistakes", None)
                data = json.dumps(checks).encode()
            new.writestr(item, data)
    return target


def timed(notebook: Path, autograder: Path, cpus: str, work: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["taskset", "-c", cpus, sys.executable, "-m", "attn_ref", "grade", str(notebook), "--autograder",
                    str(autograder), "--results", str(work / "r.json")], check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--release")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cpus", default="0")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        release = Path(args.release) if args.release else work / "release"
        if not args.release:
            build(release, COURSE, only="lab")
        named = release / "autograder" / "lab-autograder.zip"
        plain = without_mistakes(named, work / "plain.zip")
        solution = release / "solutions" / "lab" / "lab.ipynb"
        failing = work / "failing.ipynb"
        nbformat.write(edit_notebook(solution, {
            "def scaled_dot_product_attention(": (COURSE / "lab/c3/mutants/scales_by_d_instead_of_sqrt_d.py").read_text(),
            "def rnn_gradient_norm(": (COURSE / "lab/c8/mutants/the_signed_gradient.py").read_text()}), str(failing))
        cases = {("failing", "named"): (failing, named), ("failing", "plain"): (failing, plain),
                 ("passing", "named"): (solution, named), ("passing", "plain"): (solution, plain)}
        times: dict = {case: [] for case in cases}
        for _ in range(args.repeat):
            for case, (notebook, autograder) in cases.items():
                times[case].append(timed(notebook, autograder, args.cpus, work))
        print(f"lab, one grading under taskset -c {args.cpus}, median of {args.repeat} (seconds):")
        for kind in ("failing", "passing"):
            a, b = (statistics.median(times[kind, z]) for z in ("named", "plain"))
            print(f"  {kind}: with mistakes {a:.2f}, without {b:.2f}, added {a - b:+.2f}")


if __name__ == "__main__":
    main()
