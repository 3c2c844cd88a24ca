"""A batch's kernels started from one kernel image (isolation/image.py): the same verdicts as kernels started
afresh, and no reach from a kernel to the image, to its privileges or to the kernels after it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest
from course_units import N_SETS
from hostile import FAST, IGNORES_INTERRUPTS, ROOT_ONLY, appended, attack, notebook, replaced, with_function
from imaged_class import IMAGE_USED, lab_class, verdict, verdicts

from attn_ref.grade import grade
from attn_ref.grade.classroom.batch import grade_batch
from attn_ref.grade.isolation import cleanup
from attn_ref.grade.isolation.image import why_not
from attn_ref.grade.isolation.sandbox import resolve
from attn_ref.grade.isolation.watchdog import Supervisor


@ROOT_ONLY
@pytest.mark.slow
@pytest.mark.parametrize("namespaces, bug_sets", [("auto", 4), ("off", 2)])
def test_kernels_from_the_image_give_the_verdicts_of_kernels_started_afresh(release, tmp_path, namespaces, bug_sets):
    folder = lab_class(release, tmp_path / "class", min(bug_sets, N_SETS))
    plan = resolve(namespaces=namespaces)
    imaged = grade_batch(folder, release[0] / "autograder/lab-autograder.zip", tmp_path / "imaged", jobs=2, plan=plan,
                         progress=False, **FAST)
    fresh = grade_batch(folder, release[0] / "autograder/lab-autograder.zip", tmp_path / "fresh", jobs=2, plan=plan,
                        progress=False, kernel_image=False, **FAST)
    assert IMAGE_USED in imaged.kernel_start and fresh.kernel_start == "started afresh for each submission"
    assert verdicts(tmp_path / "imaged") == verdicts(tmp_path / "fresh")
    totals = {row["name"]: row["total"] for row in imaged.book.rows}
    assert totals["right"] == 80 and totals["blank"] == 0 and all(totals[f"bugs_{k}"] < 80 for k in range(min(bug_sets, N_SETS)))


@ROOT_ONLY
@pytest.mark.slow
def test_loops_interrupts_restarts_and_exits_from_the_image_as_in_a_kernel_started_afresh(release, tmp_path):
    """Interrupts and shutdowns pass through the launcher to a kernel of the image; a kernel that ignores them
    is restarted (from the image again), one that exits is started again."""
    loops = appended(with_function(release, "lab", "def additive_attention(",
                                   "def additive_attention(*args):\n    while True:\n        pass"), "while True:\n    pass")
    stubborn = with_function(release, "lab", "def sliding_window_mask(", IGNORES_INTERRUPTS)
    exits = with_function(release, "lab", "def causal_mask(", "def causal_mask(T, device=None):\n    import os\n    os._exit(3)")
    exits = appended(replaced(exits, "def self_attention(", "def self_attention(x, W_q, W_k, W_v, causal=True):\n    raise SystemExit(0)"),
                     "import os\nos._exit(1)", at=4)
    folder = tmp_path / "class"
    folder.mkdir()
    folder.chmod(0o755)
    for name, nb in {"loops": loops, "stubborn": stubborn, "exits": exits}.items():
        nbformat.write(nb, str(folder / f"{name}.ipynb"))
    zip_path = release[0] / "autograder/lab-autograder.zip"
    report = grade_batch(folder, zip_path, tmp_path / "graded", jobs=2, plan=resolve(), progress=False, **FAST)
    assert IMAGE_USED in report.kernel_start
    # a batch grades a timeout again alone and says so in its status; the rest must be the same
    batch = {name: [v[0], v[1].replace(" (also when graded again alone)", ""), *v[2:]]
             for name, v in verdicts(tmp_path / "graded").items()}
    alone = {name: verdict(grade(folder / f"{name}.ipynb", zip_path, out_dir=tmp_path / "alone", plan=resolve(), **FAST))
             for name in batch}
    assert batch == alone
    assert batch["loops"][1] == "timeout" and batch["stubborn"][0] == 70 and batch["exits"][0] < 80


@ROOT_ONLY
@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("unshare"), reason="needs util-linux's unshare")
def test_a_grader_that_is_pid_1_of_its_container_still_starts_kernels_from_the_image(release, tmp_path):
    """A container's entrypoint is PID 1: the image must tell its supervisor apart from an adoptive init."""
    folder = lab_class(release, tmp_path / "class", 0)
    run = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-m", "attn_ref", "grade",
                          str(folder), "--autograder", str(release[0] / "autograder/lab-autograder.zip"),
                          "--out", str(tmp_path / "graded"), "--jobs", "2", "--cell-timeout", "20",
                          "--call-timeout", "8", "--timeout", "60"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert IMAGE_USED in run.stdout, run.stdout
    assert {p.stem: json.loads(p.read_text())["score"] for p in (tmp_path / "graded/results").glob("*.json")} \
        == {"right": 80, "blank": 0}


@ROOT_ONLY
@pytest.mark.parametrize("namespaces, cluster", [("auto", None), ("off", None),
                                                 pytest.param("auto", "local:1", marks=pytest.mark.slow),
                                                 pytest.param("off", "local:1", marks=pytest.mark.slow)])
def test_a_kernel_from_the_image_reaches_neither_it_nor_the_kernels_after_it(release, tmp_path, namespaces, cluster,
                                                                             monkeypatch):
    """Through --jobs and through a cluster worker's grader (one worker: the classmates' kernels come from the
    image the hostile kernel's came from)."""
    folder = tmp_path / "class"
    folder.mkdir()
    folder.chmod(0o755)
    hostile = appended(notebook(release, "lab", "blank"), attack("reach_image"))
    nbformat.write(hostile, str(folder / "a_hostile.ipynb"))
    for name in ("b_honest", "c_honest"):  # graded after it (one at a time), from the same image
        nbformat.write(notebook(release, "lab", "solution"), str(folder / f"{name}.ipynb"))
    monkeypatch.setenv("ATTN_REF_NAMESPACES", namespaces)  # a worker's grader resolves its own plan
    runner = dict(cluster=cluster) if cluster else dict(jobs=1, plan=resolve(namespaces=namespaces))
    report = grade_batch(folder, release[0] / "autograder/lab-autograder.zip", tmp_path / "graded", progress=False,
                         **runner, **FAST)
    assert IMAGE_USED in report.kernel_start
    results = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "graded/results").glob("*.json")}
    assert {name: r["score"] for name, r in results.items()} == {"a_hostile": 0, "b_honest": 80, "c_honest": 80}, \
        json.dumps(results["a_hostile"]["tests"][:2], indent=1)
    assert len({r["extra_data"]["kernel"]["uid"] for r in results.values()}) == 3  # a fresh uid each
    assert not Path("/dev/shm/poisoned-by-a-classmate").exists()


@ROOT_ONLY
@pytest.mark.parametrize("namespaces", ["auto", "off"])
def test_kernels_from_the_image_end_when_their_grader_is_killed(release, tmp_path, namespaces, monkeypatch):
    """The supervisor killed outright (SIGKILL: no cleanup runs): each kernel's launcher, orphaned, kills its kernel
    and ends, so no kernel runs on reparented (a TA's killed run left them running, a quarter GB each); the next
    run removes the folders it left (each kernel's work folder, up to a GB)."""
    import signal
    import time

    import psutil

    folder = tmp_path / "class"
    folder.mkdir()
    for name in ("a", "b"):
        nbformat.write(appended(notebook(release, "lab", "blank"), "import time\ntime.sleep(300)"), str(folder / f"{name}.ipynb"))
    scratch = Path(tempfile.mkdtemp(prefix="attn-ref-test-"))  # the killed run's folders, removed below
    scratch.chmod(0o711)  # kernels of other uids pass through, as through /tmp
    run = subprocess.Popen([sys.executable, "-m", "attn_ref", "grade", str(folder), "--autograder",
                            str(release[0] / "autograder/lab-autograder.zip"), "--out", str(tmp_path / "graded"),
                            "--jobs", "2"], env={**os.environ, "ATTN_REF_NAMESPACES": namespaces, "TMPDIR": str(scratch)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def kernels() -> list[psutil.Process]:
        """This run's kernels only (its descendants): a test beside this one has kernels from an image too."""
        found = []
        for p in psutil.Process(run.pid).children(recursive=True):
            try:
                line, uids = " ".join(p.cmdline()), p.uids()
            except psutil.Error:
                continue
            if "The kernel image" in line and uids.real != 0:
                found.append(p)
        return found

    running: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 120
        while len(running) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
            running = kernels()
        assert len(running) >= 2, "the kernels did not start"
        family = psutil.Process(run.pid).children(recursive=True)  # grading processes, launchers, the image
        launchers = [p for p in family if "launch.py" in " ".join(p.cmdline())]
        assert launchers
        run.send_signal(signal.SIGKILL)
        run.wait()
        gone, alive = psutil.wait_procs(running + launchers, timeout=20)
        psutil.wait_procs(family, timeout=20)  # the run's lock is held until its last forked process is gone
        assert not alive, [(p.pid, " ".join(p.cmdline())[:80]) for p in alive]
        # its folders (the kernels' work folders, the image's) are left; the next run's supervisor removes them
        left = sorted(p.name for p in scratch.iterdir())
        assert any(name.startswith("attn-ref-grade-") for name in left) and any(name.endswith(".lock") for name in left)
        monkeypatch.setattr(tempfile, "tempdir", str(scratch))
        ours = cleanup.scratch_folder("grade")  # a living run's (this process holds its lock): kept
        Supervisor(resolve(namespaces=namespaces)).close()
        # ours is kept (its lock was held; the supervisor's close then released it); the killed run's are gone
        assert sorted(p.name for p in scratch.iterdir()) == [ours.name]
    finally:
        run.kill()
        for p in running:
            with contextlib.suppress(psutil.Error):
                p.kill()
        psutil.wait_procs(running, timeout=10)
        shutil.rmtree(scratch, ignore_errors=True)


def test_where_a_kernel_could_reach_the_image_it_is_not_used():
    plan = resolve(namespaces="off")
    if os.geteuid() == 0:
        assert why_not(plan) == ""
    else:
        assert "no sandbox" in why_not(plan)
    assert "GPU" in why_not(plan.for_gpu()) or os.geteuid() != 0
