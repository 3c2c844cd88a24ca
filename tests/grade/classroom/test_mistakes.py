"""The class's misconception report (classroom/mistakes.py): each line's named mistakes, the failures no known
mistake explains, and the failures no mutant could name (not written, a cell error, withheld), counted apart."""

from __future__ import annotations

import csv

from attn_ref.grade.checks_json import Answer, Checks, FunctionUnit, Probe, QuestionUnit
from attn_ref.grade.classroom.discover import Submission
from attn_ref.grade.classroom.gradebook import Gradebook, Graded
from attn_ref.grade.classroom.mistakes import (
    NO_MATCH,
    NOT_WRITTEN,
    UNNAMED,
    counts,
    csv_rows,
    line_counts,
    section,
    write_mistakes,
)
from attn_ref.grade.results import Unnamed


def test_the_class_report_counts_each_named_mistake_and_the_failures_no_mutant_explains(tmp_path):
    """A function not written (it returned None) is counted apart: it is no failure a new mutant could explain."""
    def graded(*probes):
        results = {"tests": [], "extra_data": {"outcome": "graded", "probes": list(probes)}}
        return Graded(Submission(f"s{len(probes)}", tmp_path / "x.ipynb", []), results, {"c3": 0.0})

    scaled = {"task": "c3", "probe": "no mask", "passed": False, "mistake": "scales by d"}
    unknown = {"task": "c3", "probe": "no mask", "passed": False}
    blank = {"task": "c3", "probe": "no mask", "passed": False, "not_written": True}
    c3 = FunctionUnit("c3", probes=(Probe("no mask", 1), Probe("float32", 1), Probe("meta", 1)))
    book = Gradebook(Checks("lab", (c3,)), [
        graded(scaled, dict(scaled, probe="float32")), graded(scaled), graded(unknown),
        graded({"task": "c3", "probe": "no mask", "passed": True}, {"task": "c3", "probe": "float32", "passed": True},
               {"task": "c3", "probe": "undeclared", "passed": False}),
        graded("not a probe", {"task": 3, "passed": False}), graded(blank, dict(blank, probe="float32"), "x", "y")])
    assert counts(book) == [("c3", "scales by d", 2), ("c3", NO_MATCH, 1), ("c3", NOT_WRITTEN, 1)]
    lines = line_counts(book)  # the most failed share first; an undeclared line is not counted
    assert [(c.line, c.graded, c.failed, dict(c.mistakes), c.unexplained, c.not_written) for c in lines] == [
        ("no mask", 5, 4, {"scales by d": 2}, 1, 1), ("float32", 3, 2, {"scales by d": 1}, 0, 1)]
    page = section(lines)
    assert page.index("no mask") < page.index("float32") and "20%" in page
    assert "<i>failed, no known mistake matched</i>: 1" in page and "<i>not written: the function returned None" in page
    write_mistakes(tmp_path, book)
    with open(tmp_path / "mistakes.csv", encoding="utf-8-sig", newline="") as f:
        assert list(csv.reader(f)) == [["task", "line", "mistake", "submissions"], ["c3", "no mask", "scales by d", "2"],
                                       ["c3", "no mask", NO_MATCH, "1"], ["c3", "no mask", NOT_WRITTEN, "1"],
                                       ["c3", "float32", "scales by d", "1"], ["c3", "float32", NOT_WRITTEN, "1"]]
    assert (tmp_path / "mistakes.png").read_bytes()[:4] == b"\x89PNG"


def _graded(tmp_path, n: int, probes=(), answers=()):
    results = {"tests": [], "extra_data": {"outcome": "graded", "probes": list(probes), "answers": list(answers)}}
    return Graded(Submission(f"s{n}", tmp_path / f"s{n}.ipynb", []), results, {"c3": 0.0, "q1": 0.0})


def test_lines_that_never_ran_or_were_withheld_are_not_candidates_for_a_new_mutant(tmp_path):
    """A function not defined when graded (its cell raised), a call that crashed, and a line failed beside a
    stand-in are counted as a cell error and as withheld, never as "no known mistake matched"."""
    c3 = FunctionUnit("c3", probes=(Probe("no mask", 1), Probe("float32", 1)))
    line = {"task": "c3", "probe": "no mask", "passed": False}
    book = Gradebook(Checks("lab", (c3,)), [
        _graded(tmp_path, 0, [dict(line, cause="cell_error"), dict(line, probe="float32", cause="cell_error")]),
        _graded(tmp_path, 1, [dict(line, cause="stand_in")]),
        _graded(tmp_path, 2, [dict(line, cause="cell_error"), dict(line, probe="float32")]),  # one line unexplained
        _graded(tmp_path, 3, [dict(line, cause="a cause this grader does not know")])])
    assert counts(book) == [("c3", NO_MATCH, 2), ("c3", UNNAMED[Unnamed.CELL_ERROR], 1),
                            ("c3", UNNAMED[Unnamed.STAND_IN], 1)]
    no_mask = next(c for c in line_counts(book) if c.line == "no mask")
    assert no_mask.unexplained == 1 and dict(no_mask.unnamed) == {
        UNNAMED[Unnamed.CELL_ERROR]: 2, UNNAMED[Unnamed.STAND_IN]: 1, NO_MATCH: 1}
    assert ("c3", "no mask", UNNAMED[Unnamed.STAND_IN], 1) in csv_rows(line_counts(book))
    assert "<i>cell error: not defined when graded" in section(line_counts(book))


def test_a_questions_named_wrong_answers_are_counted_with_its_lines(tmp_path):
    """A question's answers are lines too: a wrong value that is a known mistake is counted under its words."""
    q1 = QuestionUnit("q1", answers=(Answer("q1_count", "int", 64, 1, mistakes=((32, "counts one direction"),)),))
    answer = {"task": "q1", "probe": "q1_count", "passed": False}
    book = Gradebook(Checks("practice", (q1,)), [
        _graded(tmp_path, 0, answers=[dict(answer, mistake="counts one direction")]),
        _graded(tmp_path, 1, answers=[dict(answer, mistake="counts one direction")]),
        _graded(tmp_path, 2, answers=[dict(answer, cause="not_written")]),
        _graded(tmp_path, 3, answers=[dict(answer, passed=True)])])
    assert counts(book) == [("q1", "counts one direction", 2), ("q1", NOT_WRITTEN, 1)]
    [q1_count] = line_counts(book)
    assert (q1_count.graded, q1_count.failed, dict(q1_count.mistakes)) == (4, 3, {"counts one direction": 2})
