"""attn-ref build: master notebooks -> otter assign -> student notebook, executed solution, autograder zip."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from .checks import CHECKS, with_version
from .notebooks import MASTERS, normalize, solution_from_autograder_notebook

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # attn_ref/
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same sources give the same zip
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image. It makes two environments:
# the grader's (attn_ref's needs, no torch; root only) and the students' (numpy, torch, otter; no
# attn_ref, no checks), installs bubblewrap where the image allows (the grader probes whether it works),
# and makes the autograder's files root-only. Each kernel then runs as a fresh uid of its own.
set -euo pipefail
SOURCE="${AUTOGRADER_ROOT:-/autograder}/source"
PREFIX="${ATTN_REF_PREFIX:-/opt/attn-ref}"
TORCH_INDEX="${ATTN_REF_TORCH_INDEX-__TORCH_INDEX__}"
PYTHON3="${ATTN_REF_PYTHON:-python3}"  # an interpreter every user can run
if ! "$PYTHON3" -c "import ensurepip, venv" >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq python3-venv python3-pip >/dev/null
fi
if ! command -v bwrap >/dev/null 2>&1; then
    (apt-get install -y -qq bubblewrap >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null 2>&1)) || true
fi
"$PYTHON3" -m venv "$PREFIX/grader"
"$PREFIX/grader/bin/python" -m pip install -q --no-cache-dir -r "$SOURCE/requirements-grader.txt"
"$PYTHON3" -m venv "$PREFIX/student"
"$PREFIX/student/bin/python" -m pip install -q --no-cache-dir ${TORCH_INDEX:+--extra-index-url "$TORCH_INDEX"} \\
    -r "$SOURCE/requirements-student.txt"
printf '{"kernel_python": "%s"}\\n' "$PREFIX/student/bin/python" > "$SOURCE/sandbox.json"
chmod 755 "$PREFIX"
chmod -R go-rwx "$PREFIX/grader" "$SOURCE"
chmod -R a+rX "$PREFIX/student"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for every submission. It always leaves results/results.json behind.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
PREFIX="${ATTN_REF_PREFIX:-/opt/attn-ref}"
PYTHON="${AUTOGRADER_PYTHON:-$PREFIX/grader/bin/python}"
[ -x "$PYTHON" ] || PYTHON=python3
RESULTS="$ROOT/results/results.json"
rm -f "$RESULTS"
chmod 700 "$ROOT/submission" 2>/dev/null || true
PYTHONPATH="$ROOT/source" "$PYTHON" -m attn_ref grade "$ROOT/submission" \\
    --autograder "$ROOT/source" --results "$RESULTS"
status=$?
if [ ! -s "$RESULTS" ]; then  # the grader itself failed to start: say so, score 0
    mkdir -p "$ROOT/results"
    printf '{"score": 0, "output": "The autograder failed before grading (exit %s). Please tell your TA.", "tests": [], "extra_data": {"status": "error: grader did not start"}}\\n' "$status" > "$RESULTS"
fi
exit 0
"""

# Which of the project's pinned requirements each environment gets (pins come from pyproject.toml).
GRADER_PACKAGES = {"numpy", "array-api-compat", "nbformat", "jupyter-client", "ipython", "psutil"}
STUDENT_PACKAGES = {"numpy", "torch", "ipykernel", "otter-grader", "matplotlib"}


SLOPE_FLOOR = 1.6  # the lab's cost plot should show time growing like T² (slope 2) for T >= 512


@dataclass
class Built:
    name: str
    student: Path
    solution: Path
    autograder: Path
    seconds_otter_assign: float
    seconds_solution: float
    seconds_total: float
    warnings: tuple[str, ...] = ()


def requirements(packages: set[str]) -> str:
    """The project's own runtime pins for these packages (one source: the package metadata)."""
    pins = []
    for requirement in metadata.requires("attn-ref") or []:
        name = re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)
        if "extra ==" not in requirement and re.sub(r"[_.]", "-", name).lower() in packages:
            pins.append(requirement)
    return "\n".join(sorted(pins)) + "\n"


def _zip(path: Path, files: dict[str, bytes], executable: set[str]) -> None:
    tmp = path.with_suffix(".zip.part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = (0o100755 if name in executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    tmp.replace(path)


def _grader_sources() -> dict[str, bytes]:
    """The attn_ref package as the zip carries it: the reference and the grader, not the builder."""
    files = {}
    for source in sorted(PACKAGE_DIR.rglob("*.py")):
        relative = source.relative_to(PACKAGE_DIR.parent)
        if "release" in relative.parts:
            continue
        files[relative.as_posix()] = source.read_bytes()
    return files


def autograder_zip(name: str, runner: str, out: Path) -> Path:
    checks = with_version(CHECKS[name](runner))
    files = {
        "checks.json": json.dumps(checks, indent=1, sort_keys=True).encode(),
        "requirements-grader.txt": requirements(GRADER_PACKAGES).encode(),
        "requirements-student.txt": requirements(STUDENT_PACKAGES).encode(),
        "setup.sh": SETUP_SH.replace("__TORCH_INDEX__", CPU_TORCH_INDEX if runner == "cpu" else "").encode(),
        "run_autograder": RUN_AUTOGRADER.encode(),
        **_grader_sources(),
    }
    suffix = "-gpu" if runner == "gpu" else ""
    path = out / "autograder" / f"{name}-autograder{suffix}.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    _zip(path, files, executable={"setup.sh", "run_autograder"})
    return path


class _SeededClient(NotebookClient):
    """Seeds Python's `random` in the kernel before the first cell: otter's check() picks a random emoji."""

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        await kc.execute_interactive("import random as _r; _r.seed(0); del _r", store_history=False, timeout=60)
        return kc


def execute(nb: nbformat.NotebookNode, workdir: Path, filename: str) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in a fresh python3 kernel, outputs kept, no timestamps."""
    nbformat.write(nb, str(workdir / filename))
    client = _SeededClient(nb, timeout=600, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(workdir)}})
    client.execute()
    return nb


def _write(nb: nbformat.NotebookNode, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def build_one(name: str, out: Path, runner: str = "cpu", pdf: bool = False) -> Built:
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=f"attn-ref-build-{name}-") as tmp:
        tmp = Path(tmp)
        nbformat.write(MASTERS[name](pdf=pdf), str(tmp / f"{name}.ipynb"))
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "otter", "assign", f"{name}.ipynb", "dist"],
                              cwd=tmp, capture_output=True, text=True)
        seconds_assign = time.perf_counter() - t0
        if done.returncode != 0:
            raise RuntimeError(f"otter assign failed for {name}:\n{done.stdout}\n{done.stderr}")
        student = normalize(nbformat.read(str(tmp / "dist" / "student" / f"{name}.ipynb"), as_version=4))
        student_path = _write(student, out / "assignments" / name / f"{name}.ipynb")

        solution = solution_from_autograder_notebook(nbformat.read(str(tmp / "dist" / "autograder" / f"{name}.ipynb"), as_version=4))
        run_dir = tmp / "run"
        run_dir.mkdir()
        t0 = time.perf_counter()
        solution = normalize(execute(solution, run_dir, f"{name}.ipynb"))
        seconds_solution = time.perf_counter() - t0
        solution_path = _write(solution, out / "solutions" / name / f"{name}.ipynb")
        # otter's own dist/ (its autograder notebook holds every test) dies with tmp
    zip_path = autograder_zip(name, runner, out)
    return Built(name, student_path, solution_path, zip_path, seconds_assign, seconds_solution, time.perf_counter() - start,
                 tuple(_solution_warnings(solution)))


def _solution_warnings(nb: nbformat.NotebookNode) -> list[str]:
    """Build checks on what the executed solution shows: the cost plot's fitted slope should be near T²."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            match = re.search(r"fitted slope of time against T for T >= 512: ([0-9.]+)", output.get("text", ""))
            if match and float(match.group(1)) < SLOPE_FLOOR:
                found.append(f"the solution's cost plot has a fitted slope of {match.group(1)} for T >= 512, below "
                             f"{SLOPE_FLOOR}: the machine was busy or the timing is off; rebuild to get a plot that shows T²")
    return found


def build(out: Path, only: str | None = None, runner: str = "cpu", pdf: bool = False) -> list[Built]:
    names = [only] if only else list(MASTERS)
    return [build_one(name, Path(out), runner, pdf) for name in names]
