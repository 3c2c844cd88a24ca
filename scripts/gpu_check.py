"""GPU check: the reference on CUDA, and grading of the lab solution and one buggy submission with the
torch tasks on CUDA (the gpu runner's checks). Prints a table: device, probe, result, max error.

Needs no otter: the solution notebook is made from the lab's master, and the checks are written as a
folder. Run by scripts/gpu-check, which also installs carried wheels; works (without CUDA lines) on a CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from course_units import assignment, bug_set  # noqa: E402

from attn_ref.grade import grade  # noqa: E402
from attn_ref.release.checks import checks, stamp  # noqa: E402
from attn_ref.release.notebooks import master, solution_from_autograder_notebook  # noqa: E402

os.environ.setdefault("ATTN_REF_KERNEL_PYTHON", sys.executable)  # the machine's own torch; attn_ref is not installed there


def solution_notebook() -> nbformat.NotebookNode:
    nb = solution_from_autograder_notebook(master(assignment("lab")))
    nb.metadata["otter"] = {"assignment_name": "lab"}
    return nb


def buggy_notebook() -> nbformat.NotebookNode:
    nb = solution_notebook()
    bugs = bug_set(0)
    for cell in nb.cells:
        for _, marker, source, _ in bugs.values():
            if cell.cell_type == "code" and marker in cell.source:
                cell.source = source
    return nb


def main() -> int:
    import torch

    cuda = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if cuda else "none"
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, CUDA device: {device}")
    start = time.perf_counter()
    tests = ["tests/test_reference.py", "tests/test_conventions.py", "tests/test_properties.py", "tests/test_cuda.py"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=REPO)
    print(f"reference tests: exit {done.returncode} ({time.perf_counter() - start:.0f} s)\n")
    failures = int(done.returncode != 0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "checks").mkdir()
        (tmp / "checks" / "checks.json").write_text(json.dumps(stamp(checks(assignment("lab"), "gpu"), {})))
        for label, nb, want_full in (("solution", solution_notebook(), True), ("buggy", buggy_notebook(), False)):
            path = tmp / f"{label}.ipynb"
            nbformat.write(nb, str(path))
            results = grade(path, tmp / "checks", out_dir=tmp)
            total = sum(t["max_score"] for t in results["tests"])
            print(f"{label}: {results['score']:g} / {total:g} in {results['execution_time']:.1f} s ({results['extra_data']['status']})")
            print(f"  {'device':7} {'dtype':8} {'task':4} {'result':6} {'max error':>10}  probe")
            for row in results["extra_data"].get("probes", []):
                error = "" if row["max_error"] is None else f"{row['max_error']:.2e}"
                print(f"  {row['device']:7} {row['dtype']:8} {row['task']:4} {'pass' if row['passed'] else 'FAIL':6} {error:>10}  {row['probe']}")
            full = results["score"] == total
            failures += int(full != want_full)
            cuda_rows = [r for r in results["extra_data"].get("probes", []) if r["device"] == "cuda"]
            if cuda and not cuda_rows:
                print("  no CUDA probe ran although CUDA is available")
                failures += 1
            print()
    print("gpu-check:", "OK" if not failures else f"{failures} problem(s)")
    return int(failures > 0)


if __name__ == "__main__":
    sys.exit(main())
