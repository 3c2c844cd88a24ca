"""A class on a Dask cluster: the same gradebook as a local run, nothing lost when a worker dies, and no
grading where kernels could not be isolated."""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import signal
import threading
import time
from pathlib import Path

import pytest

from attn_ref.grade.classroom.batch import grade_batch
from attn_ref.grade.isolation.sandbox import SandboxPlan

LIMITS = dict(cell_timeout=20, call_timeout=8, notebook_timeout=60)


def _rows(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        return sorted((r["name"], r["total"], r["status"]) for r in csv.DictReader(f))


@pytest.fixture(scope="module")
def small_class(release, tmp_path_factory):
    out, _ = release
    folder = tmp_path_factory.mktemp("cluster_class")
    for i in range(3):
        shutil.copy(out / "solutions/practice/practice.ipynb", folder / f"right_{i}.ipynb")
    for i in range(2):
        shutil.copy(out / "assignments/practice/practice.ipynb", folder / f"blank_{i}.ipynb")
    (folder / "corrupt.ipynb").write_text("{ not json")
    return folder, out / "autograder/practice-autograder.zip"


@pytest.mark.slow
def test_a_local_cluster_grades_to_the_same_gradebook_as_jobs(small_class, tmp_path):
    folder, zip_path = small_class
    local = grade_batch(folder, zip_path, tmp_path / "local", jobs=2, progress=False, **LIMITS)
    clustered = grade_batch(folder, zip_path, tmp_path / "cluster", cluster="local:2", progress=False, **LIMITS)
    assert local.graded == clustered.graded == 6
    assert _rows(tmp_path / "local/grades.csv") == _rows(tmp_path / "cluster/grades.csv")


@pytest.mark.slow
def test_workers_killed_mid_run_lose_nothing(small_class, tmp_path):
    """Kill every worker process at once, as soon as the first result is written: the nannies start new ones,
    which grade the killed workers' submissions again. Nothing a run needs may live only in a worker's memory
    (a zip scattered to the workers is gone with them, and Dask's memory manager drops the copies of a
    broadcast): the new workers get the autograder as the first ones did."""
    import psutil

    folder, zip_path = small_class
    out = tmp_path / "graded"
    killed, seen_workers = [], set()

    def kill_the_workers():
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not killed:  # once a result is written, as soon as workers show
            time.sleep(0.1)
            if not list((out / "results").glob("*.json")):
                continue
            workers = []
            for p in psutil.Process().children(recursive=True):  # the nannies' worker processes
                try:
                    line = " ".join(p.cmdline())
                except psutil.Error:
                    continue
                if "spawn_main" in line and "attn_ref" not in line:
                    workers.append(p)
            seen_workers.update(p.pid for p in workers)
            if len(workers) == 2:
                for worker in workers:
                    os.kill(worker.pid, signal.SIGKILL)
                killed.extend(p.pid for p in workers)

    thread = threading.Thread(target=kill_the_workers, daemon=True)
    thread.start()
    report = grade_batch(folder, zip_path, out, cluster="local:2", progress=False, **LIMITS)
    thread.join(10)
    assert killed, "no worker processes were found to kill"
    assert report.graded == 6
    rows = _rows(out / "grades.csv")
    assert [r for r in rows if r[0].startswith("right")] == [(f"right_{i}", "23", "ok") for i in range(3)]
    # the killed workers' graders ended with them (and ended their kernels) instead of grading on for nobody
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and _worker_graders(seen_workers):
        time.sleep(0.5)
    assert not _worker_graders(seen_workers)


def _worker_graders(workers: set[int]) -> list[int]:
    """The graders (and their grading processes) that these worker processes started: their environment names
    the worker (PARENT_ENV). Other graders on a shared machine are not this test's."""
    import psutil

    from attn_ref.grade.classroom.worker_service import PARENT_ENV

    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if "--require-isolation" in (p.info["cmdline"] or []) and int(p.environ().get(PARENT_ENV, 0)) in workers:
                found.append(p.pid)
        except (psutil.Error, ValueError):
            pass
    return found


def test_a_worker_refuses_to_grade_unsandboxed(small_class, tmp_path, monkeypatch, capsys):
    from attn_ref.grade import cli

    unsandboxed = SandboxPlan(python="/usr/bin/python3", fresh_uids=False, bwrap=None)
    monkeypatch.setattr(cli, "resolve", lambda *args, **kwargs: unsandboxed)
    folder, zip_path = small_class
    args = argparse.Namespace(submission=str(folder / "right_0.ipynb"), autograder=str(zip_path), out=None,
                                  results=str(tmp_path / "r.json"), timeout=60, jobs=None, force=False, cell_timeout=20,
                                  call_timeout=8, kernel_python=None, namespaces="auto", cluster=None,
                                  require_isolation=True, export=None, canvas_roster=None, canvas_assignment=None)
    assert cli.run_grade(args) == 3
    assert "refusing to grade" in capsys.readouterr().err and not (tmp_path / "r.json").exists()


def test_a_workers_grader_refuses_to_grade_unsandboxed(small_class):
    """The grader a worker keeps says so on its first line and exits; the task's row says the worker refused."""
    import subprocess
    import sys

    from attn_ref.grade.classroom.worker_service import REFUSED, Reply, ReplyState

    _, zip_path = small_class
    unsandboxed = ("import sys; from attn_ref.grade.isolation import sandbox; "
                   "sandbox.resolve = lambda *a, **k: sandbox.SandboxPlan(python='/usr/bin/python3', fresh_uids=False, bwrap=None); "
                   "from attn_ref.grade.classroom.worker_service import main; sys.exit(main(sys.argv[1:]))")
    done = subprocess.run([sys.executable, "-c", unsandboxed, str(zip_path), "--require-isolation"], input=b"",
                          capture_output=True, timeout=120)
    assert done.returncode == REFUSED, done.stderr[-2000:]
    reply = Reply.from_line(done.stdout)
    assert reply.state is ReplyState.REFUSED and "refusing to grade" in reply.note


def test_the_wire_between_a_worker_and_its_grader_is_checked_where_read():
    from attn_ref.grade.classroom.worker_service import Reply, ReplyState, Request, WireError
    from attn_ref.grade.settings import Limits

    request = Request.of(Path("/w/a.ipynb"), Path("/w/r.json"), Limits.of(budget=60, cell_timeout=20), ({"email": "a@b"},))
    again = Request.from_line(request.to_line())
    assert again == request and again.time_limits == Limits.of(budget=60, cell_timeout=20)
    assert Reply.from_line(Reply(ReplyState.GRADED, "note").to_line()) == Reply(ReplyState.GRADED, "note")
    for bad in (b"[]", b"not json", b'{"notebook": 1, "results": "r", "limits": {"budget": 1, "cell": 1, "call": 1}}',
                b'{"notebook": "n", "results": "r", "limits": {"budget": -1, "cell": 1, "call": 1}}',
                b'{"notebook": "n", "results": "r", "limits": {"budget": 1, "cell": 1}}',
                b'{"notebook": "n", "results": "r", "limits": {"budget": 1, "cell": 1, "call": 1}, "submitters": "x"}',
                b"x" * (1 << 17)):
        with pytest.raises(WireError):
            Request.from_line(bad)
    for bad in (b'{"state": "done", "note": ""}', b'{"state": "graded", "note": 3}'):
        with pytest.raises(WireError):
            Reply.from_line(bad)


@pytest.mark.slow
def test_a_workers_grader_ends_with_its_worker(small_class, tmp_path):
    """The grader a worker keeps, grading a hanging notebook: the worker dies, the grader, its grading process,
    its kernel and its kernel image end."""
    import subprocess
    import sys

    import nbformat
    import psutil

    folder, zip_path = small_class
    nb = nbformat.read(str(folder / "blank_0.ipynb"), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("import time\ntime.sleep(300)"))
    nbformat.write(nb, str(tmp_path / "hangs.ipynb"))
    worker = f"""
from pathlib import Path
from attn_ref.grade.classroom.cluster import grade_on_worker
from attn_ref.grade.settings import Limits
print(flush=True)
grade_on_worker(Path({str(zip_path)!r}).read_bytes(), "hangs.ipynb", Path({str(tmp_path / "hangs.ipynb")!r}).read_bytes(),
                Limits.of(budget=600, cell_timeout=400), None)
"""
    parent = subprocess.Popen([sys.executable, "-c", worker], stdout=subprocess.PIPE, text=True)
    parent.stdout.readline()
    deadline, tree = time.monotonic() + 600, []  # the image imports torch first: slow on a loaded machine
    while time.monotonic() < deadline and not (len(tree) >= 5 and any(_uid(p) for p in tree)):
        time.sleep(0.5)  # until the kernel runs (its own uid: a child of the image, so of the grader)
        graders = [p for p in psutil.Process(parent.pid).children() if "worker_service" in _cmdline(p)]
        tree = [graders[0], *graders[0].children(recursive=True)] if graders else []
    time.sleep(5)  # the kernel is now in its sleep
    tree = [tree[0], *tree[0].children(recursive=True)]
    assert len(tree) >= 4  # the grader, its image, the grading process, the launcher, the kernel
    parent.kill()
    parent.wait()
    gone, alive = psutil.wait_procs(tree, timeout=60)
    assert not [p for p in alive if p.status() != psutil.STATUS_ZOMBIE], "the grader or its kernel outlived the worker"


def _cmdline(process) -> str:
    import psutil

    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def _uid(process) -> int:
    import psutil

    try:
        return process.uids().real
    except psutil.Error:
        return 0


@pytest.mark.slow
def test_a_local_cluster_grades_a_lab_class_as_jobs_does_from_one_kernel_image_per_worker(release, tmp_path):
    """Every verdict (score, status, cell errors, every line of every test) of --cluster local:2 is --jobs 2's."""
    import psutil
    from imaged_class import IMAGE_USED, lab_class, verdicts

    folder = lab_class(release, tmp_path / "class", 2)
    zip_path = release[0] / "autograder/lab-autograder.zip"
    jobs = grade_batch(folder, zip_path, tmp_path / "jobs", jobs=2, progress=False, **LIMITS)
    workers, done = set(), threading.Event()

    def watch():  # this run's worker processes (the nannies' children), to find their graders afterwards
        while not done.wait(0.5):
            workers.update(p.pid for p in psutil.Process().children(recursive=True) if "spawn_main" in _cmdline(p))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        clustered = grade_batch(folder, zip_path, tmp_path / "cluster", cluster="local:2", progress=False, **LIMITS)
    finally:
        done.set()
        watcher.join()
    assert IMAGE_USED in jobs.kernel_start and IMAGE_USED in clustered.kernel_start, clustered.kernel_start
    assert verdicts(tmp_path / "cluster") == verdicts(tmp_path / "jobs")
    assert _rows(tmp_path / "cluster/grades.csv") == _rows(tmp_path / "jobs/grades.csv")
    assert workers and not _worker_graders(workers)  # the run's end closed the workers' graders


@pytest.mark.slow
def test_a_submission_graded_in_a_batch_scores_as_when_graded_alone(release, tmp_path):
    """Kernels started one after another in one supervisor share nothing: every entry of every result of
    a --jobs 2 batch equals grading that submission alone (timings and the kernel's uid aside)."""
    import json

    import nbformat
    from course_units import bug_set

    from attn_ref.grade.core import grade

    out, _ = release
    zip_path = out / "autograder/lab-autograder.zip"
    folder = tmp_path / "class"
    folder.mkdir()
    solution = nbformat.read(str(out / "solutions/lab/lab.ipynb"), as_version=4)
    shutil.copy(out / "solutions/lab/lab.ipynb", folder / "right.ipynb")
    shutil.copy(out / "assignments/lab/lab.ipynb", folder / "blank.ipynb")
    for k in (0, 1):
        nb = nbformat.from_dict(json.loads(json.dumps(solution)))
        for _, marker, source, _ in bug_set(k).values():
            for cell in nb.cells:
                if cell.cell_type == "code" and marker in cell.source:
                    cell.source = source
        nbformat.write(nb, str(folder / f"bugs_{k}.ipynb"))
    grade_batch(folder, zip_path, tmp_path / "graded", jobs=2, progress=False, **LIMITS)

    def comparable(results):
        return (results["score"], results["extra_data"]["status"], results["extra_data"]["seed"],
                [(t["name"], t["score"], t["output"]) for t in results["tests"]])

    for path in sorted(folder.glob("*.ipynb")):
        batch = json.loads((tmp_path / "graded/results" / f"{path.stem}.json").read_text())
        alone = grade(path, zip_path, write=False, **LIMITS)
        assert comparable(batch) == comparable(alone), path.name
    assert len({json.loads(p.read_text())["score"] for p in (tmp_path / "graded/results").glob("*.json")}) >= 3


def test_a_scheduler_without_tls_is_refused_where_kernels_share_the_network():
    from attn_ref.grade.classroom.cluster import ClusterError, connect

    with pytest.raises(ClusterError, match="without TLS"):
        connect("tcp://127.0.0.1:1", kernels_share_network=True)


def test_a_local_cluster_speaks_only_tls():
    """Its certificate is made for this run and kept in memory: a kernel that finds its ports gets nothing run
    (tested by the attack itself in tests/end_to_end/test_root_batch.py)."""
    from attn_ref.grade.classroom.batch import close_cluster
    from attn_ref.grade.classroom.cluster import connect

    client = connect("local:1", kernels_share_network=True)
    try:
        addresses = [client.scheduler.address, *client.scheduler_info()["workers"]]
        assert addresses and all(a.startswith("tls://127.0.0.1:") for a in addresses)
    finally:
        close_cluster(client)
