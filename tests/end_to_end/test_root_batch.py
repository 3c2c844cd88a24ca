"""A TA as root: a batch, every submission its own uid, classmates and the cluster out of reach, the class in custody.

Each attack scores no more than an honest wrong answer for what it attacks, leaks no expected value and leaves
valid results (tests/hostile.py, assert_sound)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import nbformat
import pytest
from hostile import (
    BOTH,
    CPU_HOG,
    MEMORY_HOG,
    ROOT_ONLY,
    STAND_IN_LINES,
    TasOwnKernel,
    appended,
    assert_in_custody,
    assert_no_stand_in_in,
    attack,
    csv_rows,
    eavesdropper,
    graded_class,
    hostile_export,
    kernel_cgroups,
    kernel_uid_processes,
    notebook,
    out_reader,
    solution_functions,
    stand_in_thief,
)

from attn_ref.grade.isolation import cleanup
from attn_ref.grade.isolation.sandbox import resolve


@ROOT_ONLY
def test_a_batch_as_root_keeps_students_apart(release, tmp_path):
    survivor = attack("fork_spawner", MARK=f"attn-ref-batch-{os.getpid()}") + """
import glob, os, signal, time
if os.fork() == 0:
    os.setsid()
    for _ in range(600):  # for a minute: kill every process it may, read every notebook it can see
        for path in glob.glob("/proc/[0-9]*/cwd/*.ipynb"):
            try:
                open(path).read()
                open("/dev/shm/stolen", "a").write(path)
            except OSError:
                pass
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        time.sleep(0.1)
"""
    totals, uids = graded_class(release, tmp_path, {"a_hostile": appended(notebook(release, "lab", "blank"), survivor)},
                                ["b_honest", "c_honest"], "off")
    assert totals == {"a_hostile": 0, "b_honest": 80, "c_honest": 80}
    assert not Path("/dev/shm/stolen").exists() and not kernel_uid_processes(uids)
    assert (tmp_path / "graded" / "grades.csv").stat().st_mode & 0o077 == 0


@ROOT_ONLY
@BOTH
def test_folders_too_deep_to_remove_by_recursion_cost_only_their_own_submission(release, tmp_path, namespaces):
    """Cleanup removes trees without recursion; and a cleanup that fails never ends the batch."""
    totals, uids = graded_class(release, tmp_path, {"a_deep": appended(notebook(release, "lab", "blank"), attack("deep_folders"))},
                                ["b_honest"], namespaces)
    assert totals == {"a_deep": 0, "b_honest": 80}
    assert (tmp_path / "graded" / "grades.csv").exists()
    left = [p for root in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(root).glob("deep-*") if p.lstat().st_uid in uids]
    assert not left and not kernel_uid_processes(uids)


@ROOT_ONLY
@pytest.mark.slow
def test_a_kernel_cannot_hear_its_classmates_in_a_root_batch_without_namespaces(release, tmp_path):
    """Neither their channels, nor their kernels' logs (raw output, named on every kernel's command line), nor
    the TA's own Jupyter kernel on the shared loopback running the solution (TCP: IOPub needs no key to read)."""
    log_reader = appended(notebook(release, "lab", "blank"),
                          attack("read_logs", SECONDS="10", SOLUTION=repr("\n\n".join(solution_functions(release)))))
    tas_kernel = TasOwnKernel(solution_functions(release))
    try:
        totals, uids = graded_class(release, tmp_path, {"a_eavesdropper": eavesdropper(release), "a_log_reader": log_reader},
                                    ["b_honest", "c_honest"], "off", jobs=4)
    finally:
        tas_kernel.close()
    assert tas_kernel.runs > 10  # it spoke all along
    assert totals == {"a_eavesdropper": 0, "a_log_reader": 0, "b_honest": 80, "c_honest": 80}
    assert not kernel_uid_processes(uids)


@ROOT_ONLY
@pytest.mark.slow
def test_a_root_batch_from_the_command_line_keeps_the_class_in_custody(release, tmp_path, request):
    """A TA as root grades a hostile Gradescope export without namespaces, with umask 000: no kernel finds the
    output folder named in any process or reads anything of it, nothing written there is readable by others,
    no student text forges a line or hides a character anywhere, the bomb is its own error, and no kernel
    leaves a key behind."""
    from attn_ref.grade.isolation.cleanup import uids_with_keys

    out_root, _ = release
    home = Path(tempfile.mkdtemp(prefix="attn-ref-ta-home-", dir="/var/tmp"))
    home.chmod(0o755)  # a TA's home as most are: anyone may pass through, so only the grader's modes guard --out
    request.addfinalizer(lambda: shutil.rmtree(home, ignore_errors=True))
    out = home / "graded"
    export = hostile_export(release, tmp_path, out)
    done = subprocess.run([sys.executable, "-m", "attn_ref", "grade", str(export), "--autograder",
                           str(out_root / "autograder/lab-autograder.zip"), "--out", str(out), "--jobs", "2",
                           "--namespaces", "off", "--cell-timeout", "20", "--call-timeout", "8", "--timeout", "240"],
                          capture_output=True, text=True, timeout=900, cwd=home, preexec_fn=lambda: os.umask(0))
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row["submission"]: row for row in csv_rows(out / "grades.csv")}
    attacker = json.loads((out / "results/submission_1.json").read_text())
    assert rows["submission_1"]["total"] == "0", attacker["extra_data"]["cell_errors"]
    assert rows["submission_2"]["total"] == "80" and float(rows["submission_3"]["total"]) < 80
    assert rows["submission_4"]["status"].startswith("error: several notebooks")
    assert rows["submission_5"]["status"].startswith("error: the submission was not unpacked: its file")
    assert rows["submission_5"]["total"] == "0"  # the student's doing: its 0 stands
    assert_in_custody(out, done.stdout + done.stderr)
    uids = {json.loads(p.read_text())["extra_data"].get("kernel", {}).get("uid") for p in (out / "results").iterdir()}
    assert not (uids - {None}) & uids_with_keys() and not kernel_uid_processes(uids - {None})


@ROOT_ONLY
@pytest.mark.slow
def test_a_kernel_reaches_neither_classmates_nor_the_cluster_on_a_local_cluster_without_namespaces(release, tmp_path,
                                                                                                   monkeypatch):
    """As root without namespaces every kernel shares the loopback with the cluster's scheduler and workers,
    and with the TA's own Jupyter kernel."""
    monkeypatch.setenv("ATTN_REF_NAMESPACES", "off")  # the workers' graders read it
    mark = tmp_path / "a-task-ran-here"  # tmp_path is root's (0700): only a task run by a worker can write it
    reach = appended(notebook(release, "lab", "blank"), attack("reach_cluster", MARK=str(mark), SECONDS="15",
                                                                GRADER_SITE=sysconfig.get_paths()["purelib"]))
    tas_kernel = TasOwnKernel(solution_functions(release))  # kernels here start from each worker's kernel image
    home = Path(tempfile.mkdtemp(prefix="attn-ref-ta-home-", dir="/var/tmp"))
    home.chmod(0o755)  # only the grader's modes keep --out from the kernels
    try:
        totals, uids = graded_class(release, tmp_path, {"a_eavesdropper": eavesdropper(release), "c_reaches_the_cluster": reach,
                                                        "d_reads_out": out_reader(release, home / "graded")},
                                    ["b_honest"], "off", cluster="local:2", graded=home / "graded")
        assert_in_custody(home / "graded", "")
    finally:
        tas_kernel.close()
        shutil.rmtree(home, ignore_errors=True)
    assert tas_kernel.runs > 10
    assert totals == {"a_eavesdropper": 0, "b_honest": 80, "c_reaches_the_cluster": 0, "d_reads_out": 0}
    assert not mark.exists(), mark.read_text()
    assert not kernel_uid_processes(uids)


@ROOT_ONLY
@pytest.mark.slow
def test_a_batch_holds_no_line_of_a_stand_in(release, tmp_path):
    graded_class(release, tmp_path, {"a_frames": stand_in_thief(release, "frames"), "b_later": stand_in_thief(release, "later")},
                 [], "off", jobs=2)
    for path in (tmp_path / "graded" / "results").glob("*.json"):
        assert_no_stand_in_in(json.loads(path.read_text()))
    for path in (tmp_path / "graded").rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".html"):
            text = path.read_text(errors="replace")
            assert not [line for line in STAND_IN_LINES if line in text], path


def _recorded(path: Path, names: set[str], paths: list[Path] | None = None) -> Path:
    names.add(path.name)
    if paths is not None:
        paths.append(path)
    return path


@ROOT_ONLY
@pytest.mark.slow
@pytest.mark.parametrize("bounds", ["cgroups", "polled"])
def test_neighbours_cannot_starve_or_kill_an_honest_kernel(release, tmp_path, bounds, monkeypatch):
    """Beside a kernel whose processes together pass its memory bound and one that keeps 8 processes busy,
    an honest kernel scores what it scores alone, the grader survives, and the hog's row says why it stopped."""
    from dataclasses import replace

    own_tmp = Path(tempfile.mkdtemp(prefix="nb-", dir="/tmp"))  # short: the kernels' socket paths live below it
    own_tmp.chmod(0o711)  # the kernels' uids pass through to their folders, as through /tmp
    monkeypatch.setenv("TMPDIR", str(own_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp))  # the jails' bases: this test's alone

    plan = resolve(namespaces="auto")
    if bounds == "cgroups" and "memory" not in plan.cgroups:
        pytest.skip("no cgroups can be made here")
    plan = replace(plan, cgroups=plan.cgroups if bounds == "cgroups" else (),
                   caps=replace(plan.caps, kernel_memory_bytes=3 << 29))  # 1.5 GB for a kernel in all
    solution = notebook(release, "lab", "solution")
    hostile = {"a_cpu_hog": appended(notebook(release, "lab", "blank"), CPU_HOG),
               "c_memory_hog": appended(solution, MEMORY_HOG)}
    made: set[str] = set()  # this test's jails (a cgroup is named after its jail's base): another test's are not its
    folders: list[Path] = []  # with the calls' folders, in memory where a memory cgroup bounds the kernel
    scratch_folder = cleanup.scratch_folder
    monkeypatch.setattr(cleanup, "scratch_folder", lambda kind, **how: _recorded(scratch_folder(kind, **how), made, folders))
    totals, uids = graded_class(release, tmp_path, hostile, ["b_honest"], "auto", jobs=3, plan=plan)  # all at once
    assert totals["b_honest"] == 80 and totals["a_cpu_hog"] == 0
    rows = {row["name"]: row for row in csv_rows(tmp_path / "graded" / "grades.csv")}
    why = "its processes used more than 1.5 GB of memory together"
    assert rows["c_memory_hog"]["status"] == f"stopped: {why}", rows["c_memory_hog"]
    hog = json.loads((tmp_path / "graded" / "results" / "c_memory_hog.json").read_text())
    assert f"The kernel was stopped: {why}." in hog["output"]
    assert hog["extra_data"]["sandbox"]["kernel_bounds"] == ("polled" if bounds == "polled" else f"cgroups ({', '.join(plan.cgroups)})")
    assert rows["b_honest"]["status"] == "ok" and rows["a_cpu_hog"]["status"] == "ok"
    assert made and not kernel_uid_processes(uids - {None}) and not [c for c in kernel_cgroups() if c.name in made]
    assert not list(own_tmp.iterdir())  # every base removed
    assert not [f for f in folders if os.path.lexists(f)]  # and every folder of the calls, wherever it was
    assert bounds == "polled" or any(f.parent == Path("/dev/shm") for f in folders) or not os.path.isdir("/dev/shm")
    own_tmp.rmdir()


def test_a_timeout_in_a_batch_is_graded_again_alone_before_it_is_recorded(release, tmp_path, monkeypatch):
    from attn_ref.grade.classroom.batch import grade_batch
    from attn_ref.grade.isolation import watchdog

    starts = []  # (submission, what else was running then)
    original = watchdog.Supervisor._start

    def start(self, job):
        starts.append((job.key, sorted(r.job.key for r in self.running.values())))
        original(self, job)

    monkeypatch.setattr(watchdog.Supervisor, "_start", start)
    folder = tmp_path / "class"
    folder.mkdir()
    blank = notebook(release, "practice", "blank")
    nbformat.write(appended(blank, "while True:\n    pass"), str(folder / "a_loop.ipynb"))
    nbformat.write(blank, str(folder / "b_blank.ipynb"))
    report = grade_batch(folder, release[0] / "autograder/practice-autograder.zip", tmp_path / "graded", jobs=2,
                         progress=False, cell_timeout=10, call_timeout=10, notebook_timeout=40)
    assert [key for key, _ in starts] == ["a_loop", "b_blank", "a_loop"] and starts[2][1] == []
    rows = {row["name"]: row for row in report.book.rows}
    assert rows["a_loop"]["status"] == "timeout (also when graded again alone)" and rows["b_blank"]["status"] == "ok"
    results = json.loads((tmp_path / "graded" / "results" / "a_loop.json").read_text())
    assert results["extra_data"]["graded_alone"] and "graded again alone, and ran out of time again" in results["output"]
