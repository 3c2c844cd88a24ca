"""attn-ref build: what an instructor gets, and that two builds of the same sources agree."""

import argparse
import json
import re
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import REPO
from course_units import ANSWERS, COURSE, assignment

from attn_ref.release.build import build
from attn_ref.release.locks import locked
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
    assert student == locked("student") and grader == locked("grader")  # locks/*.txt, as they are
    assert re.search(r"^torch==2\.13\.0$", student, re.M), student  # the lock, exactly: no range left
    assert re.search(r"^otter-grader==7\.0\.0$", student, re.M)
    assert not re.search(r"^(nvidia|cuda|triton)", student, re.M)  # torch's CUDA stack: torch's own pins, on GPU runners
    assert "torch" not in grader and "otter" not in grader and "jupyter-client==" in grader  # the grader never imports torch


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
        module = out / f"assignments/{name}/export_written.py"  # practice's: beside a notebook with written parts
        assert not module.exists() or module.read_bytes() == (tmp_path / module.relative_to(out)).read_bytes()
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


def test_each_sides_errors_are_caught_once_at_the_command_line(capsys, tmp_path):
    """A grader error (a file that is not an autograder) and a release error (a course without a registry) each print
    one line, `attn-ref VERB: message`, with no traceback."""
    from attn_ref.cli import main

    (tmp_path / "s.ipynb").write_text("{}")
    assert main(["grade", str(tmp_path / "s.ipynb"), "--autograder", str(tmp_path / "none.zip")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attn-ref grade: ") and "no such autograder" in err and "Traceback" not in err
    assert main(["answers", "--course", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("attn-ref answers: ") and "registry.py: missing" in err and err.count("\n") == 1


def test_a_registry_from_an_older_version_is_told_what_to_change(capsys, tmp_path):
    """`Entry(..., kind=...)` (removed) is one line naming the file, its line and what to delete, not a TypeError."""
    from attn_ref.cli import main

    (tmp_path / "registry.py").write_text('from attn_ref.release.course import Entry\n\n'
                                          'ASSIGNMENTS = (Entry("lab", "Lab", "lab", kind="functions"),)\n')
    assert main(["answers", "--course", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"attn-ref answers: {tmp_path / 'registry.py'}, line 3: ") and "delete `kind=...`" in err
    assert "TypeError" not in err and err.count("\n") == 1


def test_version(capsys):
    from attn_ref import __version__
    from attn_ref.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"attn-ref {__version__}\n"


# ---- what the TA and the students read ---------------------------------------------------------------

def test_every_verb_has_a_description_and_an_example(capsys):
    """`attn-ref VERB --help` says what the verb does and shows how it is typed, for every verb."""
    from attn_ref.cli import build_parser, main

    (verbs,) = [a.choices for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    assert {"answers", "build", "check", "grade", "probe-mutants", "probe-evidence", "requirements"} <= set(verbs)
    for verb in verbs:
        with pytest.raises(SystemExit) as exit_info:
            main([verb, "--help"])
        assert exit_info.value.code == 0
        text = capsys.readouterr().out
        description = text.split("\n\n")[1]  # argparse: usage, then the description, then the arguments
        assert not description.lstrip().startswith(("positional arguments", "options")), f"{verb}: no description"
        examples = re.search(r"^examples?:\n(.*)", text, re.M | re.S)
        assert examples and f"attn-ref {verb} " in examples.group(1), f"{verb}: no example line"


def _tolerance_rows(markdown: str) -> dict[str, tuple[str, str]]:
    """The tolerance table's rows: {"float64, CPU": ("1e-5", "1e-5"), ...}."""
    start = markdown.index("| probe dtype and device | rtol |")
    rows = {}
    for line in markdown[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = (cells[1], cells[2])
    return rows


def test_the_lab_states_its_tolerances_briefly_up_front_and_in_full_at_the_end(release):
    """The intro says it in two sentences; the last cell holds the details, with the table of the lab's contract
    (docs/contract.md), which is the grader's (scoring.TOLERANCES)."""
    from attn_ref.grade.scoring.comparators import SCALAR_RTOL, TOLERANCES

    out, _ = release
    nb = nbformat.read(str(out / "assignments/lab/lab.ipynb"), as_version=4)
    intro = nb.cells[1].source
    paragraph = intro[intro.index("**Tolerances.**"):].split("\n\n")[0]
    assert len(re.findall(r"[.!?](?:\s|$)", paragraph.replace("**Tolerances.**", ""))) == 2, paragraph
    assert all(number in paragraph for number in ("1e-5", "1e-4", "5e-4"))
    last = nb.cells[-1]
    assert last.cell_type == "markdown" and last.source.startswith("## Tolerances and special probes, in detail")
    assert "Tolerances and special probes, in detail" in paragraph
    readme = (REPO / "docs" / "contract.md").read_text()
    assert _tolerance_rows(last.source) == _tolerance_rows(readme)
    for label, (dtype, device) in (("float64, CPU", ("float64", "cpu")), ("float32, CPU", ("float32", "cpu")),
                                   ("float32, CUDA (TF32 off)", ("float32", "cuda"))):
        assert tuple(float(x) for x in _tolerance_rows(readme)[label]) == TOLERANCES[(dtype, device)], label
    assert float(_tolerance_rows(readme)["a scalar (c8)"][0].split()[0]) == SCALAR_RTOL
    solution = nbformat.read(str(out / "solutions/lab/lab.ipynb"), as_version=4)
    assert solution.cells[-1].source == last.source


def test_the_cost_plot_has_readable_ticks_and_its_legends_outside_the_data():
    """The lab's cost cell (course/lab/exploration/2_cost.py), run on the reference: no two tick labels
    overlap, and no legend covers a plot's data area."""
    import math
    import time

    import matplotlib
    import numpy as np
    import torch

    from attn_ref import scaled_dot_product_attention

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figures = []
    namespace = {"np": np, "torch": torch, "math": math, "time": time,
                 "scaled_dot_product_attention": scaled_dot_product_attention}
    source = (COURSE / "lab" / "exploration" / "2_cost.py").read_text()
    show = plt.show
    plt.show = lambda *args, **kwargs: figures.append(plt.gcf())
    try:
        exec(compile(source, "2_cost.py", "exec"), namespace)
    finally:
        plt.show = show
    (figure,) = figures
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    try:
        for axis in figure.axes:
            for ticks in (axis.get_xticklabels(), axis.get_yticklabels()):
                boxes = [t.get_window_extent(renderer) for t in ticks if t.get_visible() and t.get_text()]
                for i, first in enumerate(boxes):
                    assert not any(first.overlaps(second) for second in boxes[i + 1:]), [t.get_text() for t in ticks]
            legend = axis.get_legend()
            assert legend is not None
            assert not legend.get_window_extent(renderer).overlaps(axis.get_window_extent(renderer)), "legend on the data"
            assert figure.bbox.contains(*legend.get_window_extent(renderer).p1), "legend cut off"
    finally:
        plt.close(figure)


def test_the_practice_export_cell_is_one_call_of_the_module_beside_it(release):
    """The student's export cell imports export() from export_written.py, which the build wrote beside the
    notebook (and beside the solution); an assignment without written parts keeps otter's own cell."""
    import ast

    from attn_ref.grade.checks_json import EXPORT_FUNCTION, EXPORT_MODULE

    out, _ = release
    nb = nbformat.read(str(out / "assignments/practice/practice.ipynb"), as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and EXPORT_MODULE in c.source]
    body = ast.parse(cell.source).body
    assert [type(s) for s in body] == [ast.ImportFrom, ast.Expr] and body[0].module == EXPORT_MODULE
    assert ast.unparse(body[1]).startswith(f"{EXPORT_FUNCTION}(grader")
    assert "answers_pdf" not in cell.source and len(cell.source.splitlines()) <= 5
    module = out / "assignments/practice" / f"{EXPORT_MODULE}.py"
    assert module.read_text() == (out / "solutions/practice" / f"{EXPORT_MODULE}.py").read_text()
    compile(module.read_text(), str(module), "exec")
    assert f"def {EXPORT_FUNCTION}(grader" in module.read_text() and "def answers_pdf(" in module.read_text()
    assert not (out / "assignments/lab" / f"{EXPORT_MODULE}.py").exists()
    with zipfile.ZipFile(out / "autograder/practice-autograder.zip") as archive:
        assert not [n for n in archive.namelist() if EXPORT_MODULE in n]  # grading never needs it


def test_the_graded_practice_solution_with_its_export_cell_scores_full(release, grade_notebook):
    """A submission keeps the export cell, and the graded kernel's folder has no export_written.py: the grader
    skips that cell (no cell error); a cell a student added code to runs, fails on the import, and costs
    nothing."""
    from conftest import max_scores, scores

    from attn_ref.grade.checks_json import EXPORT_MODULE
    from attn_ref.grade.session import is_otter_call

    out, _ = release
    student = nbformat.read(str(out / "assignments/practice/practice.ipynb"), as_version=4)
    (export,) = [c for c in student.cells if c.cell_type == "code" and EXPORT_MODULE in c.source]
    assert is_otter_call(export.source)
    zip_path = out / "autograder/practice-autograder.zip"
    for extra, errors in (("", 0), ('print("submitting")\n', 1)):
        nb = nbformat.read(str(out / "solutions/practice/practice.ipynb"), as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell(extra + export.source))
        results = grade_notebook(nb, zip_path, name="practice.ipynb")
        assert scores(results) == max_scores(results) and sum(max_scores(results).values()) > 0
        assert len(results["extra_data"].get("cell_errors", [])) == errors, results["extra_data"].get("cell_errors")
