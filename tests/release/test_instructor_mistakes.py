"""Mistakes an instructor makes writing an assignment from the docs, each a class the build refuses before it
writes anything: the message names the file and says what is wrong in plain words, and --out stays as it was.
Each case edits a copy of tests/fixtures/stats_course and stops at loading (no notebook runs), so they are quick."""

from __future__ import annotations

import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import TESTS

from attn_ref.release.build import BuildError, build
from attn_ref.release.check import check_release, passing_on_blank
from attn_ref.release.course import CourseError, load_course

FIXTURE = TESTS / "fixtures" / "stats_course"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _refused(tmp_path: Path, change, message: str, only: str | None = None) -> None:
    """A copy of the fixture with ``change`` made: the build stops with ``message`` (a regular expression)
    and leaves --out without a file, a folder or a staging folder."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    change(course)
    out = tmp_path / "out"
    with pytest.raises(CourseError, match=message):
        build(out, course, only=only)
    assert not out.exists() or not any(out.iterdir())


ZSCORE = Path("stats/zscore")


@pytest.mark.parametrize("points", [0, -2])
def test_a_probe_worth_nothing_or_less_is_refused_with_its_file(tmp_path, points):
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "task.py", 'Probe("along axis=0", 2,', f'Probe("along axis=0", {points},'),
             rf"zscore/task.py, line \d+: .*probe 'along axis=0': points={points}; a line is worth a positive number",
             only="stats")


def test_an_answer_worth_nothing_is_refused_with_its_file(tmp_path):
    _refused(tmp_path, lambda c: _edit(c / "quiz/mean/question.py", "len(DATA), low=1)", "len(DATA), low=1, points=0)"),
             r"quiz/mean/question.py, line \d+: .*answer 'sample_size': points=0", only="quiz")


def test_what_the_grader_would_refuse_is_refused_at_the_build_with_the_units_file(tmp_path):
    """The hidden checks are read back with the grader's own reader and registries before anything is
    written: before, a string key or an unknown comparator failed only when `attn-ref check` opened the
    staged zip ("units[0].answers[1].expected: ..."), with no file named, after every notebook had run."""
    _refused(tmp_path, lambda c: _edit(c / "quiz/mean/question.py", '"int", len(DATA)', '"int", str(len(DATA))'),
             r"quiz/mean/question.py: answer 'sample_size'.expected: expected a value of kind int", only="quiz")


def test_an_unknown_comparator_is_refused_with_the_tasks_file(tmp_path):
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "task.py", '"dtype_kept", "matches_reference"', '"dtype_kept", "matches_refernce"'),
             r"zscore/task.py: probe 'float32 in, float32 out'.checks: unknown comparator 'matches_refernce'", only="stats")


def test_a_probe_input_too_large_to_grade_is_refused(tmp_path):
    """(4096, 4096, 64) passed the one-axis bound and held the grader on 8 GB of float64."""
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "task.py", "normal(4, 6, scale=2.0)", "normal(4096, 4096, 64, scale=2.0)"),
             r"zscore/task.py: probe 'rows of a 4 × 6 array'.args\[0\].normal: 1,073,741,824 elements .* at most 1,048,576",
             only="stats")


def test_two_probes_of_one_name_are_refused(tmp_path):
    """Before, the sweep failed it as a verdict that "changes with the seed": the two lines' verdicts were
    filed under one name."""
    def twice(course: Path) -> None:
        _edit(course / ZSCORE / "task.py", 'Probe("along axis=0"', 'Probe("rows of a 4 × 6 array"')
        _edit(course / ZSCORE / "mutants" / "last_axis.py", "# must fail: along axis=0\n", "")

    _refused(tmp_path, twice, r"zscore/task.py: probes: two probes are named 'rows of a 4 × 6 array'", only="stats")


def test_a_unit_listed_twice_is_refused(tmp_path):
    _refused(tmp_path, lambda c: _edit(c / "quiz/assignment.py", '("mean", "spread")', '("mean", "spread", "mean")'),
             r"quiz/assignment.py: units lists 'mean' twice", only="quiz")


@pytest.mark.parametrize("name", ["stats quiz", "week3/quiz", "quiz_é", "Quiz", ""])
def test_an_assignment_name_that_is_not_a_file_name_word_is_refused(tmp_path, name):
    """Before: a slash failed with a FileNotFoundError traceback, a space built a zip whose mutants' runs all
    failed, and "quiz_é" shipped a release with a non-ASCII folder and zip name."""
    _refused(tmp_path, lambda c: _edit(c / "registry.py", 'name="quiz"', f'name="{name}"'),
             r"registry.py, line 6: Entry\(name=.*lower-case letters, digits and _, starting with a letter")


def test_a_task_whose_function_solution_py_does_not_define_is_refused(tmp_path):
    """Before, the build ran the solution notebook and stopped at the next unit's call, naming that file."""
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "solution.py", "def zscore(", "def z_score("),
             r"zscore/solution.py: defines no top-level `def zscore\(...\)`, the function task.py names .*defines z_score",
             only="stats")


def test_a_reference_that_reads_a_file_beside_it_is_refused_with_its_line(tmp_path):
    """The grader runs references/<file> of the zip alone; before, every grading failed with its traceback."""
    def reads_a_file(course: Path) -> None:
        (course / "stats" / "scale.txt").write_text("1.0\n")
        _edit(course / "stats" / "stats_ref.py", "import numpy as np\n",
              "import numpy as np\nfrom pathlib import Path\n\nSCALE = float((Path(__file__).parent / 'scale.txt').read_text())\n")

    _refused(tmp_path, reads_a_file, r"stats/stats_ref.py, line 6: NameError: .*__file__.*the grader runs this file alone",
             only="stats")


@pytest.mark.parametrize("key, said", [('__import__("numpy").float32(mean(DATA))', "Object of type float32 is not JSON serializable"),
                                       ('float("nan")', "Out of range float values")])
def test_a_key_json_cannot_carry_is_refused_with_the_questions_file(tmp_path, key, said):
    """Before: a NumPy scalar stopped the build with json's traceback; a NaN key was written into checks.json
    and the solution scored 0 on it."""
    _refused(tmp_path, lambda c: _edit(c / "quiz/mean/question.py", '"float", mean(DATA))', f'"float", {key})'),
             rf"quiz/mean/question.py: a value JSON cannot carry \({said}.*float\(...\), int\(...\), .tolist\(\)", only="quiz")


def test_a_solution_that_breaks_in_the_students_environment_or_loses_a_line_is_named(tmp_path):
    """setup.py importing a package the students' lock lacks left the solution full marks (its functions were
    defined before the import raised) and every student a broken first cell; a probe tighter than float32
    allows (or a solution that
    returns float64 for float32) said only "zscore 5/6". Now the row names the cell's error, and the task's file and failing line."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    (course / "stats" / "setup.py").write_text("import numpy as np\nimport rich\n")  # the builder's, not the students'
    _edit(course / ZSCORE / "solution.py", "return centred / np.where", "return np.float64(1.0) * centred / np.where")
    rows = []

    def verify(staged, built):
        rows.extend(check_release(staged, course, [b.autograder for b in built]))
        raise BuildError("checked")

    with pytest.raises(BuildError):
        build(tmp_path / "out", course, only="stats", verify=verify)
    (solution,) = [r for r in rows if r.check == "the solution scores full (bundled grader)"]
    assert not solution.ok
    assert f"{course.resolve() / ZSCORE / 'task.py'}: the solution scores 5/6, failing float32 in, float32 out (0/1)" in solution.detail
    assert "a cell of the solution raised in the students' environment" in solution.detail
    assert "No module named 'rich'" in solution.detail
    assert [r.ok for r in rows if r.check == "no public check passes on the blank starter"] == [True]


def test_a_build_stopped_by_sigterm_leaves_no_staging_folder(tmp_path):
    """A cancelled CI job or `timeout` sends SIGTERM: before, the process ended where it stood and left
    .attn-ref-build-*/ (half a release) in --out."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    out = tmp_path / "out"
    build_process = subprocess.Popen([sys.executable, "-m", "attn_ref", "build", "--course", str(course), "--only", "quiz",
                                      "--out", str(out), "--no-check"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list(out.glob(".attn-ref-build-*/assignments")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(out.glob(".attn-ref-build-*")), "the build never staged anything"
    build_process.send_signal(signal.SIGTERM)
    build_process.wait(timeout=60)
    assert build_process.returncode != 0 and not list(out.glob(".attn-ref-build-*"))


def _processes_naming(text: str) -> set[int]:
    """The pids of the processes whose command line holds ``text``."""
    found = set()
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and text.encode() in (proc / "cmdline").read_bytes():
                found.add(int(proc.name))
        except OSError:
            continue
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except (OSError, IndexError):
        return False


def test_a_build_stopped_by_sigterm_while_it_checks_ends_the_checks_processes_and_folders(tmp_path):
    """SIGTERM while the check sweeps: before, its sweep's processes ran on (ten minutes and more), and its
    staging and check folders stayed. Everything it started ends with it, and both folders go."""
    import tempfile

    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    out = tmp_path / "out"
    checks_before = set(Path(tempfile.gettempdir()).glob("attn-ref-check-stats-*"))
    build_process = subprocess.Popen([sys.executable, "-m", "attn_ref", "build", "--course", str(course), "--only", "stats",
                                      "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline, sweeping = time.monotonic() + 300, set()
    while not sweeping and time.monotonic() < deadline and build_process.poll() is None:
        sweeping = _processes_naming("probe-sweep") & _processes_naming(str(out))
        time.sleep(0.1)
    assert sweeping, "the check never started its sweep"
    started = _processes_naming(str(out)) | _processes_naming("attn-ref-check-stats-")
    build_process.send_signal(signal.SIGTERM)
    build_process.wait(timeout=60)
    time.sleep(1)
    alive = {pid for pid in started if pid != build_process.pid and _running(pid)}
    assert build_process.returncode != 0 and not alive, alive
    assert not list(out.glob(".attn-ref-build-*"))
    assert set(Path(tempfile.gettempdir()).glob("attn-ref-check-stats-*")) <= checks_before


@pytest.mark.parametrize("stray, said", [
    ("quiz/spread/written_solutions.md", r"did you mean written_solution.md\?"),  # before: the written answer left out
    ("stats/zscore/public_check.py", r"did you mean public_checks.py\?"),
    ("stats/zscore/solution_old.py", r"task unit's folder holds task.py, prompt.md"),
    ("stats/zscore/mutants/draft.py~", r"mutants/ holds \*.py \(each a mutant\)"),
])
def test_a_stray_or_misspelt_file_in_a_unit_folder_is_refused(tmp_path, stray, said):
    def add(course: Path) -> None:
        (course / stray).write_text("# mutant: a draft\n")
        if stray.endswith("written_solutions.md"):
            (course / "quiz/spread/written_solution.md").unlink()

    _refused(tmp_path, add, rf"{stray}: the build does not read this file .*{said}")


def test_dotfiles_and_caches_in_a_unit_folder_are_left_alone(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    (course / ZSCORE / ".notes.swp").write_text("x")
    (course / ZSCORE / "__pycache__").mkdir()
    (course / ZSCORE / "mutants" / "__pycache__").mkdir()
    assert [a.name for a in load_course(course)] == ["quiz", "stats"]


def test_a_public_check_that_passes_on_the_blank_starter_is_named(tmp_path):
    """A check that passes before the student writes a line checks nothing and tells them "All test cases
    passed"; before, the build shipped it."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    checks = course / ZSCORE / "public_checks.py"
    checks.write_text(checks.read_text() + "\n\ndef test_zscore_defined(zscore):\n    assert callable(zscore)\n")
    (stats,) = load_course(course, "stats")
    assert passing_on_blank(stats) == [f"{checks.resolve()}: test_zscore_defined passes on the blank starter (zscore returning "
                                       "None): make it call zscore and check what it returns"]
    checks.write_text((FIXTURE / ZSCORE / "public_checks.py").read_text())
    assert passing_on_blank(load_course(course, "stats")[0]) == []


def test_two_units_assigning_one_variable_are_refused(tmp_path):
    """The notebook is one namespace: spread's `sample_size` would replace mean's before mean was graded."""
    def twice(course: Path) -> None:
        _edit(course / "quiz/spread/question.py", 'Answer("divides_by"', 'Answer("sample_size", "int", 8), Answer("divides_by"')
        _edit(course / "quiz/spread/solution.py", 'divides_by = "A"', 'divides_by = "A"\nsample_size = 8')

    _refused(tmp_path, twice, r"quiz/spread/question.py: 'sample_size' is also mean's: the notebook is one namespace", only="quiz")


def test_a_written_answer_without_its_prompt_is_refused(tmp_path):
    """Before, spread shipped with no written part and its written_solution.md left out without a word."""
    _refused(tmp_path, lambda c: (c / "quiz/spread/written.md").unlink(),
             r"quiz/spread/written_solution.md: the answer to a written part, but spread has no written.md", only="quiz")


@pytest.mark.parametrize("letter", ["A", "a", "AB"])
def test_choices_whose_letters_repeat_or_are_not_one_letter_are_refused(tmp_path, letter):
    """Before, two options both lettered A shipped: a student read two As, and either was "right"."""
    _refused(tmp_path, lambda c: _edit(c / "quiz/spread/question.py", '("B", "It divides', f'("{letter}", "It divides'),
             r"quiz/spread/question.py, line \d+: .*divides_by: the choices' letters .*one letter each, no two alike", only="quiz")


def test_a_probe_passing_a_parameter_the_function_does_not_take_is_refused(tmp_path):
    """Before, ("axes", value(0)) shipped: the grader passed it by position, as the axis, by luck."""
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "task.py", '("axis", value(0))', '("axes", value(0))'),
             r"zscore/task.py: probe 'along axis=0' passes 'axes', which zscore\(x, axis\) in solution.py does not take",
             only="stats")


def test_a_probe_passing_required_parameters_out_of_order_is_refused(tmp_path):
    """The grader passes required parameters by position, to the student and the reference alike: a swap is
    graded consistently, on inputs the prompt never meant."""
    def swapped(course: Path) -> None:
        _edit(course / ZSCORE / "solution.py", "def zscore(x, axis=-1):", "def zscore(x, axis):")
        _edit(course / ZSCORE / "task.py", '(("x", normal(5, 3)), ("axis", value(0)))', '(("axis", value(0)), ("x", normal(5, 3)))')

    _refused(tmp_path, swapped, r"zscore/task.py: probe 'along axis=0' passes axis, x in another order than zscore\(x, axis\) "
                                r"takes them", only="stats")


def test_a_solution_without_its_markers_is_refused(tmp_path):
    """Students get solution.py without what lies between the markers: without them, the whole solution.
    Before, `attn-ref check` failed "the blank notebook scores 0" with the detail "standard 0/1"."""
    def unmarked(course: Path) -> None:
        solution = course / ZSCORE / "solution.py"
        solution.write_text(solution.read_text().replace("    # BEGIN SOLUTION\n", "").replace("    # END SOLUTION\n", ""))

    _refused(tmp_path, unmarked, r"zscore/solution.py: no body between `# BEGIN SOLUTION` and `# END SOLUTION`.*the whole "
                                 r"solution", only="stats")


def test_a_source_that_is_not_utf8_is_refused_with_its_line(tmp_path):
    """Before: a UnicodeDecodeError traceback, no file named."""
    _refused(tmp_path, lambda c: (c / ZSCORE / "prompt.md").write_bytes("Write it.\n\u00c9cart-type.\n".encode("latin-1")),
             r"zscore/prompt.md, line 2: not UTF-8 text \(byte 0xc9\): save it as UTF-8", only="stats")


def test_an_empty_prompt_is_refused(tmp_path):
    """Before, a task with an empty prompt.md shipped: a heading, then the worked example."""
    _refused(tmp_path, lambda c: (c / ZSCORE / "prompt.md").write_text("\n"), r"zscore/prompt.md: empty: it becomes a cell",
             only="stats")


@pytest.mark.parametrize("mark, meant", [("# Must fail: along axis=0", "# must fail:"), ("# must  fail: along axis=0", "# must fail:"),
                                         ("# its error name it", "# its error names it"), ("# Stub", "# stub")])
def test_a_misspelt_mutant_mark_is_refused(tmp_path, mark, meant):
    """Before, "# Must fail: along axis=0" was a plain comment: the probe it named was no longer held to it."""
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "mutants/last_axis.py", "# must fail: along axis=0", mark),
             rf"last_axis.py: '{re.escape(mark)}' is nearly '{meant}', which is read only as written", only="stats")


def test_a_plain_leading_comment_in_a_mutant_is_left_alone(tmp_path):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    _edit(course / ZSCORE / "mutants/last_axis.py", "# must fail: along axis=0\n", "# must fail: along axis=0\n# the classic slip: axis ignored\n")
    assert [a.name for a in load_course(course)] == ["quiz", "stats"]


@pytest.mark.parametrize("returned, said", [
    (".tolist()", r"returned 1 value\(s\) \(list\) on the inputs of zscore's probe 'rows of a 4 × 6 array'"),
    (" + 1 // (x.ndim - 2)", r"raised ZeroDivisionError: integer division or modulo by zero, on the inputs of zscore's probe 'rows of a 4 × 6 array'"),
])
def test_a_reference_that_returns_what_the_grader_cannot_compare_is_refused(tmp_path, returned, said):
    """The reference is called on one draw of each probe's inputs before anything is written; before, a list
    failed every grading with a TypeError deep in a comparator, with no file named."""
    _refused(tmp_path, lambda c: _edit(c / "stats/stats_ref.py", "return centred / np.where(std > 0, std, 1.0)",
                                       f"return (centred / np.where(std > 0, std, 1.0)){returned}"),
             rf"stats/stats_ref.py: the reference stats_ref:zscore {said}", only="stats")


def test_a_task_declaring_more_outputs_than_its_reference_returns_is_refused(tmp_path):
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "task.py", 'reference="stats_ref:zscore",', 'reference="stats_ref:zscore", outputs=("z", "mean"),'),
             r"stats/stats_ref.py: the reference stats_ref:zscore returned 1 value\(s\) on the inputs of zscore's probe "
             r"'rows of a 4 × 6 array'; the task has outputs=\('z', 'mean'\)", only="stats")


def test_a_reference_writing_into_its_mask_leaves_the_students_inputs_alone():
    """A reference that fills its mask in place (`mask |= ...`) was given the very array the student is given
    next: the student's call, and the comparators, saw the reference's writing."""
    import numpy as np

    from attn_ref.grade.scoring.inputs import Input, reference_outputs

    mask = np.array([[True, False], [False, True]])
    args = [Input("x", "array", np.ones((2, 2)), False, False), Input("mask", "array", mask, False, False)]

    def greedy(x, mask):
        mask[:] = True
        x[:] = 0
        return x

    reference_outputs(greedy, args)
    assert mask.tolist() == [[True, False], [False, True]] and args[0].data.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_units_written_as_one_string_are_refused(tmp_path):
    """("mean") is a string in brackets: before, the build looked for units 'm', 'e', 'a' and 'n'."""
    _refused(tmp_path, lambda c: _edit(c / "quiz/assignment.py", '("mean", "spread")', '("mean")'),
             r"quiz/assignment.py, line \d+: Layout\(units='mean'\): expected a tuple of names; .*write a comma after it",
             only="quiz")


@pytest.mark.parametrize("file, old", [("registry.py", 'title="A statistics quiz"'), ("quiz/mean/question.py", 'title="The mean"')])
def test_a_title_too_long_for_checks_json_is_refused_where_it_is_written(tmp_path, file, old):
    """Before: "title: expected a string" from `attn-ref check`, after every notebook ran."""
    _refused(tmp_path, lambda c: _edit(c / file, old, f'title="{"x" * 201}"'),
             rf"{file}(, line \d+)?: .*(1 to 200 characters|title: expected a string of at most 200 characters)")


@pytest.mark.parametrize("character", ["\x00", "\x1b", "\x0c"])
def test_a_control_character_in_a_prompt_is_refused_with_its_line(tmp_path, character):
    """Before, a NUL pasted into prompt.md shipped in the notebook."""
    _refused(tmp_path, lambda c: (c / ZSCORE / "prompt.md").write_text(f"Write zscore.\nIt {character}divides by n.\n"),
             r"zscore/prompt.md, line 2: a control character", only="stats")


def test_odd_but_printable_markdown_is_kept_as_written(tmp_path):
    """LaTeX, braces, HTML and a stray fence are the instructor's to write: they reach the notebook unchanged."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    odd = "Write `zscore`: $z = \\frac{x - \\mu}{\\sigma}$ with {braces} {value} %s, <b>bold</b>, ``` and\ttabs."
    (course / ZSCORE / "prompt.md").write_text(odd + "\n")
    (stats,) = load_course(course, "stats")
    assert stats.tasks[0].prompt == odd


def test_an_int_answer_whose_key_is_not_whole_is_refused(tmp_path):
    """Before, an "int" key of 8/3 shipped as far as `attn-ref check`, which failed the solution's 8/3 on its form."""
    _refused(tmp_path, lambda c: _edit(c / "quiz/mean/question.py", '"int", len(DATA)', '"int", len(DATA) / 3'),
             r"quiz/mean/question.py: answer 'sample_size'.expected: expected a value of kind int", only="quiz")


def test_a_graded_cell_slow_in_the_builds_solution_run_stops_the_build(tmp_path, monkeypatch):
    """Grading runs setup.py and every solution cell again for each student, with 180 s for them all: a
    setup.py that slept 90 s held the build for minutes (every grading of `attn-ref check` ran it) and would
    have held every student's. The threshold is lowered here so that the test sleeps 5 s, not 46 (above what the
    notebook's first cell takes on a loaded machine: 1 s was seen)."""
    import attn_ref.release.build as building

    monkeypatch.setattr(building, "SLOW_CELL", 3.0)
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    (course / "stats" / "setup.py").write_text("import time\n\nimport numpy as np\n\ntime.sleep(5)\n")
    out = tmp_path / "out"
    with pytest.raises(BuildError, match=rf"{re.escape(str(course.resolve() / 'stats' / 'setup.py'))}: ran \d+ s in the "
                                         r"build's solution run; grading runs it for every student, with 180 s"):
        build(out, course, only="stats")
    assert not any(out.iterdir())


@pytest.mark.parametrize("bounds", ["low=8, high=8", "low=7, high=9"])
def test_a_public_range_that_gives_the_answer_away_is_refused(tmp_path, bounds):
    """Students read the range in the public check ("at least 8, at most 8"): a range that holds only values near
    the key is the key."""
    _refused(tmp_path, lambda c: _edit(c / "quiz/mean/question.py", "len(DATA), low=1)", f"len(DATA), {bounds})"),
             r"quiz/mean/question.py, line \d+: .*answer 'sample_size': its public range \[\d+, \d+\] gives the answer away",
             only="quiz")


def test_a_unit_folder_that_units_does_not_list_is_refused(tmp_path):
    """Before, a unit written but not listed was left out of the notebook without a word."""
    _refused(tmp_path, lambda c: shutil.copytree(c / "quiz/mean", c / "quiz/median"),
             r"quiz/assignment.py: median/ holds a unit that units= does not list", only="quiz")


@pytest.mark.parametrize("options, message", [
    ('options={"rtol": 1e-9, "atol": 1e-9}, ', r"rtol=1e-09 and atol=1e-09 are below what float32 holds"),
    ('options={"rtol": -1e-4}, ', r"rtol=-0.0001; a tolerance is a number of 0 or more")])
def test_a_tolerance_correct_code_cannot_meet_is_refused(tmp_path, options, message):
    """Before, a float32 probe allowed 1e-9 failed the solution itself, which the check then said "matches a known
    mistake"."""
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "task.py", '**F32)', f'{options}**F32)'),
             rf"zscore/task.py, line \d+: .*probe 'float32 in, float32 out': {message}", only="stats")


def test_a_prompt_that_misspells_its_function_is_refused(tmp_path):
    """Before, `zscores(x)` in the prompt beside `def zscore` in the solution built without a word; students wrote
    the name they read, and the grader found no function."""
    _refused(tmp_path, lambda c: _edit(c / ZSCORE / "prompt.md", "Write `zscore(x", "Write `zscores(x"),
             r"zscore/prompt.md: calls `zscores\(…\)`, nearly the task's function `zscore`", only="stats")
