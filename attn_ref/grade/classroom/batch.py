"""attn-ref grade over a class: many submissions at once, each in its own grading process, resumable,
with a gradebook. Every submission gets a results file, whatever happens to it; the batch never stops
for one bad notebook. One that runs out of time beside others is graded again alone at the end: its
neighbours may have slowed it, and a timeout is recorded only if it runs out of time alone too."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .. import submission as submission_files
from ..autograder import Autograder, AutograderError
from ..core import limits_from, make_job, prepare
from ..isolation.sandbox import SandboxPlan
from ..isolation.watchdog import Job, Supervisor
from ..results import CONTENT_HASH, Outcome, failed_results, write_results
from ..scoring.checks import Checks
from ..settings import MARGIN
from ..wire import Status
from .discover import Submission, already_graded, content_hash, discover, skipped
from .gradebook import Gradebook, write_gradebook

TIMEOUT = Status.TIMEOUT.value  # the status of results that ran out of time (a cell, a call or the budget)


@dataclass
class BatchReport:
    total: int
    graded: int
    skipped: int
    out: Path
    book: Gradebook
    not_submissions: list[str]  # folders with no notebook in them, not graded
    interrupted: bool = False


def check_assignment(subs: list[Submission], autograder: Autograder) -> None:
    """A wrong --autograder (another assignment's zip for most submissions, or for the one notebook
    graded alone) stops before grading anything."""
    checks = autograder.checks
    names = Counter()
    for sub in subs[:60]:
        with contextlib.suppress(Exception):
            nb, _ = submission_files.load(sub.path)
            names[nb.metadata.get("otter", {}).get("assignment_name")] += 1
    names.pop(None, None)
    if names and names[checks.assignment] * 2 < sum(names.values()):  # most are for another assignment
        common, count = names.most_common(1)[0]
        raise AutograderError(
            f"{count} of {sum(names.values())} submissions are for {common!r}, "
            f"but the autograder is for {checks.assignment!r}: pass that assignment's zip"
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


def grade_batch(path, autograder, out, jobs: int | None = None, force: bool = False, plan: SandboxPlan | None = None,
                progress: bool = True, canvas: dict | None = None, cluster: str | None = None,
                **timeouts: float) -> BatchReport:
    """Grade a class into ``out`` (results/, grades.csv, ...); ``timeouts`` as for grade(); ``canvas``:
    {"roster": path, "assignment": column name} for a Canvas import file; ``cluster``: a Dask scheduler's
    address, or local:N, to grade on its workers instead of here."""
    out = Path(out)
    autograder, plan = prepare(autograder, plan)
    checks = autograder.checks
    subs = discover(Path(path), out)
    if not subs:
        raise AutograderError(f"no submissions found in {path}")
    check_assignment(subs, autograder)
    (out / "results").mkdir(parents=True, exist_ok=True)
    locks = _Locks(out / "locks")
    jobs = max(1, jobs or os.cpu_count() or 1)
    limits = limits_from(**timeouts)
    todo, by_key = [], {}
    for sub in subs:
        content = content_hash(sub.path) if sub.path.exists() else ""
        results_path = out / "results" / f"{sub.key}.json"
        if force or not already_graded(results_path, content, checks.version):
            todo.append((sub, results_path, content))
            by_key[sub.key] = (sub, results_path, content)
    graded = 0
    again: list[Job] = []  # ran out of time beside others: graded again alone after the parallel pass

    def first_pass(job: Job, results: dict) -> None:
        if _timed_out(results):
            again.append(job)  # its lock stays held; nothing is written until it is graded alone
        else:
            finish(*by_key[job.key], results)

    def finish(sub: Submission, results_path: Path, content: str, results: dict) -> None:
        nonlocal graded
        results["extra_data"].update({"submission": sub.key, CONTENT_HASH: content, "students": sub.students})
        write_results(results_path, results)
        locks.release(sub.key)
        graded += 1
        advance(results["extra_data"].get("status", "ok") != "ok")

    def prepare_job(job: Job) -> str:
        sub, results_path, content = by_key[job.key]
        if not locks.try_take(sub.key):
            return "wait"  # another run grades it right now
        if not force and already_graded(results_path, content, checks.version):
            locks.release(sub.key)  # that other run finished it
            return "skip"
        return "start"

    interrupted = False
    with _progress(progress, len(subs), len(subs) - len(todo)) as advance:
        queue = []
        for sub, results_path, content in todo:
            if sub.problem:  # nothing to run (the export lists a folder it lacks): no grade, and the row says why
                if locks.try_take(sub.key):
                    finish(sub, results_path, content, _failed(checks, plan, sub.problem, Outcome.NOT_GRADED))
                continue
            queue.append(make_job(sub.key, sub.path, autograder, plan, limits))
        runner, client = Supervisor(plan, jobs, MARGIN), None
        if cluster:
            from .cluster import ClusterRunner, connect

            if not autograder.path.is_file():
                raise AutograderError(f"{autograder.path}: a cluster needs the autograder zip, not a folder")
            client = connect(cluster, kernels_share_network=plan.bwrap is None)
            runner = ClusterRunner(client, autograder.path, timeouts)
        try:
            runner.run(queue, first_pass, prepare=prepare_job)
            for job in again:
                runner.run([job], lambda job, results: finish(*by_key[job.key], _graded_alone(results)))
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if client is not None:
                _close(client)
    book = write_gradebook(out, subs, checks, canvas)
    return BatchReport(len(subs), graded, len(subs) - len(todo), out, book, skipped(Path(path)), interrupted)


def _timed_out(results: dict) -> bool:
    return results.get("extra_data", {}).get("status", "").startswith(TIMEOUT)


def _graded_alone(results: dict) -> dict:
    """The results of a second grading, alone: said so, and a timeout now stands."""
    extra = results.setdefault("extra_data", {})
    extra["graded_alone"] = True
    note = "It ran out of time while graded beside other submissions, so it was graded again alone"
    if _timed_out(results):
        extra["status"] = TIMEOUT + " (also when graded again alone)" + extra["status"][len(TIMEOUT):]
        note += ", and ran out of time again."
    else:
        note += "; this is that grading."
    results["output"] = f"{results.get('output', '')}\n{note}".strip()
    return results


def _close(client) -> None:
    cluster = client.cluster
    client.close()
    if cluster is not None:  # a LocalCluster this run started
        cluster.close()


def _failed(checks: Checks, plan: SandboxPlan, reason: str, fault: Outcome) -> dict:
    results = failed_results(checks, reason, fault)
    results["execution_time"] = 0.0
    results["extra_data"].update(autograder_version=checks.version, sandbox=plan.describe())
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
