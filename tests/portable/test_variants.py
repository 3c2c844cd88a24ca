"""Per-student variants of numeric answers (practice q2 and q5): each student's numbers are their own."""

import json
import shutil
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import TESTS
from gradescope_layout import autograder_layout, run_autograder, zip_of

from attn_ref.grade import grade
from attn_ref.grade.classroom.batch import grade_batch
from attn_ref.grade.scoring.questions import NUMBERS_ENTRY
from attn_ref.grade.scoring.whose_variant import Basis, choose, gradescope_submitters
from attn_ref.portable.variants import combinations, normalized_identity, parameters_for, variant_index

ANA, BEN = "ana.lima@example.edu", "ben.okafor@example.edu"
PARAMETERS = [("T", [30, 40, 50, 60]), ("factor", [0.8, 0.85, 0.9, 0.95])]
VARIED = ("q2", "q5")


def test_an_identity_picks_one_variant_the_same_way_every_time():
    assert normalized_identity("  Ana.Lima@Example.EDU ") == ANA
    assert variant_index("key", "Ana.Lima@example.edu ", "q5", 16) == variant_index("key", ANA, "q5", 16)
    assert parameters_for("key", "", "q5", PARAMETERS, {"T": 50, "factor": 0.9}) == {"T": 50, "factor": 0.9}
    picked = {tuple(parameters_for("key", f"student{i}@example.edu", "q5", PARAMETERS, {}).values()) for i in range(200)}
    assert len(picked) == 16  # every combination is someone's
    other_term = sum(parameters_for("key", f"s{i}", "q5", PARAMETERS, {}) != parameters_for("other key", f"s{i}", "q5", PARAMETERS, {})
                     for i in range(100))
    assert other_term > 70  # a new key re-rolls (1 in 16 stay by chance)
    assert combinations(PARAMETERS)[0] == {"T": 30, "factor": 0.8} and len(combinations(PARAMETERS)) == 16


def test_whose_variant_is_graded():
    group = [{"email": BEN, "sid": "B2"}, {"email": ANA, "sid": "4021337"}]
    assert choose(ANA.upper(), group).basis is Basis.DECLARED  # any member of a group, any case
    assert choose("4021337", group).identity == "4021337"  # an SID too
    wrong = choose("ana.lima@exmaple.edu", group)  # a typo: the first submitter's own numbers, flagged
    assert (wrong.identity, wrong.basis, wrong.flagged) == (BEN, Basis.FIRST_SUBMITTER, True)
    assert choose("", group).identity == BEN
    assert choose(ANA, None).basis is Basis.UNVERIFIED and choose("", None).basis is Basis.DEFAULT
    assert choose(ANA, [{"name": "no email, no sid"}]).basis is Basis.UNVERIFIED


def test_gradescope_metadata_is_read_field_by_field():
    data = {"users": [{"email": ANA, "sid": 4021337, "name": "Ana"}, {"email": ["not", "a string"]}, "junk"],
            "assignment": {"title": "x"}}
    assert gradescope_submitters(data) == ({"email": ANA, "sid": "4021337", "name": "Ana"}, {})
    assert gradescope_submitters(["not", "a dict"]) == ()


def _as(release, identity: str, tmp_path: Path, name: str) -> Path:
    """The solution notebook run as a student who typed ``identity``: its answers are computed from that
    student's numbers (the numbers cells), as a student's would be."""
    out, _ = release
    nb = nbformat.read(str(out / "solutions/practice/practice.ipynb"), as_version=4)
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("# Type your Gradescope email")]
    cell.source = cell.source.replace('GRADESCOPE_ID = ""', f"GRADESCOPE_ID = {identity!r}")
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, str(path))
    return path


def _by_unit(results: dict) -> dict[str, float]:
    return {t["name"].split(":")[0]: t["score"] for t in results["tests"]}


def test_each_student_scores_full_with_their_own_numbers_and_loses_them_with_anothers(release, tmp_path):
    out, _ = release
    zip_path = out / "autograder/practice-autograder.zip"
    ana = grade(_as(release, ANA, tmp_path, "ana"), zip_path, write=False, submitters=[{"email": ANA, "sid": "1"}])
    assert ana["score"] == 23 and ana["extra_data"]["variant"]["basis"] == "declared"
    (line,) = [t for t in ana["tests"] if t["name"] == NUMBERS_ENTRY]
    assert line["visibility"] == "visible" and line["max_score"] == 0 and ANA in line["output"] and "q5: T = " in line["output"]
    # Ana's notebook handed in by Ben: graded with Ben's numbers, which differ here, so q2 or q5 lose points
    assert any(parameters_for("dl-course 3.1, fall 2026", ANA, q, *_q_parameters(q)) !=
               parameters_for("dl-course 3.1, fall 2026", BEN, q, *_q_parameters(q)) for q in VARIED)
    copied = grade(_as(release, ANA, tmp_path, "copied"), zip_path, write=False, submitters=[{"email": BEN, "sid": "2"}])
    assert copied["score"] < 23 and copied["extra_data"]["variant"]["flagged"]
    assert {k: v for k, v in _by_unit(copied).items() if k not in VARIED} == {k: v for k, v in _by_unit(ana).items() if k not in VARIED}
    group = grade(_as(release, ANA, tmp_path, "group"), zip_path, write=False,
                  submitters=[{"email": BEN, "sid": "2"}, {"email": ANA, "sid": "1"}])
    assert group["score"] == 23  # a group: any member's variant
    lone = grade(_as(release, "", tmp_path, "lone"), zip_path, write=False)  # no identity, no metadata: the note's numbers
    assert lone["score"] == 23 and lone["extra_data"]["variant"] | {"numbers": None} == {
        "graded_as": "", "basis": "default", "declared": "", "flagged": True, "numbers": None}


def _q_parameters(name):
    from course_units import assignment

    (q,) = [q for q in assignment("practice").questions if q.name == name]
    return [(p.name, list(p.values)) for p in q.parameters], q.defaults


def test_gradescope_layout_reads_the_submitters_from_submission_metadata(release, tmp_path):
    out, _ = release
    root = autograder_layout(tmp_path, zip_of(out, "practice"))
    shutil.copy(_as(release, ANA, tmp_path, "ana"), root / "submission" / "practice.ipynb")
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": BEN, "sid": "2", "name": "Ben"}]}))
    copied = run_autograder(root)
    assert copied["score"] < 23 and copied["extra_data"]["variant"]["graded_as"] == BEN
    (root / "submission_metadata.json").write_text(json.dumps({"users": [{"email": ANA, "sid": "1", "name": "Ana"}]}))
    assert run_autograder(root)["score"] == 23


@pytest.mark.slow
def test_a_ta_regrade_of_an_export_grades_each_students_variant_the_same_twice(release, tmp_path):
    out, _ = release
    export = tmp_path / "export"
    export.mkdir()
    metadata = {"submission_1": {":submitters": [{":name": "Ana Lima", ":sid": "1", ":email": ANA}]},
                "submission_2": {":submitters": [{":name": "Ben Okafor", ":sid": "2", ":email": BEN}]}}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    for folder in metadata:
        (export / folder).mkdir()
        shutil.copy(_as(release, ANA, tmp_path, folder), export / folder / "practice.ipynb")  # Ben hands in Ana's work
    zip_path = out / "autograder/practice-autograder.zip"
    grade_batch(export, zip_path, tmp_path / "graded", jobs=2, progress=False)
    first = (tmp_path / "graded" / "grades.csv").read_text()
    rows = {line.split(",")[0]: line for line in first.splitlines()[1:]}
    ana = json.loads((tmp_path / "graded/results/submission_1.json").read_text())
    ben = json.loads((tmp_path / "graded/results/submission_2.json").read_text())
    assert ana["score"] == 23 and ben["score"] < 23 and "Ben Okafor" in "".join(rows)
    page = (tmp_path / "graded" / "written" / "q2.html").read_text()  # the TA reads each answer beside its numbers
    assert page.count("their numbers: T = ") == 2
    grade_batch(export, zip_path, tmp_path / "graded", jobs=2, progress=False, force=True)
    assert (tmp_path / "graded" / "grades.csv").read_text() == first


def test_a_cluster_worker_grades_against_the_submitters_it_is_sent(release, tmp_path):
    """What a Dask worker runs for a submission of an export: the zip's grader, with the export's submitters."""
    from attn_ref.grade.classroom.cluster import GRADERS, grade_on_worker
    from attn_ref.grade.settings import Limits

    out, _ = release
    notebook = _as(release, ANA, tmp_path, "ana")
    zip_bytes = (out / "autograder/practice-autograder.zip").read_bytes()
    try:  # the same grader (kept between tasks) grades both
        theirs, _ = grade_on_worker(zip_bytes, "practice.ipynb", notebook.read_bytes(), Limits.of(), ({"email": BEN, "sid": "2"},))
        own, _ = grade_on_worker(zip_bytes, "practice.ipynb", notebook.read_bytes(), Limits.of(), ({"email": ANA, "sid": "1"},))
    finally:
        GRADERS.close()
    assert theirs["extra_data"]["variant"]["graded_as"] == BEN and theirs["score"] < 23
    assert own["score"] == 23 and own["extra_data"]["variant"]["basis"] == "declared"


FIXTURE = TESTS / "fixtures" / "stats_course"
VARIED_MEAN = '''from attn_ref.release.units import Answer, Parameter, Question


def answers(n):
    return (Answer("sample_mean", "float", n / 2), Answer("sample_size", "int", n, low=1))


QUESTION = Question(name="mean", title="The mean", answers=answers(8), parameters=(Parameter("n", (6, 8, 10), 8),), vary=answers)
'''


def test_an_instructors_variant_mistakes_stop_the_course_with_the_file(tmp_path):
    from attn_ref.release.course import CourseError, load_course

    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course)
    (course / "quiz/mean/question.py").write_text(VARIED_MEAN)
    with pytest.raises(CourseError, match=r"quiz/assignment\.py: questions with parameters need variant_key"):
        load_course(course, "quiz")
    (course / "quiz/assignment.py").write_text('from attn_ref.release.course import Layout\n\n'
                                               'ASSIGNMENT = Layout(units=("mean", "spread"), visibility="visible", variant_key="t")\n')
    assert [q.name for q in load_course(course, "quiz")[0].questions if q.parameters] == ["mean"]
    (course / "quiz/mean/question.py").write_text(VARIED_MEAN.replace('Answer("sample_size", "int", n, low=1)',
                                                                      'Answer("sample_size", "choice", "AB"[n > 8], choices=(("A", "a"), ("B", "b")))'))
    with pytest.raises(CourseError, match=r"quiz/mean/question\.py: the variant \{'n': 10\}: .*only int and float answers may vary"):
        load_course(course, "quiz")
