"""What is a class and what is one submission (classroom/unpack.export_prefix): never decided by what a student
controls. A zip or folder with a notebook at its top is one submission; an export has its metadata at the top or
inside its one top folder (Gradescope's zip unpacked as it is), hidden entries and __MACOSX not looked at."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from attn_ref.grade.classroom.discover import discover, is_batch, is_gradescope_export

META = "submission_metadata.yml"


def _notebook() -> bytes:
    nb = nbformat.v4.new_notebook(metadata={"otter": {"assignment_name": "lab"}})
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    return nbformat.writes(nb).encode()


def _metadata(*folders: str) -> bytes:
    return yaml.safe_dump({f: {":submitters": [{":name": f"Name {f}", ":sid": f}]} for f in folders}).encode()


LAYOUTS = {  # name: (its files, an export?)
    "the student's zip, metadata hidden": ({"lab.ipynb": _notebook(), f".x/{META}": _metadata("s2"),
                                            ".x/s2/lab.ipynb": _notebook()}, False),
    "the student's zip, metadata at its top": ({"lab.ipynb": _notebook(), META: _metadata("s2"),
                                                "s2/lab.ipynb": _notebook()}, False),
    "the student's zip, metadata deeper": ({"work/lab.ipynb": _notebook(), f"work/a/{META}": _metadata("s2")}, False),
    "a folder whose one folder holds a notebook": ({f"lab/{META}": _metadata("s2"), "lab/lab.ipynb": _notebook()},
                                                   False),
    "an export, metadata at the top": ({META: _metadata("s1"), "s1/lab.ipynb": _notebook()}, True),
    "Gradescope's zip unpacked as it is": ({f"assignment_7_export/{META}": _metadata("s1"),
                                            "assignment_7_export/s1/lab.ipynb": _notebook(),
                                            "__MACOSX/._assignment_7_export": b"", ".DS_Store": b""}, True),
}


def _write(folder: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


def _zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_export_is_its_metadata_at_the_top_or_in_its_one_folder_and_never_beside_a_notebook(tmp_path, layout):
    files, export = LAYOUTS[layout]
    zipped = _zip(tmp_path / "late.zip", files)
    folder = _write(tmp_path / "late", files)
    assert is_gradescope_export(zipped) is export and is_gradescope_export(folder) is export
    if export:  # the class's students are named, from either form
        for path, out in ((zipped, tmp_path / "out-zip"), (folder, tmp_path / "out-folder")):
            assert [(s.key, s.people[0].name) for s in discover(path, out)] == [("s1", "Name s1")]
    else:
        assert not is_batch(zipped)


@pytest.mark.parametrize("layout", ["the student's zip, metadata hidden", "the student's zip, metadata at its top"])
def test_a_late_zip_graded_into_the_class_folder_rewrites_nothing_of_the_class(release, tmp_path, layout):
    """`attn-ref grade late.zip --out graded/`, graded/ holding the class: the zip is one submission, its results
    a file of their own; no classmate's results, nor grades.csv, are rewritten."""
    out, _ = release
    autograder = out / "autograder/lab-autograder.zip"
    solution = (out / "solutions/lab/lab.ipynb").read_bytes()
    export = _write(tmp_path / "export", {META: _metadata("s1", "s2"), "s1/lab.ipynb": solution,
                                          "s2/lab.ipynb": solution})
    graded = tmp_path / "graded"
    run = [sys.executable, "-m", "attn_ref", "grade"]
    done = subprocess.run([*run, export, "--autograder", autograder, "--out", graded, "--jobs", "2"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    before = {p.name: p.read_bytes() for p in (graded / "results").iterdir()} | {"grades.csv": (graded / "grades.csv").read_bytes()}
    assert json.loads(before["s2.json"])["score"] == 80
    late = _zip(tmp_path / "late.zip", {**LAYOUTS[layout][0], "lab.ipynb": (out / "assignments/lab/lab.ipynb").read_bytes()})
    done = subprocess.run([*run, late, "--autograder", autograder, "--out", graded], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    after = {p.name: p.read_bytes() for p in (graded / "results").iterdir()} | {"grades.csv": (graded / "grades.csv").read_bytes()}
    assert {k: v for k, v in after.items() if k in before} == before
    assert sorted(set(after) - set(before)) == ["late.json"] and json.loads(after["late.json"])["score"] == 0
