"""A TA as an ordinary user: `attn-ref grade` on a laptop, with namespaces and forced off.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value and leaves
valid results (tests/hostile.py, assert_sound)."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess

import nbformat
import pytest
from hostile import MEMORY_HOG, ROOT_ONLY, TA_USER, appended, assert_in_custody, attack, class_folder, eavesdropper, notebook


@ROOT_ONLY
def test_a_ta_as_user_kernel_reaches_nothing_of_the_grader(release, as_user):
    work, run = as_user
    secret = f"ta-token-{os.getpid()}"
    reach = attack("reach_grader", SECRET_ENV=secret, GRADER_PATHS=f"{work}/src:{work}/extra",
                   CHECKS_PATHS=f"{work}/autograder/practice-autograder.zip")
    nbformat.write(appended(notebook(release, "practice", "blank"), reach), str(work / "attack.ipynb"))
    shutil.chown(work / "attack.ipynb", TA_USER)
    done = run(["grade", str(work / "attack.ipynb"), "--autograder", str(work / "autograder/practice-autograder.zip"),
                "--out", str(work / "graded")], secret=secret)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads((work / "graded/results/attack.json").read_text())
    assert results["extra_data"]["sandbox"]["mode"] == "namespaces"
    assert results["score"] == 0, json.dumps(results["tests"], indent=1)
    assert_in_custody(work / "graded", done.stdout + done.stderr)  # the TA's umask: the modes are set, not inherited


@ROOT_ONLY
@pytest.mark.slow
def test_a_ta_as_user_kernel_cannot_hear_its_classmates(release, as_user):
    work, run = as_user
    folder = class_folder(release, work / "eavesdropped", {"a_eavesdropper": eavesdropper(release)}, ["b_honest", "c_honest"])
    subprocess.run(["chown", "-R", TA_USER, str(folder)], check=True)
    done = run(["grade", str(folder), "--autograder", str(work / "autograder/lab-autograder.zip"), "--out",
                str(work / "graded-eavesdropped"), "--jobs", "3"])
    assert done.returncode == 0, done.stderr[-2000:]
    results = {p.stem: json.loads(p.read_text()) for p in (work / "graded-eavesdropped/results").glob("*.json")}
    assert {name: r["score"] for name, r in results.items()} == {"a_eavesdropper": 0, "b_honest": 80, "c_honest": 80}
    assert {r["extra_data"]["sandbox"]["mode"] for r in results.values()} == {"namespaces"}
    assert "kernels started from one kernel image" in done.stdout  # as a user, inside namespaces: the image serves


@ROOT_ONLY
def test_a_ta_without_namespaces_is_told_it_is_unsandboxed(release, as_user):
    work, run = as_user
    done = run(["grade", str(work / "solutions/lab/lab.ipynb"), "--autograder", str(work / "autograder/lab-autograder.zip"),
                "--out", str(work / "graded")], namespaces="off")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "unsandboxed" in done.stdout + done.stderr
    results = json.loads((work / "graded/results/lab.json").read_text())
    assert results["score"] == 80 and results["extra_data"]["sandbox"]["unsandboxed"] is True
    assert results["extra_data"]["kernel"]["uid"] == pwd.getpwnam(TA_USER).pw_uid


@ROOT_ONLY
def test_a_kernel_that_kills_its_grader_costs_only_its_own_submission(release, as_user):
    work, run = as_user
    folder = work / "class"
    folder.mkdir()
    killer = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)"
    nbformat.write(appended(notebook(release, "lab", "solution"), killer), str(folder / "a_killer.ipynb"))
    for name in ("b_honest", "c_honest"):
        shutil.copy(work / "solutions/lab/lab.ipynb", folder / f"{name}.ipynb")
    subprocess.run(["chown", "-R", TA_USER, str(folder)], check=True)
    done = run(["grade", str(folder), "--autograder", str(work / "autograder/lab-autograder.zip"), "--out",
                str(work / "graded-class"), "--jobs", "2"], namespaces="off")
    assert done.returncode == 0, done.stderr[-2000:]
    # unsandboxed, a kernel would be the image's own user: every kernel starts afresh, and the summary says why
    assert "kernels started afresh for each submission: no kernel image (no sandbox" in done.stdout
    rows = {r.split(",")[0]: r for r in (work / "graded-class/grades.csv").read_text().splitlines()[1:]}
    assert ",80," in rows["b_honest"] and ",80," in rows["c_honest"]
    # its grading process died: from outside, that is no grade (an empty total that says why), never a made-up 0
    assert "not graded: the grader failed" in rows["a_killer"] and ",80," not in rows["a_killer"]


@ROOT_ONLY
@pytest.mark.slow
def test_a_ta_as_user_kernel_from_the_image_is_still_bounded_in_memory(release, as_user):
    """As a user there is no cgroup: the supervisor sums the memory of the kernel's processes. A kernel forked
    from the image is the image's child, not the grading process's: it is found in its sandbox's PID
    namespace, so its memory is still counted and a hog is stopped."""
    work, run = as_user
    folder = work / "hogs"
    folder.mkdir()
    hog = MEMORY_HOG.replace("range(8)", "range(14)").replace("8 x 256 MB", "14 x 256 MB")  # past the default 3 GB
    # RLIMIT_NPROC counts every process and thread of the TA's user, which tests beside this one share: a fork that
    # finds the limit reached is tried again (the test is of the memory bound, not of the process bound)
    assert "    pid = os.fork()\n" in hog
    hog = hog.replace("    pid = os.fork()\n", "    pid = retried_fork()\n").replace("import os, time\n", """import os, time
def retried_fork():
    for _ in range(300):
        try:
            return os.fork()
        except BlockingIOError:
            time.sleep(0.1)
    return os.fork()
""")
    nbformat.write(appended(notebook(release, "lab", "solution"), hog), str(folder / "a_hog.ipynb"))
    shutil.copy(work / "solutions/lab/lab.ipynb", folder / "b_honest.ipynb")
    subprocess.run(["chown", "-R", TA_USER, str(folder)], check=True)
    done = run(["grade", str(folder), "--autograder", str(work / "autograder/lab-autograder.zip"), "--out",
                str(work / "graded-hogs"), "--jobs", "2"])
    assert done.returncode == 0, done.stderr[-2000:]
    assert "kernels started from one kernel image" in done.stdout
    rows = {r.split(",")[0]: r for r in (work / "graded-hogs/grades.csv").read_text().splitlines()[1:]}
    assert "stopped: its processes used more than 3 GB of memory together" in rows["a_hog"]
    assert ",80,80,ok," in rows["b_honest"]  # total, adjusted total (no adjustments), status
