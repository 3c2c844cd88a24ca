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
from attn_ref.release.hidden_checks import checks, stamp  # noqa: E402
from attn_ref.release.notebooks import master, solution_from_autograder_notebook  # noqa: E402


def device_mutants() -> list[tuple[str, str, nbformat.NotebookNode]]:
    """(task, mutant label, notebook) for each lab mutant that builds a tensor on the CPU ("device" in its
    "# must fail:" line): on a CUDA machine each must fail its task's CUDA probe too."""
    found = []
    for task in (t for t in assignment("lab").tasks if t.cuda):  # the tasks with CUDA probes (c3, c5, c6)
        for mutant in task.mutants:
            if "device" not in mutant.must_fail:
                continue
            nb = solution_notebook()
            for cell in nb.cells:
                if cell.cell_type == "code" and f"def {task.function}(" in cell.source:
                    cell.source = mutant.source
            found.append((task.name, mutant.label, nb))
    return found


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
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel-python", default=sys.executable,
                        help="the interpreter graded kernels run (default: this one; it needs torch and ipykernel)")
    os.environ["ATTN_REF_KERNEL_PYTHON"] = parser.parse_args().kernel_python
    import torch

    cuda = torch.cuda.is_available()
    device = torch.cuda.get_device_name(0) if cuda else "none"
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, CUDA device: {device}")
    start = time.perf_counter()
    tests = ["tests/reference/test_reference.py", "tests/reference/test_conventions.py", "tests/reference/test_properties.py", "tests/reference/test_cuda.py"]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests], cwd=REPO)
    print(f"reference tests: exit {done.returncode} ({time.perf_counter() - start:.0f} s)\n")
    failures = int(done.returncode != 0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "checks").mkdir()
        (tmp / "checks" / "checks.json").write_text(json.dumps(stamp(checks(assignment("lab"), "gpu"), {}).to_json()))
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
        for task, label, nb in device_mutants():
            path = tmp / "mutant.ipynb"
            nbformat.write(nb, str(path))
            results = grade(path, tmp / "checks", out_dir=tmp)
            rows = [r for r in results["extra_data"].get("probes", []) if r["task"] == task and r["device"] == "cuda"]
            caught = all(not r["passed"] for r in rows)
            print(f"mutant {task} ({label}): {'fails' if caught else 'PASSES'} its {len(rows)} CUDA probe(s)")
            failures += int(cuda and (not rows or not caught))
    print("gpu-check:", "OK" if not failures else f"{failures} problem(s)")
    return int(failures > 0)


if __name__ == "__main__":
    sys.exit(main())
