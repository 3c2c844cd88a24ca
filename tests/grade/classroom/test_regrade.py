"""A class regraded end to end: correct, partly wrong, blank, mangled and hostile submissions."""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import edit_notebook, signed_in
from course_units import WRONG_PRACTICE

from attn_ref.grade.classroom.batch import grade_batch

LIMITS = dict(cell_timeout=10, call_timeout=8, notebook_timeout=40)


def _nb(release, kind):
    out, _ = release
    folder = "solutions" if kind == "solution" else "assignments"
    return nbformat.read(str(out / folder / "practice" / "practice.ipynb"), as_version=4)


def _signed(nb, who: str):
    """A copy with the student's own note in it, so every submission's content differs."""
    nb = copy.deepcopy(nb)
    nb.cells.append(nbformat.v4.new_markdown_cell(f"Submitted by {who}."))
    return nb


def _with(nb, source: str):
    nb = copy.deepcopy(nb)
    nb.cells.append(nbformat.v4.new_code_cell(source))
    return nb


def build_class(release, folder: Path) -> dict[str, tuple[float, str]]:
    """Write 32 submissions; return {name: (expected total, expected status prefix)}."""
    out, _ = release
    solution, blank = _nb(release, "solution"), _nb(release, "blank")
    expected = {}

    def put(name, nb, total, status="ok"):
        nbformat.write(nb, str(folder / f"{name}.ipynb"))
        expected[name] = (total, status)

    for i in range(8):
        put(f"correct_{i}", _signed(solution, f"student {i}"), 23)
    for i, (marker, (source, _, points)) in enumerate(WRONG_PRACTICE.items()):
        if i < 8:
            put(f"partly_wrong_{i}", edit_notebook(out / "solutions/practice/practice.ipynb", {marker: source}), 23 - points)
    for i in range(4):
        put(f"blank_{i}", _signed(blank, f"blank {i}"), 0)
    # mangled
    (folder / "corrupt.ipynb").write_text('{"cells": [ this is not json')
    expected["corrupt"] = (0, "error: corrupt.ipynb is not a readable")
    other_kernel = _signed(solution, "kernel")
    other_kernel.metadata["kernelspec"]["name"] = "ir"
    put("other_kernel", other_kernel, 23)
    unnamed = _signed(solution, "unnamed")
    del unnamed.metadata["otter"]["assignment_name"]
    put("no_assignment_name", unnamed, 0, "error: this notebook has no assignment name")
    wrong_name = _signed(solution, "wrong")
    wrong_name.metadata["otter"]["assignment_name"] = "lab"
    put("wrong_assignment", wrong_name, 0, "error: this notebook is for the assignment 'lab'")
    put("final_v2_REALLY_final", _signed(solution, "renamed"), 23)
    deleted = _signed(solution, "deleted")
    deleted.cells = [c for c in deleted.cells if "q4_scores_T8 =" not in c.source]
    put("deleted_cells", deleted, 20)
    duplicated = _signed(solution, "dup")
    copies = copy.deepcopy(duplicated.cells[5:15])
    for i, cell in enumerate(copies):
        cell["id"] = f"copy-{i}"
    duplicated.cells = duplicated.cells + copies
    put("duplicated_cells", duplicated, 23)
    (folder / "empty_folder").mkdir()  # not a submission: listed, not graded
    with zipfile.ZipFile(folder / "two_notebooks.zip", "w") as archive:
        archive.writestr("a.ipynb", nbformat.writes(solution))
        archive.writestr("b.ipynb", nbformat.writes(blank))
    expected["two_notebooks"] = (0, "error: several notebooks")
    with zipfile.ZipFile(folder / "no_notebook.zip", "w") as archive:
        archive.writestr("notes.txt", "forgot the notebook")
    expected["no_notebook"] = (0, "error: no notebook")
    with zipfile.ZipFile(folder / "exported.zip", "w") as archive:
        archive.writestr("practice.ipynb", nbformat.writes(_signed(solution, "export")))
        archive.writestr(".OTTER_LOG", b"\x80\x04junk")
    expected["exported"] = (23, "ok")
    # hostile
    put("kernel_dies", _with(_signed(solution, "dies"), "import os\nos._exit(1)"), 23)
    put("infinite_loop", _with(_signed(solution, "loop"), "while True:\n    pass"), 23, "timeout")
    put("fills_memory", _with(_signed(solution, "mem"), "import numpy as np\nhog = np.ones(6 * 10**8)"), 23)
    put("fills_disk", _with(_signed(solution, "disk"), "with open('big.bin', 'wb') as f:\n    f.write(b'0' * (300 << 20))"), 23)
    put("reads_the_key", _with(blank, "from attn_ref.answers import ANSWERS\nglobals().update(ANSWERS)"), 0)
    return expected


@pytest.fixture(scope="module")
def graded_class(release, tmp_path_factory):
    out, _ = release
    folder = tmp_path_factory.mktemp("class")
    expected = build_class(release, folder)
    assert len(expected) >= 30
    gradebook = tmp_path_factory.mktemp("gradebook")
    zip_path = out / "autograder" / "practice-autograder.zip"
    start = time.perf_counter()
    report = grade_batch(folder, zip_path, gradebook, jobs=2, budget=90, progress=False, **LIMITS)
    return folder, gradebook, expected, report, time.perf_counter() - start, zip_path


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def test_every_score_and_status(graded_class):
    _, gradebook, expected, report, _, _ = graded_class
    rows = {r["name"]: r for r in read_csv(gradebook / "grades.csv")}
    assert set(rows) == set(expected) and report.graded == len(expected)
    wrong = {name: (rows[name]["total"], rows[name]["status"]) for name, (total, status) in expected.items()
             if float(rows[name]["total"]) != total or not rows[name]["status"].startswith(status)}
    assert not wrong, wrong
    header = list(read_csv(gradebook / "grades.csv")[0])
    written = [f"q{i}_written" for i in (1, 2, 3, 6, 7, 11)]
    assert header == ["name", "sid", "email", "submission", *[f"q{i}" for i in range(1, 12)], *written, "total", "adjusted total",
                      "status", "adjustments", "grader", "autograder"]
    assert report.not_submissions == ["empty_folder (a folder with no notebook)"]
    for name in expected:
        results = json.loads((gradebook / "results" / f"{name}.json").read_text())
        assert {"score", "tests", "execution_time", "extra_data"} <= set(results)


def test_written_answers_and_summary(graded_class):
    _, gradebook, expected, _, _, _ = graded_class
    pages = sorted(p.name for p in (gradebook / "written").iterdir())
    assert pages == ["q1.html", "q11.html", "q2.html", "q3.html", "q6.html", "q7.html", "scores.csv"]
    q3 = (gradebook / "written" / "q3.html").read_text()
    assert q3.count('class="answer"') == len(expected)
    assert "h_t had to hold everything" in q3 and "(no answer)" in q3
    assert (gradebook / "summary.png").read_bytes().startswith(b"\x89PNG")


def test_a_rerun_regrades_nothing(graded_class):
    folder, gradebook, expected, _, _, zip_path = graded_class
    before = {p.name: p.stat().st_mtime_ns for p in (gradebook / "results").iterdir()}
    report = grade_batch(folder, zip_path, gradebook, jobs=2, progress=False, **LIMITS)
    assert report.graded == 0 and report.skipped == len(expected)
    assert {p.name: p.stat().st_mtime_ns for p in (gradebook / "results").iterdir()} == before


def _cli(*args):
    return [sys.executable, "-m", "attn_ref", "grade", *map(str, args)]


def test_a_killed_run_resumes_to_the_same_gradebook(graded_class, tmp_path):
    folder, gradebook, _, _, _, zip_path = graded_class
    subset = tmp_path / "subset"
    subset.mkdir()
    names = sorted(p.name for p in folder.glob("correct_*.ipynb")) + sorted(p.name for p in folder.glob("partly_wrong_*.ipynb"))[:4]
    for name in names:
        shutil.copy(folder / name, subset / name)
    out = tmp_path / "out"
    run = subprocess.Popen(_cli(subset, "--autograder", zip_path, "--out", out, "--jobs", "2"), start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and len(list((out / "results").glob("*.json"))) < 3:
        time.sleep(0.2)
    os.killpg(run.pid, signal.SIGKILL)  # no chance to clean up, as when a laptop lid closes
    run.wait()
    done_before = len(list((out / "results").glob("*.json")))
    assert 3 <= done_before < len(names)
    resumed = subprocess.run(_cli(subset, "--autograder", zip_path, "--out", out, "--jobs", "2"), capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(names) - done_before} graded" in resumed.stdout or f"{len(names) - done_before + 1} graded" in resumed.stdout
    full = {r["name"]: (r["total"], r["status"]) for r in read_csv(gradebook / "grades.csv")}
    again = {r["name"]: (r["total"], r["status"]) for r in read_csv(out / "grades.csv")}
    assert again == {Path(n).stem: full[Path(n).stem] for n in names}


class _SwallowsAnInterrupt:
    """Ctrl-C pressed while Python runs a finalizer: the KeyboardInterrupt is raised inside __del__, where
    Python only prints "Exception ignored in ..." and goes on."""

    def __del__(self):
        signal.raise_signal(signal.SIGINT)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the swallowed interrupt, printed
def test_an_interrupt_python_swallows_still_stops_the_batch(graded_class, tmp_path, monkeypatch):
    from attn_ref.grade.classroom import batch

    folder, _, _, _, _, zip_path = graded_class
    subset = tmp_path / "subset"
    subset.mkdir()
    for name in sorted(p.name for p in folder.glob("correct_*.ipynb"))[:3]:
        shutil.copy(folder / name, subset / name)
    written = batch.write_results

    def write_then_swallow(path, results):
        written(path, results)
        _SwallowsAnInterrupt()  # made and dropped at once: its __del__ runs here

    monkeypatch.setattr(batch, "write_results", write_then_swallow)
    report = grade_batch(subset, zip_path, tmp_path / "out", jobs=1, progress=False, **LIMITS)
    assert report.interrupted and report.graded == 1  # nothing new started after the interrupt
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # and Ctrl-C is Python's again


def test_gradescope_export_with_names(release, tmp_path):
    out, _ = release
    export = tmp_path / "assignment_123_export"
    export.mkdir()
    metadata = {
        "submission_1001": {":submitters": [{":name": "Ada Lovelace", ":sid": "A001", ":email": "ada@example.edu"}], ":score": 0.0},
        "submission_1002": {":submitters": [{":name": "Alan Turing", ":sid": "A002", ":email": "alan@example.edu"},
                                            {":name": "Grace Hopper", ":sid": "A003", ":email": "grace@example.edu"}]},
        "submission_1003": {":submitters": [{":name": "Missing Folder", ":sid": "A004", ":email": "m@example.edu"}]},
    }
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    (export / "submission_1001").mkdir()
    nbformat.write(signed_in(_nb(release, "solution"), "ada@example.edu"), str(export / "submission_1001" / "practice.ipynb"))
    (export / "submission_1002").mkdir()
    shutil.copy(out / "assignments/practice/practice.ipynb", export / "submission_1002" / "practice.ipynb")
    zip_path = out / "autograder" / "practice-autograder.zip"
    grade_batch(export, zip_path, tmp_path / "graded", jobs=2, progress=False, **LIMITS)
    rows = {r["name"]: r for r in read_csv(tmp_path / "graded" / "grades.csv")}
    assert rows["Ada Lovelace"]["total"] == "23" and rows["Ada Lovelace"]["sid"] == "A001"
    assert rows["Alan Turing"]["total"] == rows["Grace Hopper"]["total"] == "0"  # a group: one row each
    assert rows["Grace Hopper"]["email"] == "grace@example.edu"
    # the export lacks the folder: not the student's doing, so no grade (empty), not a 0
    assert rows["Missing Folder"]["status"].startswith("not graded: the export lists submission_1003")
    assert rows["Missing Folder"]["total"] == rows["Missing Folder"]["q1"] == ""
    # the same export, as the zip Gradescope hands out
    archive_path = tmp_path / "export.zip"
    with zipfile.ZipFile(archive_path, "w") as archive:
        for file in export.rglob("*"):
            if file.is_file():
                archive.write(file, Path("assignment_123_export") / file.relative_to(export))
    grade_batch(archive_path, zip_path, tmp_path / "graded_zip", jobs=2, progress=False, **LIMITS)
    assert read_csv(tmp_path / "graded_zip" / "grades.csv") == read_csv(tmp_path / "graded" / "grades.csv")
    page = (tmp_path / "graded" / "written" / "q1.html").read_text()
    assert "Alan Turing, Grace Hopper" in page and "A002" in page


def test_a_wrong_autograder_stops_before_grading(release, graded_class, tmp_path):
    out, _ = release
    folder = graded_class[0]
    (tmp_path / "not_a_zip.zip").write_text("hello")
    for autograder, message in ((tmp_path / "not_a_zip.zip", "not a zip"),
                                (out / "autograder" / "lab-autograder.zip", "the autograder is for 'lab'")):
        done = subprocess.run(_cli(folder, "--autograder", autograder, "--out", tmp_path / "o"), capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert not (tmp_path / "o" / "results").exists() or not list((tmp_path / "o" / "results").iterdir())


def test_two_runs_on_one_folder_do_not_corrupt_it(release, graded_class, tmp_path):
    folder, _, _, _, _, zip_path = graded_class
    small = tmp_path / "small"
    small.mkdir()
    for name in ("correct_0", "blank_0", "partly_wrong_1", "corrupt"):
        shutil.copy(folder / f"{name}.ipynb", small / f"{name}.ipynb")
    out = tmp_path / "out"
    runs = [subprocess.Popen(_cli(small, "--autograder", zip_path, "--out", out, "--jobs", "1"), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for run in runs:
        assert run.wait(timeout=600) == 0, run.stderr.read()
    rows = read_csv(out / "grades.csv")
    assert sorted(r["name"] for r in rows) == ["blank_0", "correct_0", "corrupt", "partly_wrong_1"]
    for file in (out / "results").iterdir():
        json.loads(file.read_text())
    assert not list(out.rglob("*.part"))


def test_every_file_of_a_class_folder_is_graded_or_said_not_to_be(tmp_path):
    """A notebook or zip whose extension Windows wrote in capitals is graded; a PDF, a hidden notebook, a folder with
    no notebook and a link are each named with why they are not; a computer's own files (.DS_Store,
    .ipynb_checkpoints) are passed over in silence."""
    from attn_ref.grade.classroom.discover import discover, skipped
    from attn_ref.grade.intake.submission import load

    folder = tmp_path / "class"
    (folder / "notes").mkdir(parents=True)
    (folder / ".ipynb_checkpoints").mkdir()
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    for name in ("Ada.IPYNB", ".hidden.ipynb", ".ipynb_checkpoints/a-checkpoint.ipynb", "notes/todo.ipynb.txt"):
        nbformat.write(nb, str(folder / name))
    with zipfile.ZipFile(folder / "Bob.ZIP", "w") as archive:
        archive.writestr("practice.ipynb", nbformat.writes(nb))
    (folder / "eve.pdf").write_bytes(b"%PDF")
    (folder / ".DS_Store").write_bytes(b"\0")
    (folder / "link.ipynb").symlink_to(folder / "Ada.IPYNB")
    os.mkfifo(folder / "fifo.ipynb")  # from a tarball: opening it would wait for a writer that never comes
    assert [s.path.name for s in discover(folder, tmp_path / "out")] == ["Ada.IPYNB", "Bob.ZIP"]
    assert load(folder / "Bob.ZIP")[1] == "practice.ipynb"  # read as the zip it is
    assert skipped(folder) == [".hidden.ipynb (hidden: its name starts with '.')", "eve.pdf (not a notebook, a zip or a folder)",
                               "fifo.ipynb (not a regular file: a FIFO, socket or device is never opened)",
                               "link.ipynb (a link, never followed)", "notes (a folder with no notebook)"]


def test_no_results_file_name_starts_with_a_dash(tmp_path):
    """results/-rf.json would be read as an option by `rm *` or `cat *.json` in that folder."""
    from attn_ref.grade.classroom.discover import discover

    folder = tmp_path / "class"
    folder.mkdir()
    nb = nbformat.writes(nbformat.v4.new_notebook())
    for name in ("-rf.ipynb", "--force.ipynb", "-.ipynb", "a-b.ipynb"):
        (folder / name).write_text(nb)
    keys = sorted(s.key for s in discover(folder, tmp_path / "out"))
    assert not [k for k in keys if k.startswith("-")] and "a-b" in keys and len(set(keys)) == 4, keys


def test_a_submission_another_run_graded_meanwhile_is_counted_as_such(tmp_path):
    """Two runs on one --out: what the other run graded while this one waited its turn is counted apart, so that
    "N submissions: a graded, b unchanged, c graded meanwhile by another run" adds up to N."""
    from types import SimpleNamespace

    from attn_ref.grade.classroom.batch import BatchRun, Pending
    from attn_ref.grade.classroom.discover import Submission
    from attn_ref.grade.isolation.watchdog import Admission, Job
    from attn_ref.grade.owned import private_folder
    from attn_ref.grade.results import write_results

    out = tmp_path / "out"
    pending = [Pending(Submission(key, tmp_path / f"{key}.ipynb"), out / "results" / f"{key}.json", f"hash-{key}")
               for key in ("ada", "bob")]
    batch = SimpleNamespace(autograder=SimpleNamespace(checks=SimpleNamespace(version="v1")), out=out, todo=tuple(pending),
                            options=SimpleNamespace(force=False))
    run = BatchRun(batch)
    write_results(private_folder(out / "results") / "ada.json", {"score": 1, "tests": [], "extra_data": {
        "submission": "ada", "status": "ok", "outcome": "graded", "content_hash": "hash-ada", "autograder_version": "v1"}})
    jobs = {key: Job(key, lambda jail: {}, lambda *why: {}, 1.0) for key in ("ada", "bob")}
    assert run.prepare(jobs["ada"]) is Admission.SKIP and run.prepare(jobs["bob"]) is Admission.START
    assert (run.by_another_run, run.graded) == (1, 0)


def test_an_out_folder_inside_the_class_folder_is_not_listed_as_not_graded(tmp_path):
    """--out graded/ inside the class folder, or --out the class folder itself: the run's own files are not a
    student's, and are not listed as what it did not grade."""
    from attn_ref.grade.classroom.batch import batch_files
    from attn_ref.grade.classroom.discover import skipped

    folder = tmp_path / "class"
    (folder / "graded" / "results").mkdir(parents=True)
    (folder / "results").mkdir()
    for name in ("grades.csv", "eve.pdf", "graded/grades.csv"):
        (folder / name).write_text("x")
    assert skipped(folder) == ["eve.pdf (not a notebook, a zip or a folder)", "graded (a folder with no notebook)",
                               "grades.csv (not a notebook, a zip or a folder)", "results (a folder with no notebook)"]
    assert skipped(folder, batch_files(folder / "graded")) == ["eve.pdf (not a notebook, a zip or a folder)",
                                                        "grades.csv (not a notebook, a zip or a folder)",
                                                        "results (a folder with no notebook)"]
    assert skipped(folder, batch_files(folder)) == ["eve.pdf (not a notebook, a zip or a folder)",
                                             "graded (a folder with no notebook)"]


def test_a_class_folder_given_one_level_too_high_grades_each_student_of_its_sections(tmp_path):
    """class/section1/ada/lab.ipynb: section1 was one row, "several notebooks in the folder section1", a 0 put on
    no student. Each of its folders is now a submission shown as section1/ada; a student's own folder of folders
    (a notebook in nb/, data in a zip) stays one submission, and a section's empty folder is named as not graded."""
    from attn_ref.grade.classroom.discover import discover, skipped

    folder = tmp_path / "class"
    nb = nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]))
    for name in ("section1/ada/lab.ipynb", "section1/bob/lab.ipynb", "section1/carl/work/lab.ipynb", "section2/ada/lab.ipynb",
                 "section2/dan/Lab.IPYNB", "eve/nb/lab.ipynb", "frank/lab.ipynb", "section3/gina/lab.ipynb",
                 "section3/hal/deep/er/lab.ipynb", "section3/hal/.ipynb_checkpoints/lab-checkpoint.ipynb",
                 "ivy/.ipynb_checkpoints/lab-checkpoint.ipynb", "ivy/work/lab.ipynb"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(nb)
    (folder / "section1" / "notes").mkdir()
    (folder / "eve" / "data").mkdir()
    with zipfile.ZipFile(folder / "eve" / "data" / "inputs.zip", "w") as archive:
        archive.writestr("x.csv", "1")
    subs = discover(folder, tmp_path / "out")
    # section3: one student's notebook deep in folders of their own still makes it a section of two students;
    # ivy: a notebook and its hidden checkpoint are one student's folder
    assert [s.file_name for s in subs] == ["eve", "frank", "ivy", "section1/ada", "section1/bob", "section1/carl",
                                           "section2/ada", "section2/dan", "section3/gina", "section3/hal"]
    assert len({s.key for s in subs}) == len(subs) and subs[3].path == folder / "section1" / "ada"
    assert skipped(folder) == ["section1/notes (a folder with no notebook)"]
