"""Each submission is graded in a process of its own, watched by one that does not depend on it.

The supervisor forks a grading process per submission, gives it a jail (a fresh uid as root, fresh
folders), and waits for its results on a pipe. Whatever the grading process does (hang, die, get stuck
draining a kernel), the supervisor ends it at its budget plus a margin, ends the kernel's processes, and
still produces a score-0 result with the reason. A dead or killed grading process costs only its own
submission. The supervisor is single-threaded (it forks), a child subreaper (orphans come back to it and
are ended) and polls each kernel's disk use and, where no cgroup bounds it, its memory (resources.py);
a kernel past a bound is ended, and the reason is left in the jail for the results.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import sys
import time
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import psutil

from ..inkernel.wire import Status
from ..results import Outcome, Results
from ..settings import MARGIN, Limits
from . import cleanup, resources
from .image import ImageError, KernelImage
from .kernel import load_before_fork
from .safeio import remove_tree
from .sandbox import Jail, SandboxPlan

MAX_RESULTS = 32 << 20  # the largest results a grading process may send
GUARD_INTERVAL = 0.5
TEARDOWN_GRACE = 30.0  # seconds a grading process that sent its results has to end its kernel; then it is ended


@dataclass
class Job:
    """One submission to grade: ``run(jail)`` runs in the grading process and returns its results;
    ``failed(reason, status, fault)`` makes the results when it could not, ``fault`` saying whether that
    was the submission's doing (a 0 stands) or the grader's (no grade exists). Results are results.Results
    or, for a tool's job (run_alone), a dict of its own; a Finished holds them as JSON's dict (as_json)."""

    key: str
    run: Callable[[Jail], Results | dict]
    failed: Callable[[str, str | None, Outcome], Results | dict]  # status None: failed_results' default
    budget: float
    # what a runner that cannot run ``run`` here needs (a cluster sends the submission to a worker's grader,
    # under these limits): where it came from, and its limits
    submission: Path | None = None
    limits: Limits | None = None
    submitters: tuple | None = None  # the platform's list of the submission's students (whose variant is graded)


def as_json(results: Results | dict) -> dict:
    """A job's results as JSON's dict: what a grading process sends and a Finished holds."""
    return results.to_json() if isinstance(results, Results) else results


class Admission(str, Enum):
    """What a batch's ``prepare(job)`` says of a queued job."""

    START = "start"  # grade it now
    WAIT = "wait"  # try again later: another run holds it
    SKIP = "skip"  # nothing to do (another run graded it)


class JobState(str, Enum):
    """How a job's grading ended, as its runner saw it (never read from its results' status text)."""

    GRADED = "graded"  # its grading process (here, or a worker's) sent results
    TIMED_OUT = "timed_out"  # ended at its budget plus the margin: results made by job.failed
    FAILED = "failed"  # could not be graded (a guard, a dead process or worker, an unreadable notebook): job.failed


@dataclass(frozen=True)
class Finished:
    job: Job
    state: JobState
    results: dict


Prepare = Callable[[Job], Admission]


class Runner(ABC):
    """Grades jobs: the local Supervisor (forked processes) and the Dask ClusterRunner (workers)."""

    @abstractmethod
    def finished(self, jobs: Iterable[Job], prepare: Prepare | None = None) -> Iterator[Finished]:
        """Grade every job, yielding each as it finishes; ``prepare(job)`` (an Admission) is asked before
        each start. On KeyboardInterrupt (or when the iterator is closed), what runs is ended, reported never."""

    def close(self) -> None:  # noqa: B027 - a hook: a runner that keeps nothing between calls has nothing to do
        """Release what the runner keeps between calls of ``finished`` (the supervisor's kernel image)."""

    @property
    def kernel_start(self) -> str:
        """How kernels were started, in a line for the summary."""
        return ""

    def run(self, jobs: Iterable[Job], on_done: Callable[[Job, dict], None], prepare: Prepare | None = None) -> None:
        """``on_done(job, results)`` once per finished job (see ``finished``)."""
        with contextlib.closing(self.finished(jobs, prepare)) as done:
            for item in done:
                on_done(item.job, item.results)


@dataclass
class _Running:
    job: Job
    pid: int
    fd: int
    jail: Jail
    deadline: float
    started: float
    data: bytearray = field(default_factory=bytearray)
    eof: bool = False
    delivered: bool = False  # its results came whole: reported, and its slot given on while it ends its kernel
    exit_status: int | None = None
    guard_note: str = ""
    guard_floor: int = 0  # disk use at the last trip: the next trip needs more on top of it
    oom_kills: int = 0  # the kernel's cgroup's OOM kills already seen


def _child(job: Job, jail: Jail, fd: int, supervisor: int) -> None:
    """The grading process: never returns (os._exit), whatever happens. It ends with its supervisor (killed
    outright, no grading of it can be delivered), and its kernel with it (the kernel's launcher sees to that).
    Its results are sent, and the pipe closed, before it ends its kernel (``jail.later``): the supervisor starts the
    next submission meanwhile."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the supervisor; it ends this process
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        cleanup.die_with_parent(supervisor)
        cleanup.become_subreaper()
        if os.geteuid() != 0:
            cleanup.make_undumpable()
        data = json.dumps(as_json(job.run(jail)), ensure_ascii=False).encode()
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.close(fd)  # delivered
        code = 0
    except BaseException:  # noqa: BLE001 - the supervisor reports it as a failed grading
        traceback.print_exc()
    finally:
        try:
            jail.later.close()
        except BaseException:  # noqa: BLE001 - the supervisor's end of the jail ends what is left
            traceback.print_exc()
        finally:
            os._exit(code)


def _size(n: int) -> str:
    return f"{n / (1 << 30):g} GB" if n >= 1 << 30 else f"{n >> 20} MB"


class Supervisor(Runner):
    """Grades jobs in forked processes, at most ``jobs`` at once; see the module docstring."""

    def __init__(self, plan: SandboxPlan, jobs: int = 1, margin: float = MARGIN, image: bool = False):
        self.plan, self.max_jobs, self.margin = plan, max(1, jobs), margin
        self.running: dict[int, _Running] = {}
        self.stopping = False
        cleanup.become_subreaper()
        cleanup.remove_leftovers()  # a run killed outright left its kernels' folders
        self._before = cleanup.child_pids()
        # a batch starts its kernels from one image (image.py) where that keeps every kernel out of its reach
        self.image: KernelImage | None = None
        self._image_note = "" if image else "started afresh for each submission"
        self._image_wanted = image
        load_before_fork()
        # what this process holds now (its imports, the autograder) is never collected: a grading process's
        # collections then skip it instead of writing into the pages it shares with this one (gc.freeze)
        gc.freeze()

    def start_image(self, wait: bool = True) -> None:
        """Start the kernel image now (else the first ``finished`` with jobs starts it, without waiting: the first
        gradings start beside its imports, their kernels' requests queued until it is ready); kernels start afresh
        where it does not start, and ``kernel_start`` says why."""
        self._image_wanted = False
        try:
            self.image = KernelImage(self.plan, wait=wait)
        except ImageError as err:
            self._no_image(err)
            return
        self._before.add(self.image.pid)  # the image is this process's child, never a grading's orphan
        self._image_note = "started from one kernel image (numpy and torch imported once for the batch)"

    def _no_image(self, err: ImageError) -> None:
        self._image_note = f"started afresh for each submission: no kernel image ({err})"
        if self.image is not None:  # ended already: kernels that asked it start afresh, as every later one does
            self.image.close()
            self._before.discard(self.image.pid)
            self.image = None

    def _settle_image(self) -> None:
        """Whether an image started without waiting became ready; where it never will, kernels start afresh."""
        if self.image is not None and not self.image.ready:
            try:
                self.image.settled()
            except ImageError as err:
                self._no_image(err)

    @property
    def kernel_start(self) -> str:
        return self._image_note

    def close(self) -> None:
        if self.image is not None:
            ended = self.image.process.poll()
            if ended is not None:  # its launchers started the kernels after that afresh
                self._image_note += f"; the image ended during the run (exit status {ended}), and kernels started afresh after that"
            self.image.close()
            self._before.discard(self.image.pid)
            self.image = None
        cleanup.release_runs()  # the run's lock file: its folders are gone

    # ---- starting and ending one grading process ------------------------------------------------------

    def _start(self, job: Job) -> None:
        base = cleanup.scratch_folder("grade")
        base.chmod(0o711)  # the kernel's user may pass through, not list
        jail = Jail(self.plan, base, self.image.socket if self.image else None)
        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        supervisor = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            _child(job, jail, write_fd, supervisor)
        os.close(write_fd)
        os.set_blocking(read_fd, False)
        now = time.monotonic()
        self.running[pid] = _Running(job, pid, read_fd, jail, now + job.budget + self.margin, now)

    def _drain(self, run: _Running) -> None:
        while not run.eof:
            try:
                chunk = os.read(run.fd, 1 << 20)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                run.eof = True
            elif len(run.data) + len(chunk) > MAX_RESULTS:
                run.data.clear()
                run.eof = True
            else:
                run.data += chunk

    @staticmethod
    def _kernel_processes(run: _Running) -> list[psutil.Process]:
        """Its cgroup's processes where it has one; else, as root, every process of the kernel's uid, and
        otherwise its grading process's descendants (the kernel, bubblewrap's, and orphans: the grading
        process is their subreaper)."""
        if run.jail.cgroups is not None:
            found = []
            for pid in run.jail.cgroups.pids():
                try:
                    found.append(psutil.Process(pid))
                except psutil.Error:
                    pass
            return found
        if run.jail.own_uid:
            return cleanup.living_processes(run.jail.uid)
        try:
            tree = psutil.Process(run.pid).children(recursive=True)
        except psutil.Error:
            return []
        if run.jail.image is None:
            return tree
        # a kernel forked from the image is the image's child, in the PID namespace of the sandbox its launcher
        # made (a descendant here); it cannot leave that namespace (no capabilities, no new user namespace)
        sandboxes = {cleanup.pid_namespace(p.pid) for p in tree} - {cleanup.pid_namespace(os.getpid()), None}
        known = {p.pid for p in tree}
        return tree + [p for p in cleanup.living_processes(os.getuid())
                       if p.pid not in known and cleanup.pid_namespace(p.pid) in sandboxes]

    def _kill_kernel(self, run: _Running) -> None:
        """End the kernel's processes of one running job, not its grading process."""
        if run.jail.own_uid:
            cleanup.end_processes(run.jail.uid, set(), self._spare(), timeout=5)
            return
        for p in self._kernel_processes(run):
            try:
                p.kill()
            except psutil.Error:
                pass

    def _finish(self, run: _Running, timed_out: bool) -> Finished:
        self._end_process(run)
        self._drain(run)
        sent = self._sent(run, timed_out)
        if isinstance(sent, dict):
            results, state = sent, JobState.GRADED
        elif sent is not None:
            results, state = as_json(run.job.failed("the grading process sent no results", "not graded: the grader "
                                                    "failed (no results)", Outcome.NOT_GRADED)), JobState.FAILED
        else:
            results, state = as_json(self._failed(run, timed_out)), JobState.TIMED_OUT if timed_out else JobState.FAILED
        results.setdefault("execution_time", round(time.monotonic() - run.started, 2))
        self._retire(run)
        return Finished(run.job, state, results)

    @staticmethod
    def _end_process(run: _Running) -> None:
        """Its grading process ended here (killed and reaped) unless it has ended already."""
        if run.exit_status is not None:
            return
        try:
            os.kill(run.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            _, status = os.waitpid(run.pid, 0)
            run.exit_status = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            run.exit_status = -signal.SIGKILL

    @staticmethod
    def _parsed(run: _Running):
        """What its grading process sent, as JSON (None: nothing, or not JSON: not whole)."""
        if not run.data:
            return None
        try:
            return json.loads(bytes(run.data))
        except ValueError:
            return None

    def _sent(self, run: _Running, timed_out: bool):
        """What its grading process sent, if it finished and it is JSON (None otherwise)."""
        return None if timed_out or run.exit_status != 0 else self._parsed(run)

    def _failed(self, run: _Running, timed_out: bool) -> Results | dict:
        job = run.job
        if timed_out:
            reason = (f"grading did not finish within its time budget ({job.budget:.0f} s + {self.margin:.0f} s); "
                      "a cell or call may hang")
            return job.failed(reason, Status.TIMEOUT.value, Outcome.STUDENT)  # a hang is the notebook's (batch.py retries it alone)
        if run.guard_note:  # its kernel passed a disk or memory bound: the default status of the student's fault
            return job.failed(run.guard_note, None, Outcome.STUDENT)
        # the grading process is the grader's own: no grade exists
        return job.failed("the grading process ended unexpectedly; please tell your TA",
                          "not graded: the grader failed (its grading process died)", Outcome.NOT_GRADED)

    def _spare(self) -> set[int]:
        """Children this process must not reap behind the loop's back: live grading processes, and what ran before."""
        return set(self.running) | self._before

    def _end_jail(self, jail: Jail) -> None:
        """Whatever the kernel left (processes, files), however it left it, costs neither this result nor the batch."""
        try:
            jail.end(self._spare())
        except Exception as err:  # noqa: BLE001
            print(f"attn-ref: cleaning up after a kernel failed ({type(err).__name__}); going on", file=sys.stderr)
        finally:
            try:
                self._sweep_orphans()
            finally:
                for folder in jail.folders:
                    remove_tree(folder)

    def _sweep_orphans(self) -> None:
        """Processes that came back to this subreaper from a finished grading: ended (user mode)."""
        live = set(self.running)
        for pid in cleanup.child_pids() - live - self._before:
            try:
                child = psutil.Process(pid)
                for p in [*child.children(recursive=True), child]:
                    p.kill()
            except psutil.Error:
                pass
        cleanup.reap_zombies(spare=self._spare())

    def _guard(self) -> None:
        for run in [run for run in self.running.values() if not run.delivered]:
            note = self._over_disk(run) or self._over_memory(run)
            if note:
                self._trip(run, note)

    def _trip(self, run: _Running, note: str) -> None:
        """End the kernel (the grading process restarts it) and leave the reason for its results."""
        run.guard_note = note
        run.jail.note_stopped(note)
        self._kill_kernel(run)

    def _over_disk(self, run: _Running) -> str:
        limits = self.plan.caps
        used = entries = 0
        for folder in run.jail.folders:
            more, count = cleanup.tree_usage(folder, limits.disk_files + 1)
            used, entries = used + more, entries + count
        if run.jail.own_uid:
            more, count = cleanup.uid_disk_usage(run.jail.uid)
            used, entries = used + more, entries + count
        used += cleanup.unlinked_open_bytes(p.pid for p in self._kernel_processes(run))
        if used > max(limits.disk_bytes, run.guard_floor + limits.disk_bytes // 4) or entries > limits.disk_files:
            run.guard_floor = used
            return (f"the notebook wrote more than {_size(limits.disk_bytes)} to disk" if used > limits.disk_bytes
                    else f"the notebook made more than {limits.disk_files} files")
        return ""

    def _over_memory(self, run: _Running) -> str:
        """Whether the kernel's processes together passed the kernel's memory bound: its cgroup's OOM killer
        ended one of them, or (no memory cgroup) their polled memory is over it."""
        bound = self.plan.caps.kernel_memory_bytes
        if not bound:
            return ""
        cgroups = run.jail.cgroups
        if cgroups is not None and cgroups.bounds_memory:
            kills, seen = cgroups.oom_kills(), run.oom_kills
            run.oom_kills = kills
            over = kills > seen
        else:
            processes = self._kernel_processes(run)
            resources.keep_oom_first(processes)
            over = resources.used_memory(processes, bound) > bound
        return f"its processes used more than {_size(bound)} of memory together" if over else ""

    # ---- the loop ----------------------------------------------------------------------------------------

    def finished(self, jobs: Iterable[Job], prepare: Prepare | None = None) -> Iterator[Finished]:
        """Grade every job (or until ``stop()``), yielding each as it finishes; see Runner.finished."""
        queue = list(jobs)
        next_guard = 0.0
        if self._image_wanted and queue:
            self.start_image(wait=False)
        try:
            while (queue and not self.stopping) or self.running:
                queue = self._admit(queue, prepare)
                self._wait()
                self._settle_image()
                now = time.monotonic()
                yield from self._collect(now)
                if now >= next_guard:
                    self._guard()
                    self._sweep_orphans()
                    next_guard = now + GUARD_INTERVAL
        finally:
            self._end_all()

    def _admit(self, queue: list[Job], prepare: Prepare | None) -> list[Job]:
        """Start queued jobs while there is room; what must wait stays first in the queue."""
        waiting = []
        while queue and not self.stopping and sum(not run.delivered for run in self.running.values()) < self.max_jobs:
            job = queue.pop(0)
            answer = prepare(job) if prepare else Admission.START
            if answer is Admission.START:
                self._start(job)
            elif answer is Admission.WAIT:
                waiting.append(job)
        return waiting + queue

    def _wait(self) -> None:
        fds = [run.fd for run in self.running.values() if not run.eof]
        if self.image is not None and not self.image.ready:  # its line of status, as soon as it comes
            fds.append(self.image.process.stdout.fileno())
        if fds:
            select.select(fds, [], [], 0.1)
        else:
            time.sleep(0.05)

    def _collect(self, now: float) -> Iterator[Finished]:
        """The jobs whose results came whole (their grading process then ends its kernel), whose grading process
        ended, or that passed their deadline."""
        for run in list(self.running.values()):
            self._drain(run)
            if run.eof and not run.delivered and (sent := self._whole(run)) is not None:
                run.delivered, run.deadline = True, min(run.deadline, now + TEARDOWN_GRACE)
                sent.setdefault("execution_time", round(now - run.started, 2))
                yield Finished(run.job, JobState.GRADED, sent)
            try:
                pid, status = os.waitpid(run.pid, os.WNOHANG)
            except ChildProcessError:
                pid, status = run.pid, 1 << 8
            if pid == run.pid:
                run.exit_status = os.waitstatus_to_exitcode(status)
                if run.delivered:
                    self._retire(run)
                else:
                    yield self._finish(run, timed_out=False)
            elif now > run.deadline:
                if run.delivered:
                    self._retire(run)
                else:
                    yield self._finish(run, timed_out=True)

    def _whole(self, run: _Running) -> dict | None:
        """The results its grading process sent and closed its pipe on, as JSON's dict (None: none, or not whole)."""
        sent = self._parsed(run)
        return sent if isinstance(sent, dict) else None

    def _retire(self, run: _Running) -> None:
        """A grading process's end (here, unless it has ended), then its pipe's, its slot's and its jail's."""
        self._end_process(run)
        os.close(run.fd)
        del self.running[run.pid]
        self._end_jail(run.jail)

    def _end_all(self) -> None:
        """Interrupted: end what is still running, report nothing."""
        for run in list(self.running.values()):
            self._retire(run)

    def stop(self) -> None:
        """Start nothing new; what runs is ended by the caller leaving ``run`` (or finishes)."""
        self.stopping = True


def run_alone(plan: SandboxPlan, label: str, run: Callable[[Jail], dict], budget: float, key: str):
    """``run(jail)[key]``, computed in a grading process of its own under a supervisor (for tools that
    grade one notebook many ways: seeds, mutants); RuntimeError with the reason if it did not finish."""
    done: list[dict] = []
    Supervisor(plan).run([Job(label, run, lambda reason, status, fault: {"error": reason}, budget)],
                         lambda job, results: done.append(results))
    if key not in done[0]:
        raise RuntimeError(f"{label}: the notebook could not be graded ({done[0].get('error')})")
    return done[0][key]
