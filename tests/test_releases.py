"""attn-ref build: what an instructor gets, and that two builds of the same sources agree."""

import json
import re
import zipfile
from pathlib import Path

import nbformat
import pytest
from course_units import ANSWERS, COURSE, assignment

from attn_ref.release.build import build
from attn_ref.release.notebooks import TIMING_TAG, master


def test_release_layout(release):
    out, built = release
    for name in ("practice", "lab"):
        assert (out / "assignments" / name / f"{name}.ipynb").is_file()
        assert (out / "solutions" / name / f"{name}.ipynb").is_file()
        assert (out / "autograder" / f"{name}-autograder.zip").is_file()
    # otter's own dist/ (whose autograder notebook holds every test) never lands in the release
    assert not list(out.rglob("dist")) and not list(out.rglob("*autograder_*.zip"))
    assert sorted(p.name for p in (out / "assignments").iterdir()) == ["lab", "practice"]


def test_autograder_zip_contents(release):
    out, _ = release
    with zipfile.ZipFile(out / "autograder" / "lab-autograder.zip") as archive:
        names = set(archive.namelist())
        assert {"setup.sh", "run_autograder", "requirements-grader.txt", "requirements-student.txt", "checks.json",
                "attn_ref/grade/core.py"} <= names
        assert not any(n.startswith("attn_ref/release") for n in names)  # the builder stays home
        assert archive.getinfo("run_autograder").external_attr >> 16 & 0o111
        setup = archive.read("setup.sh").decode()
        student = archive.read("requirements-student.txt").decode()
        grader = archive.read("requirements-grader.txt").decode()
    assert "Miniforge" not in setup and "playwright" not in setup.lower() and "conda" not in setup
    assert "download.pytorch.org/whl/cpu" in setup
    assert re.search(r"^torch<2\.14,>=2\.3$|^torch>=2\.3,<2\.14$", student, re.M), student
    assert "otter-grader[grading]==7.0.0" in student
    assert "torch" not in grader and "otter" not in grader and "jupyter_client" in grader  # the grader never imports torch


def test_gpu_zip_has_cuda_probes_and_cuda_torch(tmp_path):
    from attn_ref.release.build import autograder_zip

    path = autograder_zip(assignment("lab"), "gpu", tmp_path)
    assert path.name == "lab-autograder-gpu.zip"
    with zipfile.ZipFile(path) as archive:
        checks = json.loads(archive.read("checks.json"))
        assert "whl/cpu" not in archive.read("setup.sh").decode()
    cuda = [p["name"] for t in checks["units"] for p in t["probes"] if p["device"] == "cuda"]
    assert len(cuda) == 3 and all(name.startswith("on CUDA") for name in cuda)


def _all_text(nb) -> str:
    return json.dumps(nb)


def test_student_notebook_has_no_solution_and_no_hidden_check(release):
    out, _ = release
    for name, units in (("practice", assignment("practice").units), ("lab", assignment("lab").units)):
        nb = nbformat.read(str(out / "assignments" / name / f"{name}.ipynb"), as_version=4)
        text = _all_text(nb)
        assert "BEGIN SOLUTION" not in text and "# SOLUTION" not in text
        for unit in units:
            solution = unit.solution if name == "practice" else unit.starter.split("# BEGIN SOLUTION")[1]
            for line in solution.splitlines():
                line = line.strip()
                if len(line) > 12 and not line.startswith("#"):
                    assert line not in text, f"{name}: solution line {line!r} leaked into the student notebook"
        tests = nb.metadata["otter"]["tests"]
        assert tests and not any("hidden=True" in src for src in tests.values())
        assert all(cell.get("outputs", []) == [] for cell in nb.cells if cell.cell_type == "code")
    practice_text = _all_text(nbformat.read(str(out / "assignments/practice/practice.ipynb"), as_version=4))
    for value in (ANSWERS["q11_bytes"], ANSWERS["q2_bytes"], "0.0164", "0.00572"):
        assert str(value) not in practice_text


def test_solution_notebook_answer_key_equals_reference(release):
    """Run the solution's answer cells: every variable equals the answer key of its question folder."""
    out, _ = release
    nb = nbformat.read(str(out / "solutions/practice/practice.ipynb"), as_version=4)
    namespace = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and "otter" not in cell.source and "grader." not in cell.source:
            exec(cell.source, namespace)
    for name, value in ANSWERS.items():
        assert namespace[name] == value, name
    assert "hidden=True" not in _all_text(nb)


def test_solution_notebooks_are_executed_with_plots(release):
    out, _ = release
    nb = nbformat.read(str(out / "solutions/lab/lab.ipynb"), as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 3  # heatmap, cost, gradient
    checks = [o for c in nb.cells if c.cell_type == "code" and "grader.check" in c.source for o in c.outputs]
    assert len(checks) == 8 and all("All test cases passed" in str(o.get("data", "")) for o in checks)


def test_lab_notebook_has_signatures_docstrings_and_examples(release):
    out, _ = release
    nb = nbformat.read(str(out / "assignments/lab/lab.ipynb"), as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for task in assignment("lab").units:
        assert f"def {task.function}(" in code
        assert task.example.splitlines()[1] in markdown
    assert "torch.nn.functional.scaled_dot_product_attention" in markdown  # the ban is stated


def test_practice_flags_the_0_9_pow_39_slip_without_the_answer(release):
    out, _ = release
    nb = nbformat.read(str(out / "assignments/practice/practice.ipynb"), as_version=4)
    q8 = next(c.source for c in nb.cells if "## q8" in c.source)
    assert "Check the note's arithmetic" in q8 and "a slip" in q8  # the note's 0.017 is named as a slip
    assert "0.016" not in q8


def _without_timings(nb):
    for cell in nb.cells:
        if TIMING_TAG in cell.get("metadata", {}).get("tags", []):
            cell.outputs = []
    return nb


def test_builds_are_deterministic(release, tmp_path):
    out, _ = release
    build(tmp_path, COURSE)
    for name in ("practice", "lab"):
        student = f"assignments/{name}/{name}.ipynb"
        assert (out / student).read_bytes() == (tmp_path / student).read_bytes()
        zip_name = f"autograder/{name}-autograder.zip"
        assert (out / zip_name).read_bytes() == (tmp_path / zip_name).read_bytes()
        solution = f"solutions/{name}/{name}.ipynb"
        first, second = (_without_timings(nbformat.read(str(d / solution), as_version=4)) for d in (out, tmp_path))
        assert first == second


def test_pdf_flag_reaches_the_export_cell():
    assert "pdf: false" in master(assignment("practice")).cells[0].source
    assert "pdf: true" in master(assignment("practice"), pdf=True).cells[0].source


def test_cli_rejects_bad_arguments(capsys):
    from attn_ref.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["grade"])
    assert exit_info.value.code == 2
    assert main(["build", "--only", "nope", "--out", "/nonexistent-attn-ref"]) == 2
    assert "no assignment 'nope'" in capsys.readouterr().err and not Path("/nonexistent-attn-ref").exists()
