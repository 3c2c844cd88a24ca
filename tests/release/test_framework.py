"""A framework, not two welded assignments: the course registry and unit folders, `attn-ref check`, staged
builds, checks.json validated where it is read, autograder versions, references from the zip, and a second
course that has nothing to do with attention, built and graded by the unchanged grader."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import REPO, TESTS, max_scores, scores
from course_units import COURSE

from attn_ref.grade import AutograderError, grade, load_autograder
from attn_ref.release.build import BuildError, autograder_zip, build
from attn_ref.release.check import BundledGrader, check_release, evidence_row, mutant_row, public_checks, scoring_stubs
from attn_ref.release.course import CourseError, load_course

GOLDEN = TESTS / "golden"
FIXTURE = TESTS / "fixtures" / "stats_course"


def _cells(nb) -> list:
    return [(c.cell_type, c.source, c.get("metadata", {})) for c in nb.cells]


@pytest.mark.parametrize("name", ["practice", "lab"])
def test_student_notebooks_equal_the_golden_files(release, name):
    """Cell for cell what the release had before assignments became folders. After a deliberate change to
    a prompt or a check, refresh with: cp assignments/<name>/<name>.ipynb tests/golden/ (after make release)."""
    out, _ = release
    built = nbformat.read(str(out / "assignments" / name / f"{name}.ipynb"), as_version=4)
    golden = nbformat.read(str(GOLDEN / f"{name}.ipynb"), as_version=4)
    assert _cells(built) == _cells(golden)
    assert built.metadata == golden.metadata


@pytest.fixture(scope="module")
def stats_release(tmp_path_factory):
    """The second course, built and checked like a release."""
    out = tmp_path_factory.mktemp("stats")
    course = tmp_path_factory.mktemp("stats-course") / "course"
    shutil.copytree(FIXTURE, course)  # the check writes its seed-sweep record into the course: the copy's
    rows = []

    def verify(staged, built):
        rows.extend(check_release(staged, course, [b.autograder for b in built]))
        if not all(r.ok for r in rows):
            raise BuildError("; ".join(f"{r.assignment}: {r.check}: {r.detail}" for r in rows if not r.ok))

    build(out, course, verify=verify)
    return out, rows


def test_a_second_course_builds_passes_check_and_is_graded(stats_release, tmp_path):
    out, rows = stats_release
    assert {r.assignment for r in rows} == {"quiz", "stats"} and all(r.ok for r in rows)
    (mutants,) = [r for r in rows if r.check == "every hidden probe fails a mutant; no stub scores"]
    assert mutants.detail == "2 mutants (2 named by their outputs), 3 derived stubs"  # stubs: zeros, ones, x echoed
    with zipfile.ZipFile(out / "autograder/stats-autograder.zip") as archive:
        assert "references/stats_ref.py" in archive.namelist()  # its own reference travels with it
    versions = (out / "autograder/stats-versions.txt").read_text()  # check's record, moved into place with the zip
    assert "# Gradescope (Ubuntu 22.04, Python 3.10, x86_64)" in versions and "\notter-grader==7.0.0\n" in versions
    assert versions.rstrip().endswith("# differences from the lock: none")
    wrong = nbformat.read(str(out / "solutions/quiz/quiz.ipynb"), as_version=4)
    for cell in wrong.cells:
        if "divides_by =" in cell.source:
            cell.source = cell.source.replace('divides_by = "A"', 'divides_by = "B"')
    nbformat.write(wrong, str(tmp_path / "quiz.ipynb"))
    results = grade(tmp_path / "quiz.ipynb", out / "autograder/quiz-autograder.zip", out_dir=tmp_path)
    assert scores(results) == {"mean": 2, "spread": 1} and max_scores(results)["spread"] == 2
    assert "✗ divides_by" in results["tests"][1]["output"]


def test_a_mixed_assignment_grades_each_unit_by_its_kind(stats_release, tmp_path):
    """stats holds a task and a question: one notebook, one grader, each unit scored by its kind, in the
    layout's order; a wrong function and a wrong answer each lose their own points."""
    out, _ = stats_release
    with zipfile.ZipFile(out / "autograder/stats-autograder.zip") as archive:
        checks = json.loads(archive.read("checks.json"))
    assert [(u["name"], u["kind"]) for u in checks["units"]] == [("zscore", "function"), ("standard", "question")]
    wrong = nbformat.read(str(out / "solutions/stats/stats.ipynb"), as_version=4)
    for cell in wrong.cells:
        cell.source = cell.source.replace("centred**2).mean(", "centred**2).sum(").replace("[-1])", "[-1]) + 1")
    nbformat.write(wrong, str(tmp_path / "stats.ipynb"))
    results = grade(tmp_path / "stats.ipynb", out / "autograder/stats-autograder.zip", out_dir=tmp_path)
    assert [t["name"].split(":")[0] for t in results["tests"]] == ["zscore", "standard"]
    assert scores(results)["standard"] == 0 and "✗ z_of_nine" in results["tests"][1]["output"]
    assert scores(results)["zscore"] < max_scores(results)["zscore"] == 6


def test_a_reference_is_loaded_from_the_zip_never_the_current_folder(stats_release, tmp_path):
    """A TA keeps submissions in the folder they grade from: a stats_ref.py there is never imported."""
    out, _ = stats_release
    (tmp_path / "stats_ref.py").write_text("open('IMPORTED', 'w')\ndef zscore(x, axis=-1):\n    return x * 0\n")
    shutil.copy(out / "solutions/stats/stats.ipynb", tmp_path / "stats.ipynb")
    done = subprocess.run([sys.executable, "-m", "attn_ref", "grade", "stats.ipynb", "--autograder",
                           str(out / "autograder/stats-autograder.zip"), "--out", "graded"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-1500:]
    assert "7 / 7" in done.stdout and not (tmp_path / "IMPORTED").exists()


def test_attn_ref_check_proves_the_release_and_fails_loudly(release, tmp_path):
    out, _ = release
    # a copy of the course, with its seed sweep's record (test_sweep_record.py holds it current): the check writes
    # the record where a key changed, and the repository's is left alone
    checked = tmp_path / "checked-course"
    shutil.copytree(COURSE, checked, ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run([sys.executable, "-m", "attn_ref", "check", "--release", str(out), "--course", str(checked)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:]
    for check in ("the solution scores full", "the blank notebook scores 0", "every public check passes",
                  "every hidden probe fails a mutant; no stub scores", "every task has a probe no placeholder passes",
                  "grading twice gives the same scores", "every line's verdict holds under every seed swept",
                  "the solution scores full under 100 seeds, graded"):
        assert check in done.stdout
    course = tmp_path / "course"
    shutil.copytree(COURSE, course)
    shutil.rmtree(course / "lab" / "c7" / "mutants")  # c7's probes are no longer proven
    lab = load_course(course, "lab")[0]
    only_c7 = dataclasses.replace(lab, units=tuple(u for u in lab.units if u.name == "c7"))  # the rest was proven above
    work = tmp_path / "work"
    work.mkdir()
    row = mutant_row("lab", only_c7, BundledGrader(out / "autograder/lab-autograder.zip", tmp_path),
                      out / "solutions/lab/lab.ipynb", work)
    assert not row.ok and row.check == "every hidden probe fails a mutant; no stub scores"
    assert "c7: T = 7, window = 3" in row.detail


def test_check_fails_a_task_with_no_probe_a_placeholder_fails_with_its_file_named(stats_release, tmp_path):
    """Lines a placeholder passes earn only beside a general case that matched: a task whose probes are all
    degenerate (rows of one entry, whose standard scores are all 0) could never give correct work its points."""
    out, rows = stats_release
    assert [r.ok for r in rows if r.check == "every task has a probe no placeholder passes"] == [True]

    def one_entry(checks: dict) -> None:
        for probe in checks["units"][0]["probes"]:
            probe["args"][0][1]["normal"] = [1, 1]

    broken = _zip_with(out / "autograder/stats-autograder.zip", tmp_path / "degenerate.zip", one_entry)
    row = evidence_row("stats", load_course(FIXTURE, "stats")[0], BundledGrader(broken, tmp_path))
    assert not row.ok and str(FIXTURE.resolve() / "stats" / "zscore" / "task.py") in row.detail
    assert "20 of 20 seeds" in row.detail


def test_a_build_that_fails_its_checks_changes_nothing(stats_release, tmp_path):
    out, _ = stats_release
    release = tmp_path / "release"
    shutil.copytree(out, release)
    before = {p.relative_to(release): p.read_bytes() for p in release.rglob("*") if p.is_file()}
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    (course / "quiz" / "mean" / "solution.py").write_text("sample_mean = 4.5\nsample_size = 8\n")  # disagrees with the key

    seen = []

    def verify(staged, built):
        rows = check_release(staged, course, [b.autograder for b in built])
        seen.extend(rows)
        if not all(r.ok for r in rows):
            raise BuildError("failed")

    with pytest.raises(BuildError):
        build(release, course, verify=verify)
    after = {p.relative_to(release): p.read_bytes() for p in release.rglob("*") if p.is_file()}
    assert after == before and not list(release.glob(".attn-ref-build-*"))
    (key,) = [r for r in seen if r.check == "the solution agrees with every answer key" and r.assignment == "quiz"]
    assert not key.ok and f"{course / 'quiz' / 'mean' / 'solution.py'}: sample_mean = 4.5 (too small, by less than a factor of ten); the key" in key.detail
    assert "mean/question.py computes is" in key.detail


def test_sources_with_mistakes_fail_the_build_with_the_file_named(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    task = course / "stats" / "zscore" / "task.py"
    task.write_text(task.read_text().replace('"stats_ref:zscore"', '"stats_ref:zscroe"'))
    with pytest.raises(CourseError, match="stats_ref:zscroe.*no function zscroe"):
        load_course(course)
    task.write_text(task.read_text().replace('"stats_ref:zscroe"', '"stats_ref:zscore"'))
    (course / "quiz" / "mean" / "task.py").write_text((course / "stats" / "zscore" / "task.py").read_text())
    with pytest.raises(CourseError, match=r"quiz/mean: a unit folder holds question.py .* or task.py .*this one has both"):
        load_course(course)
    (course / "quiz" / "mean" / "task.py").unlink()
    layout = course / "quiz" / "assignment.py"
    kept = layout.read_text()
    layout.write_text(kept.replace('"spread"', '"spread", "median"'))
    with pytest.raises(CourseError, match=r"quiz/median: missing \(assignment.py lists the unit 'median'"):
        load_course(course)
    layout.write_text(kept)
    question = course / "quiz" / "mean" / "question.py"
    question.write_text(question.read_text().replace('"float"', '"real"'))
    with pytest.raises(CourseError, match="question.py.*unknown answer kind 'real'"):
        load_course(course)
    done = subprocess.run([sys.executable, "-m", "attn_ref", "build", "--course", str(course), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "unknown answer kind" in done.stderr and not (tmp_path / "o" / "autograder").exists()


@pytest.mark.parametrize("name", ["total", "Status", "mean_written"])
def test_a_unit_named_as_a_gradebook_column_fails_the_build(tmp_path, name):
    """grades.csv has a column per unit beside its own (name, total, status, ..., a written part's): a unit
    named as one of them would write its score into that column of every student's row."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    quiz = course / "quiz"
    (quiz / "mean").rename(quiz / name)
    question = quiz / name / "question.py"
    question.write_text(question.read_text().replace('name="mean"', f'name="{name}"'))
    (quiz / "assignment.py").write_text((quiz / "assignment.py").read_text().replace('"mean"', f'"{name}"'))
    with pytest.raises(CourseError, match=rf"{name}/question.py.*Question name '{name}': '{name}' (is one of grades.csv's own "
                                          r"columns|ends in '_written').*rename the unit"):
        load_course(course)


def test_checks_json_with_a_unit_named_as_a_gradebook_column_is_refused(release):
    """The reader holds the same rule: a zip not made by this builder cannot name a unit after a column."""
    import json
    import zipfile

    from attn_ref.grade.checks_json import GRADEBOOK_COLUMNS, InvalidChecks, read_checks
    from attn_ref.grade.classroom.gradebook import Gradebook, grades_fields

    out, _ = release
    with zipfile.ZipFile(out / "autograder" / "practice-autograder.zip") as archive:
        data = json.loads(archive.read("checks.json"))
    read_checks(data)
    data["units"][0]["name"] = "grader"
    with pytest.raises(InvalidChecks, match=r"units\[0\].name: 'grader' is one of grades.csv's own columns"):
        read_checks(data)
    data["units"][0]["name"] = "q1"
    book = Gradebook(read_checks(data), [])
    assert book.written_units and set(grades_fields(book)) - set(book.units) - set(book.written_units) == GRADEBOOK_COLUMNS


def test_mutants_with_mistakes_fail_the_build_with_the_file_named(tmp_path):
    """A mutant runs as a cell in place of the student's function: one that does not compile, defines
    another name or names a probe the task lacks would prove nothing, so the build stops at it."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    mutants = course / "stats" / "zscore" / "mutants"
    cases = {"broken.py": ("# mutant: a typo\ndef zscore(x, axis=-1:\n    return x\n", r"broken.py, line 2: .*valid Python"),
             "renamed.py": ("# mutant: another name\ndef z_score(x, axis=-1):\n    return x\n", r"renamed.py: defines no `def zscore"),
             "unknown.py": ("# mutant: x\n# must fail: along axis=7\ndef zscore(x, axis=-1):\n    return x\n",
                            r"unknown.py: '# must fail: along axis=7' names no probe of zscore"),
             "twice.py": ("# mutant: divides by n - 1\ndef zscore(x, axis=-1):\n    return x\n", r"twice.py: another mutant")}
    for name, (source, message) in cases.items():
        (mutants / name).write_text(source)
        with pytest.raises(CourseError, match=message):
            load_course(course)
        (mutants / name).unlink()
    task = course / "stats" / "zscore" / "task.py"
    kept = task.read_text()
    task.write_text(kept + "\nTASK.points / 0\n")  # a runtime error: the file and its line, in one sentence
    with pytest.raises(CourseError, match=r"zscore/task.py, line \d+: (AttributeError|ZeroDivisionError|TypeError)"):
        load_course(course)
    task.write_text(kept)
    reference = course / "stats" / "stats_ref.py"
    kept = reference.read_text()
    reference.write_text("import torch\n" + kept)  # the grader has no torch: this reference could never run there
    with pytest.raises(CourseError, match=r"stats_ref.py, line 1: imports torch, which the grader does not have"):
        load_course(course)
    reference.write_text(kept)
    solution = course / "stats" / "zscore" / "solution.py"
    solution.write_text(solution.read_text().replace("keepdims=True)\n", "keepdims=True\n", 1))
    with pytest.raises(CourseError, match=r"zscore/solution.py, line \d+: .*fix it"):
        load_course(course)


def test_check_fails_a_toothless_mutant_with_its_file_named(stats_release, tmp_path):
    """A "mutant" that is correct, passes the probe its '# must fail:' line names, or raises when its cell
    runs (leaving the solution's function in place), fails the check."""
    out, _ = stats_release
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    mutants = course / "stats" / "zscore" / "mutants"
    correct = (course / "stats" / "zscore" / "solution.py").read_text()
    (mutants / "not_wrong.py").write_text("# mutant: not wrong at all\n" + correct)
    last_axis = mutants / "last_axis.py"
    last_axis.write_text(last_axis.read_text().replace("# must fail: along axis=0", "# must fail: rows of a 4"))
    (mutants / "raises.py").write_text("# mutant: raises when defined\ndef refuse(f):\n    raise RuntimeError('no')\n\n\n"
                                       "@refuse\ndef zscore(x, axis=-1):\n    return x\n")  # the solution's would stay
    assignment = load_course(course, "stats")[0]
    work = tmp_path / "work"
    work.mkdir()
    row = mutant_row("stats", assignment, BundledGrader(out / "autograder/stats-autograder.zip", tmp_path),
                      out / "solutions/stats/stats.ipynb", work)
    assert not row.ok
    assert f"{mutants / 'not_wrong.py'}: passes every hidden probe of zscore" in row.detail
    assert f"{last_axis}: passes 'rows of a 4'" in row.detail
    assert f"{mutants / 'raises.py'}: its cell raised RuntimeError: no" in row.detail
    (mutants / "not_wrong.py").unlink()
    (mutants / "raises.py").unlink()
    last_axis.write_text(last_axis.read_text().replace("# must fail: rows of a 4", "# stub"))  # it is right on rows
    row = mutant_row("stats", load_course(course, "stats")[0], BundledGrader(out / "autograder/stats-autograder.zip",
                      tmp_path), out / "solutions/stats/stats.ipynb", work)
    assert not row.ok and f"{last_axis}: this stub scores 3/6 on zscore, from: rows of a 4 × 6 array" in row.detail


def test_a_derived_stub_that_scores_stops_the_check_naming_the_lines():
    """The derived stubs scored 0 in every release tried (the evidence rule sees to it); the message for
    one that scores names the task's file, the stub and the lines that paid it."""
    assignment = load_course(FIXTURE, "stats")[0]
    verdicts = {"stubs": {"zscore": {"ones": {"score": 2, "max_score": 6, "credited": ["along axis=0"]}}}, "scores": {}}
    (problem,) = scoring_stubs(assignment, verdicts)
    assert problem.startswith(f"{FIXTURE.resolve() / 'stats' / 'zscore' / 'task.py'}: a stub returning ones")
    assert "scores 2/6 on zscore, from: along axis=0" in problem


def _zip_with(source: Path, path: Path, change) -> Path:
    """A copy of an autograder zip whose checks.json went through ``change``."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(path, "w") as new:
        for item in old.infolist():
            data = old.read(item)
            if item.filename == "checks.json":
                checks = json.loads(data)
                change(checks)
                data = json.dumps(checks).encode()
            new.writestr(item, data)
    return path


def _rename_generator(checks: dict) -> None:
    spec = checks["units"][0]["probes"][0]["args"][0][1]
    spec["gaussian"] = spec.pop("normal")


@pytest.mark.parametrize("change, field", [
    (lambda c: c.update(format=99), "format"),
    (lambda c: c.pop("version"), "version"),
    (lambda c: c["units"][0].update(kind="essays"), "units[0].kind"),
    (lambda c: c["units"][1].update(kind="function"), "units[1].function"),
    (lambda c: c["units"][0]["probes"][0].update(checks=["looks_right"]), "unknown comparator 'looks_right'"),
    (_rename_generator, "input generator"),
    (lambda c: c["units"][0].update(builds_on=["later"]), "builds_on"),
    (lambda c: c["units"][0].update(reference="stats_ref"), "reference"),
    (lambda c: c["references"].update(stats_ref="../../etc/passwd"), "references.stats_ref"),
])
def test_an_invalid_checks_file_fails_loudly_before_grading(stats_release, tmp_path, change, field):
    out, _ = stats_release
    broken = _zip_with(out / "autograder/stats-autograder.zip", tmp_path / "broken.zip", change)
    with pytest.raises(AutograderError, match="checks.json is not valid") as info:
        load_autograder(broken)
    assert field in str(info.value)


def test_the_version_covers_what_decides_a_score_and_the_seed_only_the_probes(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    stats = load_course(course, "stats")[0]
    first = load_autograder(autograder_zip(stats, "cpu", tmp_path / "a")).checks
    reference = course / "stats" / "stats_ref.py"
    reference.write_text(reference.read_text() + "\n# a fix in the reference: new bytes, same probes\n")
    second = load_autograder(autograder_zip(load_course(course, "stats")[0], "cpu", tmp_path / "b")).checks
    assert first.version != second.version and first.seed_key == second.seed_key


def test_a_regrade_with_a_changed_zip_regrades(stats_release, tmp_path):
    from attn_ref.grade.classroom.batch import grade_batch

    out, _ = stats_release
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(out / "solutions/stats/stats.ipynb", folder / "ada.ipynb")
    first = grade_batch(folder, out / "autograder/stats-autograder.zip", tmp_path / "graded", jobs=1, progress=False)
    again = grade_batch(folder, out / "autograder/stats-autograder.zip", tmp_path / "graded", jobs=1, progress=False)
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    (course / "stats" / "stats_ref.py").write_text((FIXTURE / "stats" / "stats_ref.py").read_text() + "\n# fixed\n")
    changed = autograder_zip(load_course(course, "stats")[0], "cpu", tmp_path / "new")
    third = grade_batch(folder, changed, tmp_path / "graded", jobs=1, progress=False)
    assert (first.graded, again.graded, third.graded) == (1, 0, 1)


def test_the_code_passes_its_linter():
    """ruff, with the project's configuration (target Python 3.10: Gradescope's Ubuntu 22.04 image)."""
    root = REPO
    done = subprocess.run([sys.executable, "-m", "ruff", "check", str(root)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]


def test_a_torch_tasks_worked_example_prints_as_torch_prints_the_students_tensor():
    lab = load_course(COURSE, "lab")[0]
    examples = {t.name: t.example for t in lab.tasks if t.framework == "torch" and "[[" in t.example}
    assert {"c3", "c4", "c5", "c6", "c7"} <= set(examples)
    for name, example in examples.items():
        assert "tensor([[" in example and not re.search(r"\[\[\d+ \d", example), (name, example)
    assert "dtype=torch.int32" in examples["c4"] and "tensor(9)" in examples["c7"]


def test_a_solution_that_raises_or_fails_its_public_check_is_named_in_one_sentence(tmp_path):
    """The build runs the solution notebook: a cell that raises stops it with the file and line (the
    traceback only with --verbose); a public check that fails on the solution names its test and assertion."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    solution = course / "stats" / "zscore" / "solution.py"
    kept = solution.read_text()
    solution.write_text(kept + "\n\nzscore(None)\n")
    done = subprocess.run([sys.executable, "-m", "attn_ref", "build", "--course", str(course), "--only", "stats",
                           "--out", str(tmp_path / "o"), "--no-check"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"attn-ref build: {solution.resolve()}, line 10: AttributeError: 'NoneType' object has no attribute 'mean' "
        "(raised while the build ran the solution notebook; fix that file, or run with --verbose for the traceback)"]
    solution.write_text(kept)
    checks = course / "stats" / "zscore" / "public_checks.py"
    checks.write_text(checks.read_text().replace("atol=1e-5)", "atol=1e-5) and False"))
    out = tmp_path / "o"
    build(out, course, only="stats")
    (failing,) = public_checks(out / "solutions" / "stats" / "stats.ipynb", load_course(course, "stats")[0])
    assert failing.startswith(f"{checks.resolve()}: test_zscore_example fails on the solution:")
    assert "AssertionError: zscore([1, 2, 3]) should match the example" in failing
