"""A class bigger than one machine: the same per-submission grading on the workers of a Dask cluster.

Each task sends one submission to a worker; the autograder zip reaches every worker once, with the run's
worker plugin, which Dask also sets up on a worker that joins or is restarted mid-run. Each worker process keeps a grader of its
own (worker_service.py: the zip's own bundled grader, started once per worker and autograder, with the
run's kernel image), which grades the submission in a grading process of its own, as `--jobs` does: a
submission that kills that process fails alone; a worker that dies has its submissions graded again
elsewhere (Dask reschedules them), and its grader, its kernels and its image end with it. The client writes
every result and the gradebook, with the same locks and resume as a local run; the run's end closes the
workers' graders (a worker plugin's teardown).

Dask moves pickles between the client, the scheduler and the workers: whoever can reach the scheduler can
run code on the workers. So a ``local:N`` cluster always speaks TLS with a throw-away certificate that
lives only in this run's processes (a kernel that finds its ports in /proc/net/tcp cannot get a task
run), and a scheduler without TLS is refused where kernels here would share this machine's network (no
namespaces). A remote cluster's TLS is Dask's own configuration (docs/cluster.md, "Deploying with TLS"),
checked in cluster_tls.py. A worker refuses to grade unless its kernels run as another uid (root) or in their
own namespaces.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from concurrent.futures import Future
from pathlib import Path

from distributed.diagnostics.plugin import WorkerPlugin

from ..inkernel.errors import GraderError
from ..isolation.cleanup import scratch_folder
from ..isolation.watchdog import Admission, Finished, Job, JobState, Prepare, Runner, as_json
from ..results import Outcome, Results
from ..scoring.autograder import unpack as unpack_autograder
from ..settings import IMAGE_READY_TIMEOUT, SANDBOX_PROBE_TIMEOUT, Limits
from .worker_service import MAX_LINE, PARENT_ENV, Reply, ReplyState, Request, WireError

PLUGIN = "attn-ref-graders"  # the worker plugin that brings a run's zip and closes a worker's graders
SERVICE_FILE = "attn_ref/grade/classroom/worker_service.py"  # in the zip: the grader a worker keeps
GRADER_READY_TIMEOUT = IMAGE_READY_TIMEOUT + 4 * SANDBOX_PROBE_TIMEOUT  # its imports, the sandbox's probes, the image


class ClusterError(GraderError):
    """The cluster could not be reached or refused the work."""


def connect(address: str, kernels_share_network: bool):
    """A Dask client: ``local:N`` starts a LocalCluster of N worker processes here (one task each at a
    time), over TLS with a throw-away certificate; anything else is a scheduler address (tls://, with the
    TLS settings of Dask's own configuration; tcp:// only where no kernel here shares the network:
    ``kernels_share_network`` is true when kernels run without namespaces)."""
    from distributed import Client, LocalCluster
    from distributed.security import Security

    if address.startswith("local:"):
        try:
            workers = int(address.split(":", 1)[1])
        except ValueError:
            raise ClusterError(f"--cluster {address}: expected local:N, a number of workers") from None
        if workers < 1:
            raise ClusterError(f"--cluster {address}: expected at least one worker")
        security = Security.temporary()  # in memory only: no file a kernel could read holds the key
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               protocol="tls://", host="127.0.0.1", security=security)
        return Client(cluster, security=security)
    if kernels_share_network and not address.startswith("tls://"):
        raise ClusterError(f"--cluster {address}: refused: a scheduler without TLS runs whatever reaches it, and the "
                           "kernels here run without namespaces, so they share this machine's network and could reach "
                           "it. Use tls:// with Dask's TLS settings (docs/cluster.md, \"Deploying with TLS\"), or "
                           "local:N")
    from .cluster_tls import connect_remote  # the client's TLS from Dask's configuration, checked

    return connect_remote(address)


# ---- on a worker ---------------------------------------------------------------------------------------

class _Spawner:
    """Starts this worker's graders from one thread that lives as long as the worker process: a grader's
    parent-death signal (PARENT_ENV) is sent when the thread that started it ends, and a task's thread may."""

    def __init__(self):
        self.requests: queue.SimpleQueue = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="attn-ref-grader-spawner", daemon=True).start()

    def _loop(self) -> None:
        while True:
            future, argv, options = self.requests.get()
            try:
                future.set_result(subprocess.Popen(argv, **options))
            except BaseException as err:  # noqa: BLE001 - handed to the task that asked
                future.set_exception(err)

    def popen(self, argv: list[str], **options) -> subprocess.Popen:
        future: Future = Future()
        self.requests.put((future, argv, options))
        return future.result()


class WorkerGrader:
    """One grader process of this worker (worker_service.py) for one autograder zip, in a private folder."""

    def __init__(self, zip_bytes: bytes, spawner: _Spawner):
        self.folder = scratch_folder("worker")  # 0700: the worker's alone
        self.process: subprocess.Popen | None = None
        try:
            (self.folder / "autograder.zip").write_bytes(zip_bytes)
            with zipfile.ZipFile(self.folder / "autograder.zip") as archive:
                if SERVICE_FILE not in archive.namelist():
                    raise ClusterError("worker refused to grade: the autograder zip's grader has no worker grader "
                                       f"({SERVICE_FILE}): build the zip again with this attn-ref")
            unpack_autograder(self.folder / "autograder.zip", self.folder / "source")
            env = dict(os.environ, PYTHONPATH=str(self.folder / "source"), **{PARENT_ENV: str(os.getpid())})
            with open(self.folder / "grader.log", "wb") as log:
                self.process = spawner.popen([sys.executable, "-m", "attn_ref.grade.classroom.worker_service",
                                              str(self.folder / "autograder.zip"), "--require-isolation"],
                                             env=env, cwd=self.folder, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=log)
            hello = self._reply(GRADER_READY_TIMEOUT)
        except BaseException:
            self.close()
            raise
        if hello.state is not ReplyState.READY:
            self.close()
            raise ClusterError(f"worker refused to grade: {hello.note[-500:]}")
        self.kernel_start = hello.note

    def grade(self, notebook_name: str, notebook_bytes: bytes, limits: Limits, submitters: tuple | None) -> dict:
        """One submission's results.json (read as a file is: Results.load checks it on the client); ClusterError
        (and this grader closed) where it did not answer in time or said something else."""
        folder = Path(tempfile.mkdtemp(dir=self.folder, prefix="submission-"))
        notebook = folder / Path(notebook_name).name
        notebook.write_bytes(notebook_bytes)
        request = Request.of(notebook, folder / "results.json", limits, submitters)
        try:
            self.process.stdin.write(request.to_line())
            self.process.stdin.flush()
            reply = self._reply(limits.backstop)
            if reply.state is not ReplyState.GRADED:
                raise WireError(f"the worker's grader said {reply.state.value!r}")
            self.kernel_start = reply.note
            return json.loads((folder / "results.json").read_text())
        except (OSError, ValueError) as err:  # WireError is a ValueError
            why = f"{type(err).__name__}: {err}; {self._log_tail()}"
            self.close()
            raise ClusterError(f"the worker's grader failed ({why})"[:800]) from None
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _reply(self, timeout: float) -> Reply:
        out, line, deadline = self.process.stdout.fileno(), b"", time.monotonic() + timeout
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([out], [], [], left)[0]:
                raise TimeoutError(f"no answer within {timeout:.0f} s")
            chunk = os.read(out, MAX_LINE)
            if not chunk:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=5)
                raise EOFError(f"the worker's grader exited (status {self.process.poll()}): {self._log_tail()}")
            line += chunk
            if len(line) > MAX_LINE:
                raise WireError("the worker's grader sent a line over its bound")
        return Reply.from_line(line)

    def _log_tail(self) -> str:
        try:
            return (self.folder / "grader.log").read_bytes()[-500:].decode(errors="replace").strip()
        except OSError:
            return ""

    def close(self) -> None:
        """Its input closed: it ends its gradings and its image and exits (terminated, then killed, if not)."""
        process, self.process = self.process, None
        if process is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.terminate()  # SIGTERM: it ends its kernels on the way out
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            process.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class WorkerGraders:
    """This worker process's graders, by autograder (its zip's hash): one per task running at once (so one with
    `--nthreads 1`), kept from task to task; those of another autograder are closed when a new one comes."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: dict[str, list[WorkerGrader]] = {}
        self._spawner: _Spawner | None = None

    @contextlib.contextmanager
    def borrowed(self, zip_bytes: bytes):
        key = _zip_key(zip_bytes)
        with self.lock:
            stale = [g for k, graders in self.idle.items() if k != key for g in graders]
            graders = self.idle.pop(key, [])
            self.idle = {key: graders} if graders else {}
            grader = graders.pop() if graders else None
            self._spawner = self._spawner or _Spawner()
        for old in stale:
            old.close()
        grader = grader or WorkerGrader(zip_bytes, self._spawner)
        try:
            yield grader
        except BaseException:
            grader.close()  # a task cancelled or failed mid-grading: its grader's state is unknown
            raise
        if grader.process is not None:  # it answered: kept for the next task
            with self.lock:
                self.idle.setdefault(key, []).append(grader)

    def close(self) -> None:
        with self.lock:
            graders = [g for kept in self.idle.values() for g in kept]
            self.idle = {}
        for grader in graders:
            grader.close()


GRADERS = WorkerGraders()  # this worker process's (tasks run in the worker's process: module state is per worker)
AUTOGRADERS: dict[str, bytes] = {}  # this worker process's autograder zips, by hash: its runs' plugins left them


def _zip_key(zip_bytes: bytes) -> str:
    return hashlib.sha256(zip_bytes).hexdigest()


class RunsGraders(WorkerPlugin):
    """Registered for a run, so set up on every worker, one that joins or is restarted mid-run too: its setup
    leaves the run's autograder zip on the worker (a task names it by hash), its teardown (the run's end, or
    the worker's) closes the graders. The zip is not scattered: data scattered to workers is lost with the
    workers that hold it (Dask's memory manager drops the extra copies a broadcast made), and every task
    that needs it is cancelled; a plugin is the scheduler's to give each new worker."""

    def __init__(self, zip_bytes: bytes):
        self.zip_bytes, self.key = zip_bytes, _zip_key(zip_bytes)
        self.name = f"{PLUGIN}-{self.key[:16]}"  # a run of another autograder on the same cluster has its own

    def setup(self, worker) -> None:
        AUTOGRADERS[self.key] = self.zip_bytes

    def teardown(self, worker) -> None:
        AUTOGRADERS.pop(self.key, None)
        GRADERS.close()


def grade_on_worker(zip_bytes: bytes, notebook_name: str, notebook_bytes: bytes, limits: Limits,
                    submitters: tuple | None = None) -> tuple[dict, str]:
    """Runs on a worker: one submission through the worker's grader for this zip (with its submitters, where
    the platform listed them); its results and how its kernel started."""
    with GRADERS.borrowed(zip_bytes) as grader:
        return grader.grade(notebook_name, notebook_bytes, limits, submitters), grader.kernel_start


def grade_with_run_autograder(zip_key: str, notebook_name: str, notebook_bytes: bytes, limits: Limits,
                              submitters: tuple | None = None) -> tuple[dict, str]:
    """The task a run sends: ``grade_on_worker`` with the zip the run's plugin left on this worker."""
    if zip_key not in AUTOGRADERS:
        raise ClusterError(f"this worker has no autograder {zip_key[:12]}: the run's worker plugin was not set up here")
    return grade_on_worker(AUTOGRADERS[zip_key], notebook_name, notebook_bytes, limits, submitters)


def _notebook_file(path: Path) -> tuple[str, bytes]:
    """What a worker needs of one submission: its notebook (a .ipynb, an export zip, or a folder's one)."""
    from ..intake import submission as submission_files

    nb, name = submission_files.load(path)
    return name, nb.to_ipynb()


class ClusterRunner(Runner):
    """Runs a batch's jobs on a Dask cluster, with the interface of the local Supervisor: each job's
    submission is graded by a worker's grader under the job's limits (``Job.run`` is the local form of that
    work: a grading process here), and ``Job.failed`` makes the results of what could not be graded."""

    def __init__(self, client, autograder_path: Path, limits: Limits | None = None):
        self.client, self.limits = client, limits or Limits()
        self.plugin = RunsGraders(Path(autograder_path).read_bytes())
        self.client.register_plugin(self.plugin, name=self.plugin.name)
        self.kernel_starts: set[str] = set()  # as the workers' graders said

    @property
    def kernel_start(self) -> str:
        said = "; ".join(sorted(self.kernel_starts)) or "not started (nothing was graded)"
        return f"on the workers (a grader per worker, kept for the run): {said}"

    def close(self) -> None:
        """The workers' graders end (the plugin's teardown), with their kernel images."""
        with contextlib.suppress(Exception):  # a cluster already gone has closed them itself
            self.client.unregister_worker_plugin(self.plugin.name)

    def finished(self, jobs, prepare: Prepare | None = None):
        from distributed import as_completed

        pending, todo = {}, list(jobs)
        try:
            while todo or pending:
                todo, failed = self._admit(todo, prepare, pending)
                yield from failed
                if not pending:
                    if todo:
                        time.sleep(0.5)  # every job left is locked by another grader; wait for it
                    continue
                done = next(iter(as_completed(list(pending))))
                job = pending.pop(done)
                yield self._result(job, done)
        finally:
            for future in pending:
                future.cancel()

    def _admit(self, queue: list[Job], prepare: Prepare | None, pending: dict) -> tuple[list[Job], list[Finished]]:
        """Submit what may start; what must wait, and what failed before it could be sent."""
        from ..intake import SubmissionError

        waiting, failed = [], []
        for job in queue:
            answer = prepare(job) if prepare else Admission.START
            if answer is Admission.WAIT:
                waiting.append(job)
            elif answer is Admission.START:
                try:
                    name, data = _notebook_file(job.submission)
                except SubmissionError as err:  # its notebook: the student's 0, with failed_results' default status
                    failed.append(Finished(job, JobState.FAILED, as_json(job.failed(str(err), None, Outcome.STUDENT))))
                    continue
                future = self.client.submit(grade_with_run_autograder, self.plugin.key, name, data, job.limits or self.limits, job.submitters, pure=False,
                                            key=f"attn-ref-{job.key}-{os.urandom(4).hex()}")
                pending[future] = job
        return waiting, failed

    def _result(self, job: Job, future) -> Finished:
        from distributed import KilledWorker

        try:
            results, kernel_start = future.result()
            self.kernel_starts.add(str(kernel_start)[:300])
            # the worker's results.json, checked as a file is: what is not results is a failed task below
            return Finished(job, JobState.GRADED, Results.load(results, "the worker's results").to_json())
        except KilledWorker:
            # its kernel is bounded in its own process, so a worker that keeps dying is the cluster's failure
            return Finished(job, JobState.FAILED, as_json(job.failed("grading it killed its Dask worker again and again",
                                                                     "not graded: its Dask worker died again and again",
                                                                     Outcome.NOT_GRADED)))
        except Exception as err:  # noqa: BLE001 - a failed task is one row with no grade (a worker refused it, ...)
            return Finished(job, JobState.FAILED, as_json(job.failed(
                f"the cluster could not grade it ({type(err).__name__}: {err})"[:500],
                f"not graded: the cluster could not grade it ({type(err).__name__}: {str(err)[:200]})",
                Outcome.NOT_GRADED)))
