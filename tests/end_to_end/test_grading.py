"""One-way grading, end to end: the solution scores full, the blank 0, each mistake costs its question."""

import json
import shutil
import zipfile

import nbformat
import pytest
from conftest import edit_notebook, max_scores, scores
from course_units import COURSE, N_SETS, WRONG_PRACTICE, bug_set
from gradescope_layout import autograder_layout, run_autograder, zip_of


@pytest.mark.parametrize("name", ["practice", "lab"])
def test_solution_full_blank_zero(release, grade_notebook, name):
    out, _ = release
    solution = nbformat.read(str(out / f"solutions/{name}/{name}.ipynb"), as_version=4)
    results = grade_notebook(solution, zip_of(out, name))
    assert results["extra_data"]["status"] == "ok"
    assert scores(results) == max_scores(results), json.dumps(results["tests"], indent=1)
    assert results["score"] == {"practice": 23, "lab": 80}[name]
    blank = nbformat.read(str(out / f"assignments/{name}/{name}.ipynb"), as_version=4)
    results = grade_notebook(blank, zip_of(out, name), "blank.ipynb")
    assert results["score"] == 0, json.dumps(results["tests"], indent=1)
    graded = [t for t in results["tests"] if "written" not in t.get("tags", []) and t["max_score"] > 0]
    assert graded and all("✗" in t["output"] for t in graded)  # (the 0-point line of whose numbers aside)
    written = [t for t in results["tests"] if "written" in t.get("tags", [])]
    assert all(t["max_score"] == 0 and t["visibility"] == "hidden" for t in written)
    assert (len(written) > 0) == (name == "practice")  # practice has written parts, the lab none
    # why each failed line has no mistake to name, recorded as a value: the lab's functions returned None (a stand-in
    # was sent for c2, c5, c6: nothing the kernel says after that reaches results, withheld.py); practice's answers
    # are still `...`
    causes = {}
    for line in results["extra_data"].get("probes", []) + results["extra_data"].get("answers", []):
        causes.setdefault(line.get("cause"), set()).add(line["task"])
    expected = ({"not_written": {"c1", "c3", "c4", "c7", "c8"}, "stand_in": {"c2", "c5", "c6"}} if name == "lab"
                else {"not_written": {f"q{i}" for i in range(1, 12)}})
    assert causes == expected, causes


def test_a_cell_that_raises_before_its_function_is_defined_is_counted_as_a_cell_error(release, grade_notebook):
    """c7's cell raises before `def`: its lines record why no mistake can be named (a cell error), as a value, so
    the class's report does not list them as candidates for a new mutant."""
    out, _ = release
    solution = nbformat.read(str(out / "solutions/lab/lab.ipynb"), as_version=4)
    cell = next(c for c in solution.cells if c.cell_type == "code" and "def sliding_window_mask" in c.source)
    cell.source = "raise RuntimeError('not yet')\n" + cell.source
    results = grade_notebook(solution, zip_of(out, "lab"))
    c7 = [p for p in results["extra_data"]["probes"] if p["task"] == "c7"]
    assert c7 and all(p["passed"] is False and p.get("cause") == "cell_error" for p in c7), c7


def test_a_grader_whose_temporary_folder_is_in_dev_shm_grades_as_from_tmp(release, grade_notebook, monkeypatch):
    """TMPDIR=/dev/shm (the calls' files in memory, docs/tas.md): the kernel's folders are bound after the
    sandbox's own /dev and /dev/shm, which would otherwise hide them (bubblewrap could not chdir)."""
    import tempfile

    out, _ = release
    monkeypatch.setenv("TMPDIR", "/dev/shm")
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    solution = nbformat.read(str(out / "solutions/lab/lab.ipynb"), as_version=4)
    results = grade_notebook(solution, zip_of(out, "lab"))
    assert results["extra_data"]["status"] == "ok", results["extra_data"]
    assert scores(results) == max_scores(results), json.dumps(results["tests"], indent=1)


# One wrong variable in every question; each question loses exactly that variable's points.


def test_one_wrong_answer_per_question_loses_exactly_its_points(release, grade_notebook):
    out, _ = release
    replace = {marker: source for marker, (source, _, _) in WRONG_PRACTICE.items()}
    nb = edit_notebook(out / "solutions/practice/practice.ipynb", replace)
    results = grade_notebook(nb, zip_of(out, "practice"))
    got, full = scores(results), max_scores(results)
    for marker, (_, variable, points) in WRONG_PRACTICE.items():
        question = variable.split("_")[0]
        assert got[question] == full[question] - points, (question, got[question])
        output = next(t["output"] for t in results["tests"] if t["name"].startswith(question + ":"))
        assert f"✗ {variable}" in output
    assert results["score"] == 23 - len(WRONG_PRACTICE)
    q8 = next(t["output"] for t in results["tests"] if t["name"].startswith("q8:"))
    assert "the note's printed 0.017, which is a slip" in q8  # a known mistake, named
    text = json.dumps(results)  # no expected value leaks into what students see
    for secret in ("0.0164", "0.01642", "67.108864", "77309411328", "38654705664"):
        assert secret not in text


def test_buggy_implementations_lose_points_on_their_task(release, tmp_path):
    """Every set of bugs (the k-th mutant of each task) graded as a TA grades a class: one batch, its kernels
    from the kernel image, on every core. One test, not one per set: the suite's workers (pytest-xdist) would
    each grade the class again for a fixture they share."""
    from attn_ref.grade.classroom.batch import grade_batch

    out, _ = release
    folder = tmp_path / "bug-sets"
    folder.mkdir()
    for k in range(N_SETS):
        nb = edit_notebook(out / "solutions/lab/lab.ipynb", {marker: source for _, marker, source, _ in bug_set(k).values()})
        nbformat.write(nb, str(folder / f"bugs_{k:02d}.ipynb"))
    grade_batch(folder, zip_of(out, "lab"), tmp_path / "graded", progress=False)
    problems = []
    for k in range(N_SETS):
        results = json.loads((tmp_path / "graded" / "results" / f"bugs_{k:02d}.json").read_text())
        if results["extra_data"]["status"] != "ok":
            problems.append(f"set {k}: {results['extra_data']['status']}")
            continue
        got, full = scores(results), max_scores(results)
        outputs = {t["name"].split(":")[0]: t["output"] for t in results["tests"]}
        for task, (label, _, _, probe) in bug_set(k).items():
            failed = [line for line in outputs[task].splitlines() if line.startswith("✗")]
            if got[task] >= full[task]:
                problems.append(f"set {k}, {task} ({label}) kept full marks:\n{outputs[task]}")
            elif not any(probe in line for line in failed):
                problems.append(f"set {k}, {task} ({label}): expected a failed '{probe}' probe:\n{outputs[task]}")
    assert not problems, "\n".join(problems)


def test_a_failed_probe_that_matches_a_mutant_names_the_mistake(release, grade_notebook):
    """The student's outputs equal a declared mutant's on the probe's inputs (run outside the kernel): the
    line says which mistake that is, in the mutant's words, and the results record it per probe."""
    out, _ = release
    nb = edit_notebook(out / "solutions/lab/lab.ipynb", {
        "def scaled_dot_product_attention(": (COURSE / "lab/c3/mutants/scales_by_d_instead_of_sqrt_d.py").read_text(),
        "def rnn_gradient_norm(": (COURSE / "lab/c8/mutants/the_signed_gradient.py").read_text()})
    results = grade_notebook(nb, zip_of(out, "lab"))
    outputs = {t["name"].split(":")[0]: t["output"] for t in results["tests"]}
    c3 = [line for line in outputs["c3"].splitlines() if line.startswith("✗ no mask")]
    assert c3 and c3[0].endswith("this matches a known mistake: scales by d instead of sqrt(d)")
    (c8,) = [line for line in outputs["c8"].splitlines() if line.startswith("✗")]
    assert "a negative factor" in c8 and "right but for its sign" in c8
    assert c8.endswith("this matches a known mistake: the signed gradient, without the absolute value")
    named = {(p["task"], p["mistake"]) for p in results["extra_data"]["probes"] if "mistake" in p}
    assert ("c3", "scales by d instead of sqrt(d)") in named and ("c8", "the signed gradient, without the absolute value") in named
    assert all(p.get("mistake") is None for p in results["extra_data"]["probes"] if p["passed"])


FLOAT16_GRADIENT = """
def rnn_gradient_norm(T, factor):
    h1 = torch.tensor(1.0, dtype=torch.float16, requires_grad=True)
    h = h1
    for t in range(2, T + 1):
        h = factor * h + 0.1 * t
    (g,) = torch.autograd.grad(h, h1)
    return abs(g.item())
"""


def test_a_match_the_tasks_other_lines_contradict_is_not_told(release, grade_notebook):
    """In float16, 0.5^39 underflows to 0 on one line, as a detached state's gradient does on every line; the
    other lines return other values where the detaching mutant returns 0 again: no name, the line's hint stays."""
    out, _ = release
    nb = edit_notebook(out / "solutions/lab/lab.ipynb", {"def rnn_gradient_norm(": FLOAT16_GRADIENT})
    results = grade_notebook(nb, zip_of(out, "lab"))
    c8 = next(t["output"] for t in results["tests"] if t["name"].startswith("c8:"))
    (zero,) = [line for line in c8.splitlines() if line.startswith("✗ T = 40")]
    assert "norm is 0" in zero and "known mistake" not in zero
    assert "known mistake" not in c8
    assert not [p for p in results["extra_data"]["probes"] if p["task"] == "c8" and "mistake" in p]


@pytest.mark.parametrize("name", ["practice", "lab"])
def test_run_autograder_in_a_gradescope_layout(release, tmp_path, name):
    """The zip's own run_autograder, with /autograder simulated and this environment as setup.sh's."""
    out, _ = release
    root = autograder_layout(tmp_path, zip_of(out, name))
    shutil.copy(out / f"solutions/{name}/{name}.ipynb", root / "submission" / f"{name}.ipynb")
    results = run_autograder(root)
    assert results["score"] == {"practice": 23, "lab": 80}[name]
    assert {"tests", "execution_time", "extra_data", "output"} <= set(results)
    assert results["extra_data"]["autograder_version"]
    for test in results["tests"]:
        assert {"name", "score", "max_score", "output", "visibility"} <= set(test)


def test_run_autograder_grades_an_export_zip_and_ignores_otter_log(release, tmp_path):
    """grader.export() makes a zip with the notebook; a crafted .OTTER_LOG beside it is never read."""
    out, _ = release
    root = autograder_layout(tmp_path, zip_of(out, "practice"))
    export = root / "submission" / "practice_2026_11_29T10_00_00.zip"
    with zipfile.ZipFile(export, "w") as archive:
        archive.write(out / "assignments/practice/practice.ipynb", "practice.ipynb")  # blank answers
        archive.writestr(".OTTER_LOG", b"\x80\x04 not a pickle the grader will ever load")
    (root / "submission" / ".OTTER_LOG").write_bytes(b"\x80\x04crafted")
    results = run_autograder(root)
    assert results["score"] == 0 and results["extra_data"]["status"] == "ok"


@pytest.mark.parametrize(
    "setup, reason",
    [
        (lambda d: (d / "a.ipynb").write_text("{not json"), "not a readable Jupyter notebook"),
        (lambda d: None, "no notebook"),
        (lambda d: [(d / f"{n}.ipynb").write_text("{}") for n in ("a", "b")], "several notebooks"),
    ],
)
def test_unreadable_submissions_score_zero_with_a_reason(release, tmp_path, setup, reason):
    from attn_ref.grade import grade

    out, _ = release
    folder = tmp_path / "submission"
    folder.mkdir()
    setup(folder)
    results = grade(folder, zip_of(out, "practice"), out_dir=tmp_path)
    assert results["score"] == 0 and reason in results["output"]
    assert results["extra_data"]["status"].startswith("error:")
    assert json.loads((tmp_path / "results" / "submission.json").read_text()) == results


def test_wrong_assignment_name_and_other_kernel(release, tmp_path):
    from attn_ref.grade import grade

    out, _ = release
    nb = nbformat.read(str(out / "solutions/practice/practice.ipynb"), as_version=4)
    nb.metadata["otter"]["assignment_name"] = "lab"
    nbformat.write(nb, str(tmp_path / "renamed.ipynb"))
    results = grade(tmp_path / "renamed.ipynb", zip_of(out, "practice"), out_dir=tmp_path)
    assert results["score"] == 0 and "for the assignment 'lab'" in results["output"]

    nb.metadata["otter"]["assignment_name"] = "practice"
    nb.metadata["kernelspec"]["name"] = "conda-env-week3-py"
    nbformat.write(nb, str(tmp_path / "kernel.ipynb"))
    results = grade(tmp_path / "kernel.ipynb", zip_of(out, "practice"), out_dir=tmp_path)
    assert results["score"] == 23
    assert any("conda-env-week3-py" in w for w in results["extra_data"]["warnings"])


def test_bad_autograder_is_refused_before_grading(tmp_path):
    from attn_ref.grade import AutograderError, load_autograder

    (tmp_path / "notazip.zip").write_text("hello")
    with pytest.raises(AutograderError, match="not a zip"):
        load_autograder(tmp_path / "notazip.zip")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("run_autograder", "")
    with pytest.raises(AutograderError, match="checks.json"):
        load_autograder(tmp_path / "other.zip")
    with pytest.raises(AutograderError, match="no such autograder"):
        load_autograder(tmp_path / "missing.zip")


def test_an_autograder_zip_is_read_and_unpacked_within_bounds(tmp_path):
    """A few hundred kilobytes of zip that inflate to half a gigabyte: a file of it is read up to its bound, and
    the zip is unpacked (as a cluster worker unpacks its grader) up to the whole zip's bound, then refused."""
    from attn_ref.grade import AutograderError, load_autograder
    from attn_ref.grade.scoring import autograder

    zeros = bytes(1 << 20)
    with zipfile.ZipFile(tmp_path / "bomb.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("checks.json", "w", force_zip64=True) as member:
            for _ in range((autograder.MAX_MEMBER >> 20) + 1):
                member.write(zeros)
        for i in range(autograder.MAX_UNPACKED // autograder.MAX_MEMBER):
            with archive.open(f"part{i}.bin", "w") as member:
                for _ in range((autograder.MAX_MEMBER >> 20) - 1):
                    member.write(zeros)
    assert (tmp_path / "bomb.zip").stat().st_size < 2 << 20
    with pytest.raises(AutograderError, match="checks.json inflates past 64 MB"):
        load_autograder(tmp_path / "bomb.zip")
    with pytest.raises(AutograderError, match="inflates past 256 MB"):
        autograder.unpack(tmp_path / "bomb.zip", tmp_path / "out")
    written = sum(f.stat().st_size for f in (tmp_path / "out").rglob("*") if f.is_file())
    assert written <= autograder.MAX_UNPACKED
    with zipfile.ZipFile(tmp_path / "escapes.zip", "w") as archive:
        archive.writestr("../outside.txt", "x")
    with pytest.raises(AutograderError, match="outside its folder"):
        autograder.unpack(tmp_path / "escapes.zip", tmp_path / "out2")
    assert not (tmp_path / "outside.txt").exists()


def test_regrading_the_same_submission_gives_the_same_seed_and_score(release, grade_notebook):
    out, _ = release
    bugs = bug_set(0)
    nb = edit_notebook(out / "solutions/lab/lab.ipynb", {m: s for _, m, s, _ in bugs.values()})
    first, second = grade_notebook(nb, zip_of(out, "lab")), grade_notebook(nb, zip_of(out, "lab"))
    assert first["extra_data"]["seed"] == second["extra_data"]["seed"]
    assert first["tests"] == second["tests"]
