"""What adjustments.csv costs a large class: the gradebook written from results (no kernel) with and without
a sheet of adjustments, the two alternately in one run.

Run: .venv/bin/python benchmarks/adjustments.py [--students 1000] [--rows 1000] [--repeat 3]. Each case is
write_gradebook() on the same results (grades.csv, summary.png, report.html); prints the median wall and CPU
seconds (this process and its children) of each, the difference and their ratio. Asserts nothing.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from attn_ref.grade.checks_json import Answer, Checks, FunctionUnit, Probe, QuestionUnit  # noqa: E402
from attn_ref.grade.classroom.adjustments import COLUMNS, FILE  # noqa: E402
from attn_ref.grade.classroom.discover import Submission  # noqa: E402
from attn_ref.grade.classroom.gradebook import write_gradebook  # noqa: E402
from attn_ref.grade.classroom.spreadsheet import write_csv  # noqa: E402
from attn_ref.grade.owned import private_folder  # noqa: E402
from attn_ref.grade.results import write_results  # noqa: E402

LINES = [f"line {i}" for i in range(8)]


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _class(out: Path, students: int) -> tuple[list[Submission], Checks]:
    checks = Checks("lab", (FunctionUnit("c3", probes=tuple(Probe(name, 1.0) for name in LINES)),
                            QuestionUnit("q4", answers=(Answer("q4_ratio", "float", 0.5, 2.0),))), version="v1")
    subs = []
    for i in range(students):
        key = f"s{i}"
        extra = {"submission": key, "status": "ok", "outcome": "graded", "autograder_version": "v1", "attn_ref_version": "0.1.0"}
        tests = [{"name": "c3: x", "score": float(i % 5), "max_score": 8.0}, {"name": "q4: x", "score": 0.0, "max_score": 2.0}]
        write_results(private_folder(out / "results") / f"{key}.json", {"score": 0, "tests": tests, "extra_data": extra})
        subs.append(Submission(key, out / f"{key}.ipynb", [{"name": f"Student {i}", "sid": f"{i:05d}", "email": f"s{i}@uni.edu"}]))
    return subs, checks


def _sheet(path: Path, students: int, rows: int) -> None:
    write_csv(path, COLUMNS, [[f"s{i % students}@uni.edu", "c3", LINES[i % 8], 1.0, None, f"request {i}", "sam", "2026-03-02"]
                              if i % 2 else [f"{i % students:05d}", "q4", "", None, 1.0, f"request {i}", "kim", ""]
                              for i in range(rows)])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="adjustments-bench-") as tmp:
        out = Path(tmp) / "graded"
        subs, checks = _class(out, args.students)
        measured: dict[str, list[tuple[float, float]]] = {"without": [], "with": []}
        applied = 0
        for _ in range(args.repeat):
            for case in ("without", "with"):
                (out / FILE).unlink(missing_ok=True)
                if case == "with":
                    _sheet(out / FILE, args.students, args.rows)
                wall, cpu = time.perf_counter(), _cpu()
                book = write_gradebook(out, subs, checks)
                measured[case].append((time.perf_counter() - wall, _cpu() - cpu))
                if case == "with":
                    assert len(book.adjustments.applied) + len(book.adjustments.not_applied) == args.rows
                    applied = len(book.adjustments.applied)
    wall = {case: statistics.median(w for w, _ in runs) for case, runs in measured.items()}
    cpu = {case: statistics.median(c for _, c in runs) for case, runs in measured.items()}
    print(f"{args.students} students, {args.rows} adjustment rows ({applied} applied), median of {args.repeat}")
    for case in ("without", "with"):
        print(f"  {case:8} adjustments.csv: wall {wall[case]:6.2f} s, CPU {cpu[case]:6.2f} s")
    print(f"  difference: wall {wall['with'] - wall['without']:+.2f} s, CPU {cpu['with'] - cpu['without']:+.2f} s; "
          f"ratio (with/without): wall {wall['with'] / wall['without']:.2f}, CPU {cpu['with'] / cpu['without']:.2f}")


if __name__ == "__main__":
    main()
