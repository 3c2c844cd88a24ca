"""results.json as one typed object (results.Results, results.TestResult): what it writes is what the grader
wrote before it, what it reads keeps what it does not know, files of older graders load, and a file that is
not results is refused with an error that names what is wrong. And the grader reads results through it:
few raw ``x["key"]`` reads are left in attn_ref/grade (outside the rooms that run beside the kernel)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from attn_ref.grade.checks_json import Checks, QuestionUnit
from attn_ref.grade.results import (
    CONTENT_HASH,
    FILE_HASH,
    LEGACY_HASH,
    Outcome,
    ProbeEvidence,
    Results,
    ResultsError,
    TestResult,
    entry,
    failed_results,
    outcome,
    plain_results,
    write_results,
)

GRADE = Path(__file__).resolve().parents[2] / "attn_ref" / "grade"
NOT_COUNTED = ("inkernel", "student_python")  # they run outside the grader and cannot import its types
MAX_RAW_READS = 40  # the brief's bound, checks.json's reader and the results' included (see test_raw_reads_are_few)

GRADED = {
    "score": 1.5,
    "output": "Graded by attn-ref.\nPublic checks look at types and shapes.",
    "output_format": "text",
    "tests": [
        {"name": "q1: A question", "score": 1.5, "max_score": 2, "output": "✓ the value (1.5/1.5)",
         "output_format": "text", "visibility": "after_due_date"},
        {"name": "q2_written: Why (written, graded by hand)", "score": 0.0, "max_score": 0.0,
         "output": "<pre>because</pre>", "output_format": "html", "visibility": "hidden", "tags": ["written"]},
    ],
    "extra_data": {"status": "ok", "timed_out": False, "outcome": "graded", "seed": 7, "kernel": {"cuda": False},
                   "probes": [{"task": "c3", "probe": "p1", "device": "cpu", "dtype": "float32", "passed": False,
                               "max_error": 0.5, "mistake": "forgot the scale"},
                              {"task": "c3", "probe": "p2", "passed": True}, "not a line", {"task": 3, "passed": "no"}],
                   CONTENT_HASH: "abc", "submission": "s1", "autograder_version": "v1",
                   "integrity_flags": ["flag"], "forbidden_calls": {"c3": ["softmax"]}, "unknown_later": [1, 2]},
    "execution_time": 3.25,
}


def test_what_it_writes_is_what_it_read():
    results = Results.load(json.loads(json.dumps(GRADED)))
    assert results.to_json() == GRADED
    assert json.dumps(results.to_json()) == json.dumps(GRADED)  # the order of keys too


def test_unknown_keys_are_kept_at_every_level():
    data = json.loads(json.dumps(GRADED))
    data["leaderboard"] = [{"name": "x", "value": 1}]
    data["tests"][0]["number"] = "1.1"
    data["tests"][0]["status"] = "passed"
    assert Results.load(data).to_json() == data


def test_the_typed_accessors_read_extra_data():
    results = Results.load(GRADED)
    assert results.outcome is Outcome.GRADED and results.has_grade and results.status == "ok"
    assert not results.timed_out and results.submission == "s1" and results.autograder_version == "v1"
    assert results.recorded_hash(CONTENT_HASH) == "abc" and results.recorded_hash(FILE_HASH) is None
    assert results.probes == [ProbeEvidence("c3", "p1", False, "forgot the scale"), ProbeEvidence("c3", "p2", True, None),
                              ProbeEvidence(None, None, None, None)]  # a line that is not an object is none
    assert results.integrity_flags == ["flag"] and results.forbidden_calls == {"c3": ["softmax"]}
    assert [t.unit for t in results.tests] == ["q1", "q2_written"] and results.max_score == 2
    assert results.tests[1].tags == ["written"] and results.tests[0].tags is None


def test_a_file_of_an_older_grader_loads():
    old = {"score": 2, "tests": [{"name": "q1: A question", "score": 2, "max_score": 2}],
           "extra_data": {"status": "ok", LEGACY_HASH: "abc"}}
    results = Results.load(old)
    assert results.outcome is Outcome.GRADED  # before the field existed: its score stood
    assert results.recorded_hash(CONTENT_HASH) == results.recorded_hash(FILE_HASH) == "abc"
    assert results.execution_time is None and "execution_time" not in results.to_json()
    assert results.to_json()["extra_data"] == old["extra_data"]
    assert Results.load({"score": 0, "extra_data": {"outcome": "from_the_future"}}).outcome is Outcome.NOT_GRADED
    assert outcome(old) is outcome(results) is Outcome.GRADED  # the dict reader agrees


@pytest.mark.parametrize(("data", "says"), [
    ([], "are not an object"),
    ({"score": "10"}, "score is not a number"),
    ({"score": True}, "score is not a number"),
    ({"score": 1, "tests": {}}, "tests are not a list"),
    ({"score": 1, "tests": ["q1"]}, "test 1 of the results is not an object"),
    ({"score": 1, "tests": [{"name": "q1: x", "score": "1"}]}, "test 'q1: x''s score is not a number"),
    ({"score": 1, "tests": [{"name": "q1: x", "tags": "written"}]}, "tags are not a list"),
    ({"score": 1, "extra_data": []}, "extra_data is not an object"),
    ({"score": 1, "output": 3}, "output is not text"),
])
def test_what_is_not_results_is_refused_with_what_is_wrong(data, says):
    with pytest.raises(ResultsError, match=says.replace("(", r"\(")):
        Results.load(data)


def test_a_file_is_read_and_checked(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{not json")
    with pytest.raises(ResultsError, match="is not JSON"):
        Results.read(path)
    path.write_text(json.dumps({"score": 1}))
    with pytest.raises(ResultsError, match="have no extra_data"):
        Results.read(path)  # nothing ties it to a submission
    assert Results.read(path, with_extra=False).extra == {}
    write_results(path, Results.load(GRADED))
    assert Results.read(path).to_json() == plain_results(GRADED)
    with pytest.raises(OSError):
        Results.read(tmp_path / "none.json")


def test_the_producers_write_what_they_wrote_as_dicts():
    unit = QuestionUnit("q1", title="A question")
    checks = Checks("practice", (unit,))
    assert entry(unit, [(True, "the value", 1, "")], "visible").to_json() == {
        "name": "q1: A question", "score": 1, "max_score": 0, "output": "✓ the value (1/1)", "output_format": "text",
        "visibility": "visible"}
    failed = failed_results(checks, "broken", Outcome.STUDENT)
    assert failed.to_json() == {
        "score": 0.0, "output": "Your submission could not be graded: broken", "output_format": "text",
        "tests": [{"name": "q1: A question", "score": 0.0, "max_score": 0, "output": "Not graded: broken",
                   "output_format": "text", "visibility": checks.visibility}],
        "extra_data": {"status": "error: broken", "outcome": "student"}}
    assert failed_results(checks, "down", Outcome.NOT_GRADED).status == "not graded: down"
    assert plain_results(failed) == plain_results(failed.to_json())


def test_a_test_entry_reads_back_as_itself():
    test = TestResult("c3: Attention", 1.0, 2.0, "✗ x (0/1)", "text", "visible", None, {"extra": 1})
    assert TestResult.load(test.to_json()) == test and not test.full


def raw_reads() -> dict[str, int]:
    """{file: its x["key"] reads (a subscript by a str constant, read)} in attn_ref/grade, outside the kernel's rooms."""
    found = {}
    for path in sorted(GRADE.rglob("*.py")):
        if path.relative_to(GRADE).parts[0] in NOT_COUNTED:
            continue
        found[str(path.relative_to(GRADE))] = sum(
            isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
            for node in ast.walk(ast.parse(path.read_text())))
    return found


def test_raw_reads_are_few():
    """Results and checks are read through their types (Results, Checks), not as raw dicts."""
    reads = raw_reads()
    counted = sum(reads.values())
    assert counted < MAX_RAW_READS, sorted(((n, name) for name, n in reads.items() if n), reverse=True)


def test_no_reader_of_results_reads_them_raw():
    """The grader's producers and consumers of results.json hold no raw read of a results key."""
    keys = {"score", "max_score", "tests", "extra_data", "output", "status", "outcome", "probes", CONTENT_HASH,
            FILE_HASH, LEGACY_HASH, "timed_out", "variant", "integrity_flags", "forbidden_calls", "credited"}
    files = ["core.py", "cli.py", "isolation/watchdog.py", *(f"classroom/{p.name}" for p in (GRADE / "classroom").glob("*.py")),
             *(f"proofs/{p.name}" for p in (GRADE / "proofs").glob("*.py")), "scoring/functions.py", "scoring/questions.py"]
    wrong = []
    for name in files:
        for node in ast.walk(ast.parse((GRADE / name).read_text())):
            if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Constant)
                    and node.slice.value in keys):
                wrong.append(f"{name}:{node.lineno} {ast.unparse(node)}")
    assert not wrong, wrong


def test_one_outcome_and_its_values_are_what_results_json_holds():
    from attn_ref.grade.isolation import kernel

    assert [o.value for o in Outcome] == ["graded", "student", "not_graded"]
    assert not hasattr(kernel, "Outcome") and kernel.Execution(kernel.Status.OK).error == ""


def test_a_submissions_rows_are_its_students_or_its_key():
    from attn_ref.grade.classroom.discover import Student, Submission

    sub = Submission("k", Path("k.ipynb"), [{"name": "", "sid": "1", "email": "a@b"}, {"name": "Ana", "sid": "", "email": ""}])
    assert sub.people == [Student("", "1", "a@b"), Student("Ana")]
    assert [p.row() for p in sub.members] == [{"name": "k", "sid": "1", "email": "a@b"}, {"name": "Ana", "sid": "", "email": ""}]
    assert Submission("k", Path("k.ipynb")).members == [Student("k")]


def test_a_workers_results_are_checked_and_what_is_not_results_is_no_grade():
    """A Dask worker's results.json comes from another machine: read as a file is (ClusterRunner._result)."""
    from types import SimpleNamespace

    from attn_ref.grade.classroom.cluster import ClusterRunner
    from attn_ref.grade.isolation.watchdog import Job, JobState, as_json

    checks = Checks("practice", (QuestionUnit("q1", title="A question"),))
    job = Job("s1", lambda jail: None, lambda reason, status, fault: failed_results(checks, reason, fault, status), 10)
    good = Results.load(GRADED).to_json()
    runner = SimpleNamespace(kernel_starts=set())  # what _result records beside the results: how the kernel started
    done = ClusterRunner._result(runner, job, SimpleNamespace(result=lambda: (json.loads(json.dumps(good)), "image")))
    assert done.state is JobState.GRADED and done.results == GRADED
    done = ClusterRunner._result(runner, job, SimpleNamespace(result=lambda: ({"score": "all of it", "extra_data": {}}, "image")))
    assert done.state is JobState.FAILED and Results.load(done.results).outcome is Outcome.NOT_GRADED
    assert "ResultsError" in done.results["extra_data"]["status"] and "score is not a number" in done.results["output"]
    assert as_json({"error": "a tool's own"}) == {"error": "a tool's own"}
