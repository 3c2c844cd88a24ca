"""attn-ref grade over a class: many submissions at once, each in its own grading process, resumable,
with a gradebook. Every submission gets a results file, whatever happens to it; the batch never stops
for one bad notebook. One that runs out of time beside others is graded again alone at the end: its
neighbours may have slowed it, and a timeout is recorded only if it runs out of time alone too."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import attn_ref

from ..checks_json import Checks
from ..core import make_job, prepare, warm_up
from ..inkernel.text import cap
from ..inkernel.wire import Status
from ..intake import submission as submission_files
from ..isolation.sandbox import SandboxPlan
from ..isolation.watchdog import Admission, Finished, Job, JobState, Runner, Supervisor
from ..owned import open_private, private_folder, tighten
from ..results import CONTENT_HASH, GRADER_VERSION, Outcome, Results, failed_results, write_results
from ..scoring.autograder import Autograder, AutograderError
from ..settings import Limits
from .discover import Submission, already_graded, content_hash, discover, skipped
from .gradebook import Gradebook, write_gradebook
from .gradebook import warm_up as warm_up_gradebook

# everything a batch writes under --out (each 0600, each folder 0700: owned.py); nothing else there is touched
WRITTEN_HERE = ("results", "locks", "written", ".export", "grades.csv", "adjustments.csv", "summary.png", "mistakes.csv", "mistakes.png",
                "report.html", "canvas.csv", "canvas-missing.csv", "canvas-unmatched.csv")
TIMEOUT = Status.TIMEOUT.value  # the status of results that ran out of time (a cell, a call or the budget)


@dataclass
class BatchReport:
    total: int
    graded: int  # graded in this run and given a grade (a 0 by the student's own doing included)
    skipped: int
    out: Path
    book: Gradebook
    not_submissions: list[str]  # what the class folder holds that is not graded, each with why (discover.skipped)
    interrupted: bool = False
    kernel_start: str = ""  # how this run's kernels were started (a kernel image, or afresh and why)
    by_another_run: int = 0  # graded meanwhile by another run on the same --out (so neither graded nor skipped here)
    not_graded: int = 0  # run in this run, but left without a grade (results.Outcome.NOT_GRADED): the next run retries them


def check_assignment(subs: list[Submission], autograder: Autograder) -> None:
    """A wrong --autograder (another assignment's zip for most submissions, or for the one notebook
    graded alone) stops before grading anything."""
    checks = autograder.checks
    names = Counter()
    for sub in subs[:60]:
        with contextlib.suppress(Exception):
            nb, _ = submission_files.load(sub.path)
            names[nb.assignment_name] += 1
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
        self.folder, self.held = private_folder(folder), {}

    def try_take(self, key: str) -> bool:
        fd = open_private(self.folder / f"{key}.lock")
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


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    """How a class is graded: ``canvas``: {"roster": path, "assignment": column name} for a Canvas import
    file; ``cluster``: a Dask scheduler's address, or local:N, to grade on its workers instead of here."""

    jobs: int | None = None
    force: bool = False
    plan: SandboxPlan | None = None
    progress: bool = True
    canvas: dict | None = None
    cluster: str | None = None
    limits: Limits = field(default_factory=Limits)
    kernel_image: bool = True  # start the kernels of several submissions from one image (isolation/image.py)


@dataclass(frozen=True)
class Pending:
    sub: Submission
    results_path: Path
    content: str  # the hash of its files (the batch skips what it has graded)


@dataclass(frozen=True)
class BatchPlan:
    """A validated batch: what to grade, how, and where its results go (made by ``plan_batch``)."""

    source: Path
    out: Path
    autograder: Autograder
    plan: SandboxPlan
    subs: tuple[Submission, ...]
    todo: tuple[Pending, ...]  # not graded yet with this autograder (or ``force``)
    jobs: int
    options: BatchOptions


def grade_batch(path, autograder, out, *, jobs: int | None = None, force: bool = False, plan: SandboxPlan | None = None,
                progress: bool = True, canvas: dict | None = None, cluster: str | None = None,
                kernel_image: bool = True, **timeouts: float) -> BatchReport:
    """Grade a class into ``out`` (results/, grades.csv, ...); ``timeouts`` as for grade(); see BatchOptions."""
    options = BatchOptions(jobs=jobs, force=force, plan=plan, progress=progress, canvas=canvas, cluster=cluster,
                           limits=Limits.of(**timeouts), kernel_image=kernel_image)
    return run_batch(plan_batch(path, autograder, out, options))


def plan_batch(path, autograder, out, options: BatchOptions) -> BatchPlan:
    """Validate a batch (the autograder, its submissions, their assignment) and find what is left to grade."""
    out = Path(out)
    autograder, plan = prepare(autograder, options.plan)
    tighten(private_folder(out), WRITTEN_HERE)  # also what an older grader left readable
    subs = discover(Path(path), out)
    if not subs:
        raise AutograderError(f"no submissions found in {path}")
    check_assignment(subs, autograder)
    if options.cluster and not autograder.path.is_file():
        raise AutograderError(f"{autograder.path}: a cluster needs the autograder zip, not a folder")
    todo = []
    for sub in subs:
        content = sub.content = content_hash(sub.path) if sub.path.exists() else ""
        results_path = out / "results" / f"{sub.key}.json"
        if options.force or not already_graded(results_path, content, autograder.checks.version):
            todo.append(Pending(sub, results_path, content))
    return BatchPlan(Path(path), out, autograder, plan, tuple(subs), tuple(todo),
                     max(1, options.jobs or os.cpu_count() or 1), options)


def run_batch(batch: BatchPlan) -> BatchReport:
    """Grade a planned batch and write its gradebook (also when interrupted: what was graded stands)."""
    private_folder(batch.out / "results")
    run = BatchRun(batch)
    with _progress(batch.options.progress, len(batch.subs), len(batch.subs) - len(batch.todo)) as advance:
        run.advance = advance
        queue = run.jobs()
        runner, client = _runner(batch, len(queue))
        try:
            with _latched_interrupts(run):
                run.grade(runner, queue)
        except KeyboardInterrupt:
            run.interrupted = True
        finally:
            runner.close()
            if client is not None:
                close_cluster(client)
    book = write_gradebook(batch.out, list(batch.subs), batch.autograder.checks, batch.options.canvas)
    return BatchReport(len(batch.subs), run.graded, len(batch.subs) - len(batch.todo), batch.out, book,
                       skipped(batch.source, batch_files(batch.out)), run.interrupted, runner.kernel_start, run.by_another_run,
                       run.not_graded)


def batch_files(out: Path) -> frozenset[Path]:
    """--out and everything a batch writes in it: never listed as not graded where --out is (in) the class folder."""
    return frozenset({out.absolute(), *(out.absolute() / name for name in WRITTEN_HERE)})


def _runner(batch: BatchPlan, jobs: int) -> tuple[Runner, object]:
    """The local Supervisor (--jobs processes here; several submissions start their kernels from one image),
    or, for ``cluster``, a ClusterRunner and its client."""
    if not batch.options.cluster:
        warm_up()  # before the supervisor forks a grading process per submission
        return Supervisor(batch.plan, batch.jobs, batch.options.limits.margin, image=jobs > 1 and batch.options.kernel_image), None
    from .cluster import ClusterRunner, connect

    client = connect(batch.options.cluster, kernels_share_network=batch.plan.bwrap is None)
    return ClusterRunner(client, batch.autograder.path, batch.options.limits), client


class BatchRun:
    """One run of a batch: its locks, what it graded, and what is graded again alone."""

    def __init__(self, batch: BatchPlan):
        self.batch, self.checks = batch, batch.autograder.checks
        self.locks = _Locks(batch.out / "locks")
        self.by_key = {p.sub.key: p for p in batch.todo}
        self.graded, self.not_graded, self.interrupted, self.stop_requested = 0, 0, False, False
        self.by_another_run = 0  # found graded by another run on the same folder when its turn came
        self.again: list[Job] = []  # ran out of time beside others: graded again alone after the parallel pass
        self.advance = lambda sub, results: None

    def jobs(self) -> list[Job]:
        """The jobs to run; a submission with nothing to run (the export lists a folder it lacks) gets its
        no-grade results now, its row saying why."""
        queue = []
        for pending in self.batch.todo:
            sub = pending.sub
            if sub.problem:
                if self.locks.try_take(sub.key):
                    self.finish(pending, _failed(self.checks, self.batch.plan, sub.problem, sub.fault))
                continue
            queue.append(make_job(sub.key, sub.path, self.batch.autograder, self.batch.plan, self.batch.options.limits,
                                  tuple(sub.students) if sub.from_export else None))
        return queue

    def grade(self, runner: Runner, queue: list[Job]) -> None:
        left = len(queue)
        with contextlib.closing(runner.finished(queue, prepare=self.prepare)) as done:
            for item in done:
                left -= 1
                if left == self.batch.jobs - 1:  # from now on a core is idle: the gradebook's imports there
                    warm_up_gradebook()
                if _timed_out(item):
                    self.again.append(item.job)  # its lock stays held; nothing is written until it is graded alone
                else:
                    self.finish(self.by_key[item.job.key], item.results)
                if self.stop_requested:
                    raise KeyboardInterrupt
        for job in self.again:
            if self.stop_requested:
                raise KeyboardInterrupt
            with contextlib.closing(runner.finished([job])) as done:
                for item in done:
                    self.finish(self.by_key[job.key], _graded_alone(item))

    def finish(self, pending: Pending, results: dict | Results) -> None:
        sub = pending.sub
        results = Results.load(results, f"the results of {sub.key}")
        results.extra.update({"submission": sub.key, CONTENT_HASH: pending.content, "students": sub.students})
        write_results(pending.results_path, results)
        self.locks.release(sub.key)
        if results.has_grade:
            self.graded += 1
        else:
            self.not_graded += 1
        self.advance(sub, results)

    def prepare(self, job: Job) -> Admission:
        if self.stop_requested:  # the interrupt Python swallowed (see _latched_interrupts): nothing new starts
            raise KeyboardInterrupt
        pending = self.by_key[job.key]
        if not self.locks.try_take(job.key):
            return Admission.WAIT  # another run grades it right now
        if not self.batch.options.force and already_graded(pending.results_path, pending.content, self.checks.version):
            self.locks.release(job.key)  # that other run finished it
            self.by_another_run += 1
            return Admission.SKIP
        return Admission.START


@contextlib.contextmanager
def _latched_interrupts(run: BatchRun):
    """Ctrl-C and SIGTERM stop the batch even when Python swallows their KeyboardInterrupt (one raised inside
    a finalizer or a lock's release is only printed, "Exception ignored in ..."): the signal is latched, and
    the run stops at the next submission it would start or finish."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread has signals
        yield
        return

    def latch(signum, frame):
        run.stop_requested = True
        raise KeyboardInterrupt

    before = {s: signal.signal(s, latch) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _timed_out(item: Finished) -> bool:
    """Whether it ran out of time: ended at its deadline (a value of its runner), or its grading recorded a
    timeout (a cell, a call or the budget: results.json's extra_data.timed_out, which a worker's grader
    sends back too)."""
    if item.state is JobState.TIMED_OUT:
        return True
    return item.state is JobState.GRADED and Results.load(item.results).timed_out


def _graded_alone(item: Finished) -> Results:
    """The results of a second grading, alone: said so, and a timeout now stands."""
    results = Results.load(item.results, f"the results of {item.job.key}")
    results.extra["graded_alone"] = True
    note = "It ran out of time while graded beside other submissions, so it was graded again alone"
    if _timed_out(item):
        results.extra["status"] = TIMEOUT + " (also when graded again alone)" + (results.status or "")[len(TIMEOUT):]
        note += ", and ran out of time again."
    else:
        note += "; this is that grading."
    results.output = f"{results.output}\n{note}".strip()
    return results


def close_cluster(client) -> None:
    cluster = client.cluster
    client.close()
    if cluster is not None:  # a LocalCluster this run started
        cluster.close()


def _failed(checks: Checks, plan: SandboxPlan, reason: str, fault: Outcome) -> Results:
    results = failed_results(checks, reason, fault)
    results.execution_time = 0.0
    results.extra.update(autograder_version=checks.version, sandbox=plan.describe(), **{GRADER_VERSION: attn_ref.__version__})
    return results


@contextlib.contextmanager
def _progress(enabled: bool, total: int, already: int):
    """advance(submission, its results) once per submission graded: rich's bar on a terminal; off one (a log,
    nohup, CI), a plain line each on stderr, so that a long run is never silent until it ends."""
    if not enabled:
        yield lambda sub, results: None
        return
    count = {"done": already, "failed": 0}

    def failed(results: Results) -> bool:
        return (results.status or Status.OK.value) != Status.OK.value

    if not sys.stderr.isatty():
        def line(sub, results: Results) -> None:
            count["done"] += 1
            score = f"{results.score:g} / {results.max_score:g}" if results.has_grade else "no grade"
            print(f"graded {count['done']} of {total}: {sub.file_name}: {score} ({cap(results.status, 200)})",
                  file=sys.stderr, flush=True)

        yield line
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("grading"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]} failed"),
                  TimeRemainingColumn()) as bar:
        task = bar.add_task("grading", total=total, completed=already, failed=0)

        def advance(sub, results: Results):
            count["failed"] += failed(results)
            bar.update(task, advance=1, failed=count["failed"])

        yield advance
