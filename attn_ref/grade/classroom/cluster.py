"""A class bigger than one machine: the same per-submission grading on the workers of a Dask cluster.

Each task sends one submission and the autograder zip to a worker, which grades it with the zip's own
bundled grader in a process of its own (`python -m attn_ref grade --results`, the zip first on the path):
a submission that kills that process, or its worker, fails alone; a worker that dies has its
submissions graded again elsewhere (Dask reschedules them). The client writes every result and the
gradebook, with the same locks and resume as a local run.

Dask moves pickles between the client, the scheduler and the workers: whoever can reach the scheduler can
run code on the workers. So a ``local:N`` cluster always speaks TLS with a throw-away certificate that
lives only in this run's processes (a kernel that finds its ports in /proc/net/tcp cannot get a task
run), and a scheduler without TLS is refused where kernels here would share this machine's network (no
namespaces). A remote cluster's TLS is Dask's own configuration (docs/cluster.md, "Deploying with TLS"),
checked in cluster_tls.py. A worker refuses to grade unless its kernels run as another uid (root) or in their
own namespaces.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from ..inkernel.errors import GraderError
from ..isolation.watchdog import Admission, Finished, Job, JobState, Prepare, Runner, as_json
from ..results import Outcome, Results
from ..settings import Limits

REFUSED = 3  # the exit code of a grader that cannot isolate its kernels (--require-isolation)
PARENT_ENV = "ATTN_REF_PARENT_PID"  # set for a worker's grader: it ends (and ends its kernels) with the worker


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


def grade_on_worker(zip_bytes: bytes, notebook_name: str, notebook_bytes: bytes, limits: Limits,
                    submitters: tuple | None = None) -> dict:
    """Runs on a worker: one submission through the zip's own grader, in a process of its own (with its
    submitters, where the platform listed them, in Gradescope's submission_metadata.json format)."""
    with tempfile.TemporaryDirectory(prefix="attn-ref-worker-") as tmp:
        tmp = Path(tmp)
        (tmp / "autograder.zip").write_bytes(zip_bytes)
        with zipfile.ZipFile(tmp / "autograder.zip") as archive:
            archive.extractall(tmp / "source")
        submission = tmp / "submission"
        submission.mkdir()
        (submission / Path(notebook_name).name).write_bytes(notebook_bytes)
        env = dict(os.environ, PYTHONPATH=str(tmp / "source"), **{PARENT_ENV: str(os.getpid())})
        cmd = [sys.executable, "-m", "attn_ref", "grade", str(submission), "--autograder", str(tmp / "autograder.zip"),
               "--results", str(tmp / "results.json"), "--require-isolation"]
        cmd += limits.to_flags()
        if submitters is not None:
            (tmp / "submission_metadata.json").write_text(json.dumps({"users": list(submitters)}))
            cmd += ["--submitters", str(tmp / "submission_metadata.json")]
        budget = limits.backstop
        with subprocess.Popen(cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as grader:
            try:  # the grader keeps its own budget; this is the backstop
                _, stderr = grader.communicate(timeout=budget)
            except subprocess.TimeoutExpired:
                grader.terminate()  # SIGTERM: it ends its kernels on the way out
                try:
                    _, stderr = grader.communicate(timeout=20)
                except subprocess.TimeoutExpired:
                    grader.kill()
                    _, stderr = grader.communicate()
        if grader.returncode == REFUSED:
            raise ClusterError(f"worker refused to grade: {stderr.strip()[-500:]}")
        if not (tmp / "results.json").exists():
            raise ClusterError(f"the worker's grader wrote no results (exit {grader.returncode}): {stderr[-500:]}")
        return json.loads((tmp / "results.json").read_text())


def _notebook_file(path: Path) -> tuple[str, bytes]:
    """What a worker needs of one submission: its notebook (a .ipynb, an export zip, or a folder's one)."""
    from .. import submission as submission_files

    nb, name = submission_files.load(path)
    import nbformat

    return name, nbformat.writes(nb).encode()


class ClusterRunner(Runner):
    """Runs a batch's jobs on a Dask cluster, with the interface of the local Supervisor: each job's
    submission is graded by a worker's grader under the job's limits (``Job.run`` is the local form of that
    work: a grading process here), and ``Job.failed`` makes the results of what could not be graded."""

    def __init__(self, client, autograder_path: Path, limits: Limits | None = None):
        self.client, self.limits = client, limits or Limits()
        self.zip = client.scatter(Path(autograder_path).read_bytes(), broadcast=True)

    @property
    def kernel_start(self) -> str:
        return "started afresh for each submission: each worker grades a submission in a grader process of its own"

    def finished(self, jobs, prepare: Prepare | None = None):
        from distributed import as_completed

        pending, queue = {}, list(jobs)
        try:
            while queue or pending:
                queue, failed = self._admit(queue, prepare, pending)
                yield from failed
                if not pending:
                    if queue:
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
        from ..submission import SubmissionError

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
                future = self.client.submit(grade_on_worker, self.zip, name, data, job.limits or self.limits, job.submitters, pure=False,
                                            key=f"attn-ref-{job.key}-{os.urandom(4).hex()}")
                pending[future] = job
        return waiting, failed

    @staticmethod
    def _result(job: Job, future) -> Finished:
        from distributed import KilledWorker

        try:
            # the worker's results.json, checked as a file is: what is not results is a failed task below
            return Finished(job, JobState.GRADED, Results.load(future.result(), "the worker's results").to_json())
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
