"""`attn-ref new`: an assignment, a function task and a numeric question from the templates, which build and pass
`attn-ref check` as they stand, whose mutant is caught and named; the registry and layout edited in the shape
they have, or refused with the line to add; nothing overwritten, nothing half made."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import nbformat
import pytest
from conftest import TESTS, edit_notebook, max_scores, scores

from attn_ref.cli import main
from attn_ref.grade import grade
from attn_ref.release.build import BuildError, build
from attn_ref.release.check import check_release
from attn_ref.release.course import CourseError, load_course
from attn_ref.release.scaffold import TEMPLATES, plan

FIXTURE = TESTS / "fixtures" / "stats_course"
MUTANT = "subtracts the mean of the whole array, not the mean of each slice along axis"


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` but Python's bytecode caches (loading a registry may write one)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def new(*argv: str, course: Path) -> int:
    return main(["new", *argv, "--course", str(course)])


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    """A fresh course made by `attn-ref new` alone (a task, then a question), built with `attn-ref check` as
    `attn-ref build --only week32` runs it."""
    course = tmp_path_factory.mktemp("course") / "course"
    assert new("week32", "--task", "c1", course=course) == 0
    assert new("week32", "--question", "q1", course=course) == 0
    out, rows = tmp_path_factory.mktemp("release"), []

    def verify(staged, built):
        rows.extend(check_release(staged, course, [b.autograder for b in built]))
        if not all(r.ok for r in rows):
            raise BuildError("; ".join(f"{r.check}: {r.detail}" for r in rows if not r.ok))

    build(out, course, only="week32", verify=verify)
    return course, out, rows


@pytest.mark.slow  # one small build and its check: about 1 to 2 minutes on a shared machine
def test_the_scaffold_builds_passes_check_and_its_mutant_is_caught_and_named(scaffolded, tmp_path):
    course, out, rows = scaffolded
    assert rows and all(r.ok for r in rows)
    (mutants,) = [r for r in rows if r.check == "every hidden probe fails a mutant; no stub scores"]
    assert mutants.detail == "1 mutants (1 named by their outputs), 3 derived stubs"
    assert any(r.check.startswith("every line's verdict holds") and "1 of 1 mutants named" in r.detail for r in rows)
    mutant = (course / "week32/c1/mutants/whole_array_mean.py").read_text()
    nb = edit_notebook(out / "solutions/week32/week32.ipynb", {"def c1(": mutant})
    path = tmp_path / "week32.ipynb"
    nbformat.write(nb, str(path))
    results = grade(path, out / "autograder/week32-autograder.zip", out_dir=tmp_path / "graded")
    assert scores(results) == {"c1": 0, "q1": 2} and max_scores(results)["c1"] == 3
    failed = [line for t in results["tests"] for line in t["output"].splitlines() if line.startswith("✗")]
    assert len(failed) == 2 and all(line.endswith(f"this matches a known mistake: {MUTANT}") for line in failed)


def test_new_writes_every_file_of_its_template_with_every_word_filled(tmp_path):
    course = tmp_path / "course"
    assert new("week32", "--task", "c1", "--function", "centred", "--title", "Lab 3.2: «centring»", course=course) == 0
    assert new("week32", "--question", "q1", course=course) == 0
    made = tree(course)
    assert sorted(made) == ["registry.py", "week32/assignment.py", "week32/c1/mutants/whole_array_mean.py",
                            "week32/c1/prompt.md", "week32/c1/public_checks.py", "week32/c1/solution.py",
                            "week32/c1/task.py", "week32/c1_ref.py", "week32/intro.md", "week32/q1/prompt.md",
                            "week32/q1/question.py", "week32/q1/solution.py"]
    assert not [name for name, text in made.items() if b"TEMPLATE_" in text]
    assert 'Entry(name="week32", title="Lab 3.2: «centring»", folder="week32"),' in made["registry.py"].decode()
    assert made["week32/intro.md"].startswith("# Lab 3.2: «centring»\n".encode())
    (assignment,) = load_course(course, "week32")  # as the build loads it: every file parses and resolves
    assert [u.name for u in assignment.units] == ["c1", "q1"]
    task = assignment.tasks[0]
    assert (task.function, task.reference) == ("centred", "c1_ref:centred") and task.mutants[0].label == MUTANT
    assert [a.name for a in assignment.questions[0].answers] == ["q1_mean", "q1_count"]
    again = tmp_path / "again"  # the same commands give the same bytes
    new("week32", "--task", "c1", "--function", "centred", "--title", "Lab 3.2: «centring»", course=again)
    new("week32", "--question", "q1", course=again)
    assert tree(again) == made


def test_new_refuses_to_overwrite_and_names_what_exists(tmp_path, capsys):
    course = tmp_path / "course"
    new("week32", "--task", "c1", course=course)
    before = tree(course)
    for argv, exists in ((("week32", "--task", "c1"), "week32/c1"), (("week32", "--question", "c1"), "week32/c1"),
                         (("week32",), "week32")):
        capsys.readouterr()
        assert new(*argv, course=course) == 2
        said = capsys.readouterr().err
        assert str(course.resolve() / exists) in said and said.count("\n") == 1
    (course / "week32/c2_ref.py").write_text("# the instructor's own\n")  # a task's reference beside the units
    with pytest.raises(CourseError, match=r"c2_ref\.py already exists; nothing was written"):
        plan(course, "week32", "task", "c2")
    (course / "week32/c2_ref.py").unlink()
    with pytest.raises(CourseError, match=r"--title is a new assignment's: .*registry\.py has 'week32' already"):
        plan(course, "week32", "question", "q1", title="Lab 3.2")
    assert tree(course) == before
    (course / "week33").mkdir()  # a folder the registry does not list is the instructor's
    with pytest.raises(CourseError, match=r"week33 exists but .*registry\.py has no assignment 'week33'"):
        plan(course, "week33", "question", "q1")


@pytest.mark.parametrize("name", ["Week32", "week-32", "2week", "class", ""])
def test_a_name_that_cannot_name_a_folder_file_and_variable_is_refused(tmp_path, name):
    with pytest.raises(CourseError, match="lower-case letters, digits and underscores"):
        plan(tmp_path, "week32", "task", name)
    with pytest.raises(CourseError, match="lower-case letters"):
        plan(tmp_path, name or "-", None)
    assert not any(tmp_path.iterdir())


REGISTRIES = {  # a registry as an instructor may have laid it out -> the line `new` adds, in that layout
    "one a line, a comment after the last": (
        'ASSIGNMENTS = (\n    Entry(name="a", title="À", folder="a"),  # the first\n)\n',
        'ASSIGNMENTS = (\n    Entry(name="a", title="À", folder="a"),  # the first\n'
        '    Entry(name="week32", title="week32", folder="week32"),\n)\n'),
    "no trailing comma, brackets on the last line": (
        'ASSIGNMENTS = (Entry(name="a", title="a", folder="a"),\n               Entry(name="b", title="b", folder="b"))\n',
        'ASSIGNMENTS = (Entry(name="a", title="a", folder="a"),\n               Entry(name="b", title="b", folder="b"), '
        'Entry(name="week32", title="week32", folder="week32"))\n'),
    "one line": (
        'ASSIGNMENTS = (Entry(name="a", title="a", folder="a"),)\n',
        'ASSIGNMENTS = (Entry(name="a", title="a", folder="a"), Entry(name="week32", title="week32", folder="week32"))\n'),
    "a list, no trailing comma": (
        'ASSIGNMENTS = [\n    Entry(name="a", title="a", folder="a")\n]\n',
        'ASSIGNMENTS = [\n    Entry(name="a", title="a", folder="a"),\n    Entry(name="week32", title="week32", folder="week32"),\n]\n'),
    "empty": ("ASSIGNMENTS = ()\n", 'ASSIGNMENTS = (Entry(name="week32", title="week32", folder="week32"),)\n'),
    "empty, brackets on lines of their own, a comment between": (
        "ASSIGNMENTS = (\n    # none yet\n)\n",
        'ASSIGNMENTS = (\n    # none yet\n    Entry(name="week32", title="week32", folder="week32"),\n)\n'),
}


@pytest.mark.parametrize("layout", sorted(REGISTRIES))
def test_the_registry_line_is_added_in_the_layout_the_registry_has(tmp_path, layout):
    before, after = REGISTRIES[layout]
    header = "from attn_ref.release.course import Entry\n\n"
    (tmp_path / "registry.py").write_text(header + before)
    made = plan(tmp_path, "week32", "question", "q1")
    assert made.edited[tmp_path.resolve() / "registry.py"][0] == header + after


def test_a_registry_of_one_entry_without_its_comma_is_told_so(tmp_path):
    (tmp_path / "registry.py").write_text('from attn_ref.release.course import Entry\n\n'
                                          'ASSIGNMENTS = (\n    Entry(name="a", title="a", folder="a")\n)\n')
    with pytest.raises(CourseError, match=r"registry\.py: ASSIGNMENTS is one Entry, not a tuple of them: write a comma after it"):
        plan(tmp_path, "week32", "question", "q1")


def test_a_registry_that_is_not_a_plain_list_is_refused_with_the_line_to_add(tmp_path, capsys):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    registry = course / "registry.py"
    registry.write_text(registry.read_text().replace("ASSIGNMENTS = (", "ASSIGNMENTS = BASE + (").replace(
        "from attn_ref.release.course import Entry", "from attn_ref.release.course import Entry\n\nBASE = ()"))
    before = tree(course)
    assert new("week32", "--task", "c1", course=course) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and f"{registry.resolve()}: cannot add" in said
    assert 'Add `Entry(name="week32", title="week32", folder="week32")` to ASSIGNMENTS' in said
    assert "its value is not a written-out tuple or list" in said and "run the same command again" in said
    assert tree(course) == before  # refused before anything was written
    registry.write_text(registry.read_text().replace("BASE = ()", 'BASE = (Entry(name="week32", title="W", folder="week32"),)'))
    assert new("week32", "--task", "c1", course=course) == 0  # added by hand: the same command makes the rest
    assert [u.name for u in load_course(course, "week32")[0].units] == ["c1"]


def test_units_are_added_to_an_existing_layout_or_the_line_is_given(tmp_path, capsys):
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    assert new("quiz", "--question", "median", course=course) == 0  # units=("mean", "spread") on one line
    assert 'units=("mean", "spread", "median")' in (course / "quiz/assignment.py").read_text()
    assert [u.name for u in load_course(course, "quiz")[0].units] == ["mean", "spread", "median"]
    layout = course / "stats/assignment.py"
    layout.write_text(textwrap.dedent("""\
        from attn_ref.release.course import Layout

        UNITS = ("zscore", "standard")
        ASSIGNMENT = Layout(units=UNITS, visibility="visible", setup="setup.py")
        """))
    assert new("stats", "--task", "scaled", course=course) == 2
    said = capsys.readouterr().err
    assert f'Add "scaled" to `units=` in {layout.resolve()}' in said and not (course / "stats/scaled").exists()
    layout.write_text(layout.read_text().replace('"standard")', '"standard", "scaled")'))
    assert new("stats", "--task", "scaled", course=course) == 0  # listed by hand: no edit, the unit is made
    assert [u.name for u in load_course(course, "stats")[0].units] == ["zscore", "standard", "scaled"]


def test_an_assignment_with_no_unit_yet_says_how_to_add_one(tmp_path):
    course = tmp_path / "course"
    assert new("week32", course=course) == 0
    with pytest.raises(CourseError, match=r"assignment\.py: units=\(\) lists no unit; add one with `attn-ref new week32 --task NAME`"):
        load_course(course, "week32")


def test_the_templates_are_package_data_and_make_no_file_the_loader_ignores():
    assert sorted(p.name for p in TEMPLATES.iterdir()) == ["README.md", "assignment", "course", "question", "task"]
    unit_files = {p.name for p in (TEMPLATES / "task/TEMPLATE_UNIT").iterdir()}
    assert unit_files == {"prompt.md", "solution.py", "task.py", "public_checks.py", "mutants"}


def test_new_says_what_it_made_in_a_fixed_order_with_every_path_whole(tmp_path, capsys):
    course = tmp_path / "a course folder whose name is long enough to be cut short by a narrow table" / "course"
    assert new("week32", "--task", "c1", course=course) == 0
    assert new("week32", "--question", "q1", course=course) == 0
    assert capsys.readouterr().out.splitlines() == [
        "created registry.py", "created week32/assignment.py", "created week32/c1/mutants/whole_array_mean.py",
        "created week32/c1/prompt.md", "created week32/c1/public_checks.py", "created week32/c1/solution.py",
        "created week32/c1/task.py", "created week32/c1_ref.py", "created week32/intro.md",
        f"in {course}; next: attn-ref build --course {course} --only week32 --out week32-release",
        "created week32/q1/prompt.md", "created week32/q1/question.py", "created week32/q1/solution.py",
        "edited  week32/assignment.py: 'q1' to units",
        f"in {course}; next: attn-ref build --course {course} --only week32 --out week32-release"]


def test_a_registry_from_an_older_version_stops_new_with_what_to_change(tmp_path, capsys):
    (tmp_path / "registry.py").write_text('from attn_ref.release.course import Entry\n\n'
                                          'ASSIGNMENTS = (Entry("lab", "Lab", "lab", kind="functions"),)\n')
    assert new("week32", "--task", "c1", course=tmp_path) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"attn-ref new: {tmp_path / 'registry.py'}, line 3: ") and "delete `kind=...`" in err
    assert err.count("\n") == 1 and list(tree(tmp_path)) == ["registry.py"]  # nothing written
