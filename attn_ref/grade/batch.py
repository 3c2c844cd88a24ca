"""attn-ref grade over a class: many submissions in parallel, resumable, with a gradebook.

PATH may be a folder of submissions (.ipynb files, grader.export() zips, or one folder each), or a
Gradescope "Export Submissions" zip or its unpacked folder (one folder per submission and
submission_metadata.yml naming each submission's students). Every submission gets a results file,
whatever happens to it; the batch never stops for one bad notebook.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import re
import statistics
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path


from . import submission as submission_files
from .core import (CALL_TIMEOUT, CELL_TIMEOUT, NOTEBOOK_TIMEOUT, AutograderError, failed_results, load_autograder,
                   make_job, units, write_atomically, write_results)
from .sandbox import SandboxPlan, resolve
from .watchdog import Job, Supervisor

METADATA = "submission_metadata.yml"


@dataclass
class Submission:
    key: str  # unique, file-name safe: names results/<key>.json
    path: Path
    students: list[dict] = field(default_factory=list)  # {"name", "sid", "email"} from Gradescope
    problem: str = ""  # a reason it cannot be graded at all, found while listing


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"


def is_gradescope_export(path: Path) -> bool:
    if path.is_dir():
        return (path / METADATA).is_file()
    if path.suffix == ".zip" and zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            return any(Path(n).name == METADATA for n in archive.namelist())
    return False


def is_batch(path: Path) -> bool:
    """A class (folder of submissions or Gradescope export), not one submission."""
    return is_gradescope_export(path) or (path.is_dir() and any(
        p.suffix in (".ipynb", ".zip") or p.is_dir() for p in path.iterdir() if not p.name.startswith(".")))


def _unpack_export(path: Path, out: Path) -> Path:
    """A Gradescope export zip, unpacked once under OUT/.export/<its hash>/ (kept for regrades)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    target = out / ".export" / digest
    if not (target / ".complete").exists():
        with zipfile.ZipFile(path) as archive:
            for member in archive.infolist():
                name = Path(member.filename)
                if name.is_absolute() or ".." in name.parts:
                    continue  # never write outside the target
                archive.extract(member, target)
        (target / ".complete").touch()
    metadata = next(target.rglob(METADATA))
    return metadata.parent


def _students(entry) -> list[dict]:
    submitters = (entry or {}).get(":submitters") or []
    return [{"name": str(s.get(":name", "")), "sid": str(s.get(":sid", "") or ""), "email": str(s.get(":email", "") or "")}
            for s in submitters if isinstance(s, dict)]


def discover(path: Path, out: Path) -> list[Submission]:
    path = Path(path)
    if path.is_file() and is_gradescope_export(path):
        path = _unpack_export(path, out)
    if (path / METADATA).is_file():
        import yaml  # only TAs' exports need it; Gradescope's grader environment does without

        try:
            metadata = yaml.safe_load((path / METADATA).read_text()) or {}
        except yaml.YAMLError as err:
            raise AutograderError(f"{path / METADATA} is not valid YAML: {err}") from None
        found = []
        for folder, entry in sorted(metadata.items()):
            sub = Submission(_safe(str(folder)), path / str(folder), _students(entry))
            if not sub.path.is_dir():
                sub.problem = f"the export lists {folder} but has no such folder"
            found.append(sub)
        return found
    found, seen = [], set()
    for entry in sorted(path.iterdir()):
        if entry.name.startswith(".") or not (entry.is_dir() or entry.suffix in (".ipynb", ".zip")):
            continue
        key = _safe(entry.stem if entry.is_file() else entry.name)
        while key in seen:
            key += "_"
        seen.add(key)
        found.append(Submission(key, entry))
    return found


def content_hash(path: Path) -> str:
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode() + b"\0")
        digest.update(file.read_bytes() if file.is_file() else b"")
    return digest.hexdigest()


def already_graded(results_path: Path, submission_hash: str, version: str) -> bool:
    try:
        extra = json.loads(results_path.read_text())["extra_data"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return extra.get("submission_hash") == submission_hash and extra.get("autograder_version") == version


# ---- the class ---------------------------------------------------------------------------------------

@dataclass
class BatchReport:
    total: int
    graded: int
    skipped: int
    out: Path
    rows: list[dict]
    interrupted: bool = False


def _check_assignment(subs: list[Submission], checks: dict) -> None:
    """A wrong --autograder (another assignment's zip) stops before grading anything."""
    names = Counter()
    for sub in subs[:60]:
        with contextlib.suppress(Exception):
            nb, _ = submission_files.load(sub.path)
            names[nb.metadata.get("otter", {}).get("assignment_name")] += 1
    names.pop(None, None)
    if names and names[checks["assignment"]] * 2 < sum(names.values()):  # most are for another assignment
        common, count = names.most_common(1)[0]
        raise AutograderError(
            f"{count} of {sum(names.values())} submissions are for {common!r}, "
            f"but the autograder is for {checks['assignment']!r}: pass that assignment's zip"
        )


class _Locks:
    """One lock per submission (two runs on one folder take turns), taken without blocking the loop."""

    def __init__(self, folder: Path):
        self.folder, self.held = folder, {}
        folder.mkdir(parents=True, exist_ok=True)

    def try_take(self, key: str) -> bool:
        fd = os.open(self.folder / f"{key}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.held[key] = fd
        return True

    def release(self, key: str) -> None:
        fd = self.held.pop(key, None)
        if fd is not None:
            os.close(fd)


def grade_batch(path, autograder, out, jobs: int | None = None, budget: float = 480.0, force: bool = False,
                plan: SandboxPlan | None = None, progress: bool = True, **settings) -> BatchReport:
    out = Path(out)
    checks = load_autograder(autograder)
    subs = discover(Path(path), out)
    if not subs:
        raise AutograderError(f"no submissions found in {path}")
    _check_assignment(subs, checks)
    plan = plan or resolve(autograder)
    if checks.get("runner") == "gpu":
        plan = plan.for_gpu()
    (out / "results").mkdir(parents=True, exist_ok=True)
    locks = _Locks(out / "locks")
    jobs = max(1, jobs or os.cpu_count() or 1)
    limits = {"cell": settings.get("cell_timeout", CELL_TIMEOUT), "call": settings.get("call_timeout", CALL_TIMEOUT),
              "notebook": settings.get("notebook_timeout", NOTEBOOK_TIMEOUT)}
    todo, by_key = [], {}
    for sub in subs:
        digest = content_hash(sub.path) if sub.path.exists() else ""
        results_path = out / "results" / f"{sub.key}.json"
        if force or not already_graded(results_path, digest, checks["version"]):
            todo.append((sub, results_path, digest))
            by_key[sub.key] = (sub, results_path, digest)
    graded = 0

    def finish(sub: Submission, results_path: Path, digest: str, results: dict) -> None:
        nonlocal graded
        results["extra_data"].update(submission=sub.key, submission_hash=digest, students=sub.students)
        write_results(results_path, results)
        locks.release(sub.key)
        graded += 1
        advance(results["extra_data"].get("status", "ok") != "ok")

    def prepare(job: Job) -> str:
        sub, results_path, digest = by_key[job.key]
        if not locks.try_take(sub.key):
            return "wait"  # another run grades it right now
        if not force and already_graded(results_path, digest, checks["version"]):
            locks.release(sub.key)  # that other run finished it
            return "skip"
        return "start"

    interrupted = False
    with _progress(progress, len(subs), len(subs) - len(todo)) as advance:
        queue = []
        for sub, results_path, digest in todo:
            if sub.problem:  # nothing to run: the row says why
                if locks.try_take(sub.key):
                    results = _failed(checks, plan, sub.problem)
                    finish(sub, results_path, digest, results)
                continue
            queue.append(make_job(sub.key, sub.path, checks, plan, limits, budget))
        supervisor = Supervisor(plan, jobs)
        try:
            supervisor.run(queue, lambda job, results: finish(*by_key[job.key], results), prepare=prepare)
        except KeyboardInterrupt:
            interrupted = True
    rows = write_gradebook(out, subs, checks)
    return BatchReport(len(subs), graded, len(subs) - len(todo), out, rows, interrupted)


def _failed(checks: dict, plan: SandboxPlan, reason: str) -> dict:
    results = failed_results(checks, reason)
    results["execution_time"] = 0.0
    results["extra_data"].update(autograder_version=checks["version"], sandbox=plan.describe())
    return results


@contextlib.contextmanager
def _progress(enabled: bool, total: int, already: int):
    if not enabled:
        yield lambda failed: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]} failed"),
                  TimeRemainingColumn()) as bar:
        task = bar.add_task("grading", total=total, completed=already, failed=0)
        count = {"failed": 0}

        def advance(failed: bool):
            count["failed"] += failed
            bar.update(task, advance=1, failed=count["failed"])

        yield advance


# ---- the gradebook -----------------------------------------------------------------------------------

def _status(results: dict) -> str:
    return results.get("extra_data", {}).get("status", "error: no results")


def _rows(out: Path, subs: list[Submission], checks: dict) -> list[dict]:
    names = [u["name"] for u in units(checks)]
    rows = []
    for sub in subs:
        try:
            results = json.loads((out / "results" / f"{sub.key}.json").read_text())
        except (OSError, ValueError):
            results = {"tests": [], "score": 0, "extra_data": {"status": "error: not graded yet"}}
        by_unit = {t["name"].split(":")[0]: t["score"] for t in results.get("tests", [])}
        people = sub.students or [{"name": "", "sid": "", "email": ""}]
        for person in people:
            row = {"name": person["name"] or sub.key, "sid": person["sid"], "email": person["email"], "submission": sub.path.name}
            row.update({u: f"{by_unit.get(u, 0):g}" for u in names})
            row["total"] = f"{results.get('score', 0):g}"
            row["status"] = _status(results)
            rows.append(row)
    return rows


def write_gradebook(out: Path, subs: list[Submission], checks: dict) -> list[dict]:
    """grades.csv, written/<question>.html and summary.png, from whatever results exist now."""
    with open(out / "locks" / "gradebook.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs on one folder take turns here
        rows = _rows(out, subs, checks)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["name"])
        writer.writeheader()
        writer.writerows(rows)
        write_atomically(out / "grades.csv", buffer.getvalue().encode())
        if checks.get("written"):
            from .written import write_written_pages

            write_written_pages(out / "written", subs, checks)
        _summary_png(out / "summary.png", rows, checks)
    return rows


def summary_lines(rows: list[dict], checks: dict) -> list[str]:
    names = [u["name"] for u in units(checks)]
    lines = [f"{'question':10} {'mean':>7} {'median':>7} {'max':>7}"]
    for unit in names + ["total"]:
        values = [float(r[unit]) for r in rows]
        if values:
            lines.append(f"{unit:10} {statistics.mean(values):7.2f} {statistics.median(values):7.2f} {max(values):7.2f}")
    problems = {}
    for row in rows:
        if row["status"] != "ok":
            problems.setdefault(row["status"], []).append(row["name"])
    lines.append(f"{len(rows) - sum(len(v) for v in problems.values())} ok, {sum(len(v) for v in problems.values())} not ok")
    for status, names in sorted(problems.items()):
        lines.append(f"  {len(names)} × {status}: {', '.join(names[:5])}{' …' if len(names) > 5 else ''}")
    return lines


def _summary_png(path: Path, rows: list[dict], checks: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [u["name"] for u in units(checks)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    left.hist([float(r["total"]) for r in rows], bins=20)
    left.set_xlabel("total score")
    left.set_ylabel("students")
    left.set_title(f"{checks['assignment']}: totals")
    right.bar(names, [statistics.mean(float(r[u]) for r in rows) if rows else 0 for u in names])
    right.set_title("mean score per question")
    right.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=100)
    plt.close(fig)
    write_atomically(path, image.getvalue())
