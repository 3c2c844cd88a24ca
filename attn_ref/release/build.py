"""attn-ref build: master notebooks -> otter assign -> student notebook, executed solution, autograder zip."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError

from ..grade.checks_json import EXPORT_MODULE
from ..grade.settings import NOTEBOOK_TIMEOUT
from . import cache, sweep_record
from .cell_sources import failure, source_of
from .course import Assignment, load_course
from .errors import ReleaseError
from .hidden_checks import checks, read_back, stamp
from .locks import LockError, locked, pins
from .notebooks import (
    EXPLORATION_TAG,
    export_module,
    master,
    normalize,
    solution_from_autograder_notebook,
    with_export_module,
    with_init_cell,
    with_outro,
    without_blank_cells,
)
from .otter_zip import otter_zip

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # attn_ref/
ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: the same sources give the same zip
# a graded cell that runs longer than this in the build's solution run fails the build: grading runs every such
# cell for every student within NOTEBOOK_TIMEOUT (180 s), on machines and code slower than the solution's
SLOW_CELL = NOTEBOOK_TIMEOUT / 4
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
SUBMITTERS=()  # Gradescope's list of this submission's students: whose variant of a question is graded
[ -f "$ROOT/submission_metadata.json" ] && SUBMITTERS=(--submitters "$ROOT/submission_metadata.json")
PYTHONPATH="$ROOT/source" "$PYTHON" -m attn_ref grade "$ROOT/submission" \\
    --autograder "$ROOT/source" --results "$RESULTS" "${SUBMITTERS[@]}"
status=$?
if [ ! -s "$RESULTS" ]; then  # the grader itself failed to start: say so, score 0
    mkdir -p "$ROOT/results"
    printf '{"score": 0, "output": "The autograder failed before grading (exit %s). Please tell your TA.", "tests": [], "extra_data": {"status": "error: grader did not start"}}\\n' "$status" > "$RESULTS"
fi
exit 0
"""

STUDENT_REQUIREMENTS_HEADER = """\
# The environment this assignment is graded in: the same versions the autograder's kernels run.
#   python -m venv .venv, activate it, then: pip install -r requirements.txt
# (Python 3.10 or newer, on Linux, macOS or Windows; on Linux, PyPI's torch brings its CUDA libraries.)
"""


class BuildError(ReleaseError):
    """The release could not be built; nothing was moved into place. ``detail``: a traceback, shown with --verbose."""

    exit_code = 1

    def __init__(self, message: str, detail: str = ""):
        super().__init__(message)
        self.detail = detail


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
    otter_zip: Path | None = None  # autograder/<name>-otter-autograder.zip, with --otter-zip
    cached: bool = False  # its notebooks came from the build's cache (cache.py): nothing they depend on changed


def _lock(environment: str) -> str:
    try:
        return locked(environment)
    except LockError as err:
        raise BuildError(str(err)) from None


def _otter_version() -> str:
    versions = [version for name, version, _ in pins(_lock("student")) if name == "otter-grader"]
    if len(set(versions)) != 1:
        raise BuildError("locks/student.txt pins no single otter-grader release: run `make lock`")
    return versions[0]


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


def autograder_zip(assignment: Assignment, runner: str, folder: Path) -> Path:
    """The Gradescope autograder: checks.json, the grader with its reference, the scripts and the pins."""
    files = {
        "requirements-grader.txt": _lock("grader").encode(),
        "requirements-student.txt": _lock("student").encode(),
        "setup.sh": SETUP_SH.replace("__TORCH_INDEX__", CPU_TORCH_INDEX if runner == "cpu" else "").encode(),
        "run_autograder": RUN_AUTOGRADER.encode(),
        **_grader_sources(),
        **{f"references/{file.name}": file.read_bytes() for _, file in assignment.references if file is not None},
    }
    data = stamp(checks(assignment, runner), files)
    files["checks.json"] = json.dumps(data.to_json(), indent=1, sort_keys=True).encode()
    suffix = "-gpu" if runner == "gpu" else ""
    path = folder / f"{assignment.name}-autograder{suffix}.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    _zip(path, files, executable={"setup.sh", "run_autograder"})
    return path


class _SeededClient(NotebookClient):
    """Seeds Python's `random` in the kernel before every code cell: otter's check() picks a random emoji, and
    how many random draws a cell makes before it is not ours to fix (a seed once per kernel was seen to give
    another emoji in one build of two), so each cell starts from the same state."""

    seconds: dict[int, float]  # how long each code cell ran, by its index (kept off the notebook: no timestamps)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        if cell.cell_type == "code":
            await self.kc.execute_interactive("import random as _r; _r.seed(0); del _r", store_history=False, timeout=60)
        start = time.monotonic()
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        finally:
            self.seconds = {**getattr(self, "seconds", {}), cell_index: time.monotonic() - start}


def execute(nb: nbformat.NotebookNode, workdir: Path, filename: str, seconds: dict | None = None) -> nbformat.NotebookNode:
    """Run a notebook top to bottom in a fresh python3 kernel, outputs kept, no timestamps.

    The kernel's own output goes to a log beside ``workdir``, not to the build's stderr: what the instructor
    reads there is the build's one sentence (a kernel under load once added libzmq's dying words to it). A
    kernel that dies is named, with the log's last lines."""
    nbformat.write(nb, str(workdir / filename))
    client = _SeededClient(nb, timeout=600, kernel_name="python3", record_timing=False, coalesce_streams=True,
                            resources={"metadata": {"path": str(workdir)}}, extra_arguments=["--IPKernelApp.log_level=ERROR"])
    log_path = workdir.parent / f"{filename}.kernel.log"
    with open(log_path, "wb") as log, _sigterm_kept():
        try:
            client.execute(stdout=log, stderr=log)
        except DeadKernelError:
            log.flush()
            tail = log_path.read_bytes()[-600:].decode(errors="replace").strip()
            raise BuildError(f"the kernel running {filename} died while the build ran it" + (f": {tail}" if tail else "")) from None
        finally:
            (seconds if seconds is not None else {}).update(getattr(client, "seconds", {}))
    return nb


def _slow_graded_cell(nb: nbformat.NotebookNode, seconds: dict[int, float], assignment: Assignment) -> str:
    """A cell grading runs (not an exploration cell) that took the build's solution run over SLOW_CELL seconds:
    every grading runs it again, for every student, within the notebook's NOTEBOOK_TIMEOUT (a setup.py that
    slept 90 s held the build for minutes and would have held every grading)."""
    for index, cell in enumerate(nb.cells):
        if seconds.get(index, 0.0) > SLOW_CELL and EXPLORATION_TAG not in cell.get("metadata", {}).get("tags", []):
            where = source_of(cell.source, assignment) or f"cell {index} of the solution notebook"
            return (f"{where}: ran {seconds[index]:.0f} s in the build's solution run; grading runs it for every student, "
                    f"with {NOTEBOOK_TIMEOUT:.0f} s for all the notebook's cells: make it quick, or move the slow work "
                    "into an exploration cell (not run while grading)")
    return ""


def _write(nb: nbformat.NotebookNode, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def _write_export_module(assignment: Assignment, out: Path) -> None:
    """export_written.py beside the student notebook, whose export cell imports it, and beside the solution
    (so that a solution opened in Jupyter exports as the students' notebook does). The autograder zip does
    not need it: the grader skips the export cell."""
    source = export_module(assignment)
    if source is not None:
        for folder in ("assignments", "solutions"):
            (out / folder / assignment.name / f"{EXPORT_MODULE}.py").write_text(source)


@dataclass(frozen=True)
class Shared:
    """What every piece's cache key shares (cache.py), worked out once a build."""

    course: Path
    registry: str  # the course's registry.py, hashed
    package: str  # every file of attn_ref, hashed
    locks: tuple[str, str]  # the students' and the grader's
    environment: tuple[str, ...]  # the build's interpreter and packages

    @classmethod
    def of(cls, course: Path) -> Shared:
        registry = hashlib.sha256((Path(course) / "registry.py").read_bytes()).hexdigest()
        return cls(Path(course), registry, cache.folder_digest(PACKAGE_DIR), (_lock("student"), _lock("grader")),
                   tuple(cache.environment()))

    def parts(self) -> list:
        return [self.registry, self.package, list(self.locks), list(self.environment)]


def _assignment_parts(assignment: Assignment, leave_out: tuple[str, ...] = ()) -> list:
    """An assignment's part of a key: its name, title and folder (``leave_out``: names of files and folders the
    piece does not read)."""
    return [assignment.name, assignment.title, cache.folder_digest(assignment.folder, leave_out)]


def notebooks_key(assignment: Assignment, pdf: bool, shared: Shared) -> str:
    """What an assignment's two notebook folders depend on: its sources but its mutants and its seed-sweep record
    (no notebook holds them), the builder and its environment."""
    parts = _assignment_parts(assignment, leave_out=("mutants", sweep_record.FILE_NAME))
    return cache.key("notebooks", parts, pdf, shared.parts())


def check_key(assignment: Assignment, release: Path, built: Built, shared: Shared) -> str:
    """What an assignment's check depends on: the notebooks' key's inputs, its seed-sweep record, the release's
    zip and notebooks, the students' environment its kernels run, and whether it runs as root (run_autograder)."""
    files = [cache.folder_digest(release / folder / assignment.name) for folder in ("assignments", "solutions")]
    zip_digest = hashlib.sha256(built.autograder.read_bytes()).hexdigest()
    return cache.key("check", _assignment_parts(assignment), shared.parts(), files, zip_digest,
                     cache.student_environment(), os.geteuid() == 0)


def build_one(assignment: Assignment, out: Path, runner: str = "cpu", pdf: bool = False, with_otter_zip: bool = False,
              shared: Shared | None = None) -> Built:
    """One assignment's three outputs under ``out``: the student notebook, the executed solution, the zip; the
    notebooks from the build's cache where ``shared`` is given and their key matches (cache.py)."""
    name = assignment.name
    start = time.perf_counter()
    key = notebooks_key(assignment, pdf, shared) if shared is not None else None
    found = cache.load(shared.course, "notebooks", key) if shared is not None else None
    if found is not None:
        meta, files = found
        for folder in ("assignments", "solutions"):
            shutil.copytree(files / folder, out / folder / name, dirs_exist_ok=True)
        seconds_assign, seconds_solution, warnings = 0.0, 0.0, tuple(meta["warnings"])
    else:
        seconds_assign, seconds_solution, warnings = _notebooks(assignment, out, pdf)
        if shared is not None:
            cache.store(shared.course, "notebooks", key, {"warnings": list(warnings)},
                        {folder: out / folder / name for folder in ("assignments", "solutions")})
    zip_path = autograder_zip(assignment, runner, out / "autograder")
    otter = None
    if with_otter_zip:
        try:
            otter = otter_zip(assignment, zip_path, out / "autograder", ZIP_DATE)
        except RuntimeError as err:
            raise BuildError(str(err)) from None
    return Built(name, out / "assignments" / name / f"{name}.ipynb", out / "solutions" / name / f"{name}.ipynb",
                 zip_path, seconds_assign, seconds_solution, time.perf_counter() - start, warnings, otter, found is not None)


def _notebooks(assignment: Assignment, out: Path, pdf: bool) -> tuple[float, float, tuple[str, ...]]:
    """The student folder (otter assign) and the solution folder (its run) under ``out``: (seconds of otter assign,
    seconds of the solution's run, the build checks' warnings on what the solution printed)."""
    name = assignment.name
    with tempfile.TemporaryDirectory(prefix=f"attn-ref-build-{name}-") as tmp:
        tmp = Path(tmp)
        nbformat.write(master(assignment, pdf=pdf), str(tmp / f"{name}.ipynb"))
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "otter", "assign", f"{name}.ipynb", "dist"],
                              cwd=tmp, capture_output=True, text=True)
        seconds_assign = time.perf_counter() - t0
        if done.returncode != 0:
            raise BuildError(f"otter assign failed for {name}:\n{done.stdout}\n{done.stderr}")
        student = nbformat.read(str(tmp / "dist" / "student" / f"{name}.ipynb"), as_version=4)
        otter = _otter_version()
        student = with_init_cell(without_blank_cells(student), assignment, otter)
        student = normalize(with_outro(with_export_module(student, assignment), assignment))
        _write(student, out / "assignments" / name / f"{name}.ipynb")
        (out / "assignments" / name / "requirements.txt").write_text(STUDENT_REQUIREMENTS_HEADER + _lock("student"))

        solution = solution_from_autograder_notebook(nbformat.read(str(tmp / "dist" / "autograder" / f"{name}.ipynb"), as_version=4))
        solution = with_outro(with_init_cell(without_blank_cells(solution), assignment, otter), assignment)
        run_dir = tmp / "run"
        run_dir.mkdir()
        t0 = time.perf_counter()
        seconds: dict[int, float] = {}
        try:
            executed = execute(solution, run_dir, f"{name}.ipynb", seconds)
        except CellExecutionError:
            raise BuildError(*failure(solution, assignment)) from None
        if slow := _slow_graded_cell(executed, seconds, assignment):
            raise BuildError(slow)
        solution = normalize(executed)
        seconds_solution = time.perf_counter() - t0
        _write(solution, out / "solutions" / name / f"{name}.ipynb")
        _write_export_module(assignment, out)
        # otter's own dist/ (its autograder notebook holds every test) dies with tmp
    return seconds_assign, seconds_solution, tuple(_solution_warnings(assignment, solution))


def _solution_warnings(assignment: Assignment, nb: nbformat.NotebookNode) -> list[str]:
    """The assignment's build checks on what its executed solution prints (e.g. the lab's T² slope)."""
    found = []
    text = "".join(output.get("text", "") for cell in nb.cells for output in cell.get("outputs", []))
    for check in assignment.layout.build_checks:
        match = re.search(check.pattern, text)
        if match is None:
            found.append(f"the solution never printed what a build check looks for ({check.pattern!r})")
        elif float(match.group(1)) < check.minimum:
            found.append(check.message.format(value=match.group(1), minimum=check.minimum))
    return found


def _move_into_place(staged: Path, out: Path, built: Built) -> Built:
    """The three outputs of one assignment, moved from the staging folder into ``out`` one right after another."""
    moves = [(staged / "assignments" / built.name, out / "assignments" / built.name),
             (staged / "solutions" / built.name, out / "solutions" / built.name),
             (built.autograder, out / "autograder" / built.autograder.name)]
    # written by attn-ref check (absent with --no-check) and by --otter-zip: an old one would describe another build
    for extra in (f"autograder/{built.name}-versions.txt", f"autograder/{built.name}-otter-autograder.zip"):
        (out / extra).unlink(missing_ok=True)
        if (staged / extra).exists():
            moves.append((staged / extra, out / extra))
    for source, target in moves:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            old = target.with_name(f".{target.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            target.rename(old)
            source.rename(target)
            shutil.rmtree(old)
        else:
            source.replace(target)
    return replace(built, student=out / "assignments" / built.name / built.student.name,
                   solution=out / "solutions" / built.name / built.solution.name,
                   autograder=out / "autograder" / built.autograder.name,
                   otter_zip=built.otter_zip and out / "autograder" / built.otter_zip.name)


def build(out: Path, course: Path, only: str | None = None, runner: str = "cpu", pdf: bool = False,
          verify: Callable[[Path, list[Built]], None] | None = None, with_otter_zip: bool = False,
          say: Callable[[str], None] | None = None) -> list[Built]:
    """Build every assignment of the course (or ``only`` one) in a staging folder, ``verify`` it there
    (attn-ref check), and only then move the outputs into ``out``: a failed build changes nothing in ``out`` (the
    check keeps what it swept in the course's seed-sweep record, sweep_record.py).

    Each piece comes from the build's cache where its key matches (cache.py): the notebooks, and the check
    itself where every assignment's check key matches one that passed (``verify`` is then not called, and
    ``say`` is told so). ``say``: a line for each phase, as it starts."""
    say = say or (lambda line: None)
    out = Path(out)
    assignments = load_course(course, only)
    for assignment in assignments:
        read_back(assignment)
    out.mkdir(parents=True, exist_ok=True)
    shared = Shared.of(course)
    with _terminable():
        staged = Path(tempfile.mkdtemp(prefix=".attn-ref-build-", dir=out))
        try:
            built = []
            for a in assignments:
                say(f"{a.name}: building the notebooks and the autograder zip")
                built.append(build_one(a, staged, runner, pdf, with_otter_zip, shared))
                if built[-1].cached:
                    say(f"{a.name}: notebooks from the cache (nothing they depend on changed)")
            if verify is not None:
                _verify(assignments, built, staged, shared, verify, say)
            return [_move_into_place(staged, out, b) for b in built]
        finally:
            shutil.rmtree(staged, ignore_errors=True)


def _verify(assignments: list[Assignment], built: list[Built], staged: Path, shared: Shared,
            verify: Callable[[Path, list[Built]], None], say: Callable[[str], None]) -> None:
    """``verify`` the staged release, unless every assignment's check key matches a check that passed; a check
    that passes is kept under the keys it was made for (its record as it leaves it)."""
    keys = {b.name: check_key(a, staged, b, shared) for a, b in zip(assignments, built)}
    found = {name: cache.load(shared.course, "check", key) for name, key in keys.items()}
    if all(found.values()):
        for name, (_, files) in found.items():
            for report in files.glob("*"):
                shutil.copyfile(report, staged / "autograder" / report.name)
        say("check: skipped, every key matches a check that passed (the same sources, release and environments; "
            "`attn-ref check` verifies again)")
        return
    say("check: verifying the staged release (attn-ref check)")
    verify(staged, built)
    for a, b in zip(assignments, built):  # its record as the check left it
        versions = staged / "autograder" / f"{b.name}-versions.txt"
        cache.store(shared.course, "check", check_key(a, staged, b, shared), {},
                    {versions.name: versions} if versions.is_file() else {})


@contextlib.contextmanager
def _sigterm_kept():
    """nbclient sets its own SIGTERM handler while it runs a notebook and leaves the default one after it
    (asyncio's remove_signal_handler): _terminable's is put back, so SIGTERM after the solution's run still
    unwinds the build and ends the check's processes instead of killing the build where it stands."""
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if threading.current_thread() is threading.main_thread() and before is not None:
            signal.signal(signal.SIGTERM, before)


@contextlib.contextmanager
def _terminable():
    """SIGTERM (a cancelled CI job, `kill`, `timeout`) unwinds the build as Ctrl-C does, so its staging folder is
    removed: by default the signal ended the process where it stood and left .attn-ref-build-* in --out."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread has signals
        yield
        return

    def stop(signum, frame):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
