"""A malformed notebook is its student's error (a 0 and what to fix), never "the grader failed": graded alone, in a
batch (with the report still written), on a local cluster and by the zip's own run_autograder as on Gradescope."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hostile import FAST, ROOT_ONLY, csv_rows

from attn_ref.grade import grade
from attn_ref.grade.isolation.sandbox import resolve


def _solution(release) -> dict:
    return json.loads((release[0] / "solutions/lab/lab.ipynb").read_text())


def _code_cell(nb: dict) -> dict:
    return next(c for c in nb["cells"] if c["cell_type"] == "code")


def _nested(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


BREAKS = {  # the held-back round's two, and the other fields grading reads, each broken its own way
    "source is 5": lambda nb: _code_cell(nb).update(source=5),
    "otter is text": lambda nb: nb["metadata"].update(otter="lab"),
    "cell_type unknown": lambda nb: _code_cell(nb).update(cell_type="python"),
    "a cell is a list": lambda nb: nb["cells"].insert(2, ["x = 1"]),
    "assignment name a number": lambda nb: nb["metadata"]["otter"].update(assignment_name=3),
    "cells a mapping": lambda nb: nb.update(cells={"0": _code_cell(nb)}),
    "nested 300 deep": lambda nb: nb["metadata"].update(x=_nested(300)),
    "600,000 values": lambda nb: nb["metadata"].update(x=[0] * 600_000),
}
SAYS = {"source is 5": "source is 5, not text", "otter is text": "metadata.otter is 'lab', not a mapping",
        "cell_type unknown": "has cell_type 'python'", "a cell is a list": "cell 3 is not a cell",
        "assignment name a number": "assignment name is 3", "cells a mapping": "has no list of cells",
        "nested 300 deep": "nests more than 100 levels deep", "600,000 values": "more than 500,000 values (each line"}


def _broken(release, how: str) -> str:
    nb = _solution(release)
    BREAKS[how](nb)
    return json.dumps(nb)


def _assert_students_error(results: dict, how: str) -> None:
    extra = results["extra_data"]
    assert extra["outcome"] == "student" and results["score"] == 0, (how, extra.get("status"))
    assert extra["status"].startswith("error: ") and SAYS[how] in extra["status"], (how, extra["status"])
    assert SAYS[how] in results["output"] and "grader failed" not in json.dumps(results)


@pytest.mark.parametrize("how", sorted(BREAKS))
def test_a_malformed_notebook_graded_alone_is_its_students_error(release, tmp_path, how):
    path = tmp_path / "lab.ipynb"
    path.write_text(_broken(release, how))
    results = grade(path, release[0] / "autograder/lab-autograder.zip", out_dir=tmp_path, plan=resolve(), **FAST)
    _assert_students_error(results, how)


def test_fields_grading_does_not_read_cost_nothing(release, tmp_path):
    """An editor's quirks (a kernelspec that is text, tags that are text, an unknown nbformat, outputs of any
    shape): graded in full, each quirk a warning in the results."""
    nb = _solution(release)
    nb["metadata"]["kernelspec"] = "python3"
    nb["nbformat"] = "4"
    _code_cell(nb)["metadata"] = {"tags": "setup"}
    _code_cell(nb)["outputs"] = 5
    path = tmp_path / "lab.ipynb"
    path.write_text(json.dumps(nb))
    results = grade(path, release[0] / "autograder/lab-autograder.zip", out_dir=tmp_path, plan=resolve(), **FAST)
    assert results["extra_data"]["outcome"] == "graded" and results["score"] == 80
    warnings = results["extra_data"]["warnings"]
    assert any("kernelspec" in w for w in warnings) and any("tags" in w for w in warnings), warnings


@pytest.mark.parametrize("cluster", [None, "local:1"], ids=["local batch", "local cluster"])
def test_in_a_batch_a_malformed_notebook_is_its_own_row_and_the_report_is_written(release, tmp_path, cluster):
    from attn_ref.grade.classroom.batch import grade_batch

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ada.ipynb").write_text(_broken(release, "source is 5"))
    (folder / "bob.ipynb").write_text(_broken(release, "otter is text"))
    shutil.copy(release[0] / "solutions/lab/lab.ipynb", folder / "cy.ipynb")
    graded = tmp_path / "graded"
    options = dict(cluster=cluster) if cluster else dict(jobs=2, plan=resolve())
    grade_batch(folder, release[0] / "autograder/lab-autograder.zip", graded, progress=False, **options, **FAST)
    rows = {row["name"]: row for row in csv_rows(graded / "grades.csv")}
    assert rows["cy"]["total"] == "80"
    for name, how in (("ada", "source is 5"), ("bob", "otter is text")):
        assert rows[name]["total"] == "0" and rows[name]["status"].startswith("error: "), rows[name]
        assert SAYS[how] in rows[name]["status"]
    assert "integrity report (3 submissions)" in (graded / "report.html").read_text()


@ROOT_ONLY
def test_on_gradescope_a_malformed_notebook_is_its_students_error(release, gradescope):
    _, roots, prefix = gradescope
    root = roots["lab"]
    for how in ("source is 5", "otter is text"):
        shutil.rmtree(root / "submission")
        (root / "submission").mkdir()
        (root / "submission" / "lab.ipynb").write_text(_broken(release, how))
        env = dict(os.environ, AUTOGRADER_ROOT=str(root), ATTN_REF_PREFIX=prefix)
        env.pop("PYTHONPATH", None)
        done = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                              timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        _assert_students_error(json.loads((root / "results" / "results.json").read_text()), how)


def test_a_notebook_graded_reads_no_output_and_holds_the_file_once(release, tmp_path):
    """The solution with a 48 MB output: graded in full (the kernel is given the notebook without outputs)."""
    nb = _solution(release)
    _code_cell(nb)["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * (48 << 20)}]
    path = tmp_path / "lab.ipynb"
    path.write_text(json.dumps(nb))
    results = grade(path, release[0] / "autograder/lab-autograder.zip", out_dir=tmp_path, plan=resolve(), **FAST)
    assert results["score"] == 80 and Path(path).stat().st_size > 48 << 20
