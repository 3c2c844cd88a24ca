"""The TA's first hour, as the README tells it: Gradescope's export zip unzipped as it is, graded with a Canvas
roster, output piped to a log (a line per submission as it goes), and a roster that matches no one said so."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import yaml

ROSTER = ("Student,ID,SIS User ID,SIS Login ID,Section,Lab 3.1 (55501)\n    Points Possible,,,,,80\n"
          '"Lovelace, Ada",501,00123,ada@uni.edu,S1,\n"Turing, Alan",502,00789,alan@uni.edu,S1,\n')


def _unzipped_export(release, folder: Path) -> Path:
    """export/assignment_7_export/…: what unzipping Gradescope's zip into export/ gives."""
    inner = folder / "assignment_7_export"
    solution = (release[0] / "solutions/lab/lab.ipynb").read_bytes()
    students = {"submission_1": ("Ada Lovelace", "00123", "ada@uni.edu"), "submission_2": ("Alan Turing", "00789", "alan@uni.edu")}
    for key in students:
        (inner / key).mkdir(parents=True)
        (inner / key / "lab.ipynb").write_bytes(solution)
    (inner / "submission_metadata.yml").write_text(yaml.safe_dump(
        {key: {":submitters": [{":name": n, ":sid": s, ":email": e}], ":score": "80.0"} for key, (n, s, e) in students.items()}))
    return folder


def _grade(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attn_ref", "grade", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


def test_the_readmes_path_on_gradescopes_zip_unzipped_as_it_is(release, tmp_path):
    export = _unzipped_export(release, tmp_path / "export")
    (tmp_path / "roster.csv").write_text(ROSTER)
    out = tmp_path / "graded"
    done = _grade(export, "--autograder", release[0] / "autograder/lab-autograder.zip", "--out", out, "--jobs", "2",
                  "--export", "canvas", "--canvas-roster", tmp_path / "roster.csv")
    assert done.returncode == 0, done.stderr[-2000:]
    with open(out / "grades.csv", newline="", encoding="utf-8-sig") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    assert {(n, r["sid"], r["total"]) for n, r in rows.items()} == {("Ada Lovelace", "00123", "80"),
                                                                    ("Alan Turing", "00789", "80")}
    with open(out / "canvas.csv", newline="", encoding="utf-8-sig") as f:
        assert [r[-1] for r in list(csv.reader(f))[2:]] == ["80", "80"]
    # off a terminal (stderr is a pipe here), one plain line per graded submission, as it goes
    lines = [line for line in done.stderr.splitlines() if line.startswith("graded ")]
    assert [line.split(":")[0] for line in lines] == ["graded 1 of 2", "graded 2 of 2"], lines
    assert all(line.endswith(": 80 / 80 (ok)") for line in lines), lines


def test_a_roster_that_fills_no_row_exits_5_saying_why(release, tmp_path):
    export = _unzipped_export(release, tmp_path / "export")
    (tmp_path / "roster.csv").write_text(ROSTER.replace("00123", "99123").replace("00789", "99789")
                                         .replace("ada@", "x@").replace("alan@", "y@"))
    done = _grade(export, "--autograder", release[0] / "autograder/lab-autograder.zip", "--out", tmp_path / "graded",
                  "--export", "canvas", "--canvas-roster", tmp_path / "roster.csv")
    assert done.returncode == 5, done.stderr[-2000:]
    assert "canvas.csv gives no student of the roster a score" in done.stderr
