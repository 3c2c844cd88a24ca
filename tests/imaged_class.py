"""A small lab class and the verdicts of its results, to compare kernels from a kernel image with kernels started
afresh, and a cluster's workers with --jobs (tests/grade/isolation/test_kernel_image.py, tests/grade/classroom/test_cluster.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
from course_units import bug_set
from hostile import notebook

IMAGE_USED = "started from one kernel image"


def lab_class(release, folder: Path, bug_sets: int) -> Path:
    """The solution, the blank notebook and the first sets of bugs of the lab's mutants, one submission each."""
    solution, blank = notebook(release, "lab", "solution"), notebook(release, "lab", "blank")
    folder.mkdir()
    folder.chmod(0o755)
    nbformat.write(solution, str(folder / "right.ipynb"))
    nbformat.write(blank, str(folder / "blank.ipynb"))
    for k in range(bug_sets):
        nb = copy.deepcopy(solution)
        for _, marker, source, _ in bug_set(k).values():
            for cell in nb.cells:
                if cell.cell_type == "code" and marker in cell.source:
                    cell.source = source
        nbformat.write(nb, str(folder / f"bugs_{k}.ipynb"))
    return folder


def verdict(results: dict) -> list:
    """Every test's name, score and message, the status and the cell errors (what a student and a TA read)."""
    return [results["score"], results["extra_data"]["status"], results["extra_data"]["cell_errors"],
            [(t["name"], t["score"], t["output"]) for t in results["tests"]]]


def verdicts(out: Path) -> dict[str, list]:
    return {path.stem: verdict(json.loads(path.read_text())) for path in sorted((out / "results").glob("*.json"))}
