"""checks.json has one schema at both ends: the builder's typed Checks written with to_json are what the
grader's read_checks gives back, field for field, and a malformed file is refused naming the field."""

from __future__ import annotations

import json

import conftest
import pytest

from attn_ref.grade.checks_json import Answer, InvalidChecks, Probe, read_checks
from attn_ref.grade.scoring import comparators, inputs
from attn_ref.release.course import load_course
from attn_ref.release.hidden_checks import checks, stamp

COURSES = (conftest.REPO / "course", conftest.TESTS / "fixtures" / "stats_course")
BUILT = [(f"{a.name}-{runner}", stamp(checks(a, runner), {"f": b"x"}))
         for course in COURSES for a in load_course(course) for runner in ("cpu", "gpu")]


@pytest.mark.parametrize("name, built", BUILT, ids=[name for name, _ in BUILT])
def test_what_the_builder_writes_the_grader_reads_back_the_same(name, built):
    """Typed, written, read with the grader's registries, written again: the same objects and the same JSON
    (so no field is lost or added on the way, and the seed key the grader sees is the builder's)."""
    written = json.loads(json.dumps(built.to_json(), sort_keys=True))
    read = read_checks(written, generators=inputs.GENERATORS, comparators=comparators.CHECKS)
    assert read.to_json() == written
    assert read.seed_key == built.seed_key and read.version == built.version
    assert [u.name for u in read.units] == [u.name for u in built.units]
    assert read_checks(read.to_json()) == read  # typed equality, twice round


def _lab() -> dict:
    return json.loads(json.dumps(next(b for n, b in BUILT if n == "lab-cpu").to_json()))


def _practice() -> dict:
    return json.loads(json.dumps(next(b for n, b in BUILT if n == "practice-cpu").to_json()))


def _set(data: dict, path: str, value) -> dict:
    """data with the field at a dotted path (numbers index lists) set, or removed when value is None."""
    *parents, last = path.split(".")
    target = data
    for key in parents:
        target = target[int(key)] if key.isdigit() else target[key]
    key = int(last) if last.isdigit() else last
    if value is None:
        del target[key]
    else:
        target[key] = value
    return data


@pytest.mark.parametrize("make, path, value, says", [
    (_lab, "format", 1, "format: expected 2"),
    (_lab, "runner", "tpu", "runner: expected cpu or gpu"),
    (_lab, "units.0.probes.0.dtype", "float16", "units[0].probes[0].dtype: expected one of float32, float64"),
    (_lab, "units.0.probes.0.checks", ["no_such"], "units[0].probes[0].checks: unknown comparator 'no_such'"),
    (_lab, "units.0.probes.0.args.0.1", {"normal": [3], "mask": [3]}, "units[0].probes[0].args[0]: the spec must name"),
    (_lab, "units.0.probes.0.args.0.1", {"normal": [99999]}, "units[0].probes[0].args[0].normal: expected a shape"),
    (_lab, "units.0.outputs", [], "units[0].outputs: expected at least one output"),
    (_lab, "units.0.mistakes.0", "text", "units[0].mistakes[0]: expected an object"),
    (_lab, "units.4.builds_on", ["c8"], "units.c5.builds_on: 'c8' is not an earlier function unit"),
    (_practice, "units.0.answers.0.kind", "complex", "units[0].answers[0].kind: expected one of int"),
    (_practice, "units.0.answers.0.expected", None, "units[0].answers[0].expected: missing"),
    (_practice, "units.0.answers.0.expected", "many", "units[0].answers[0].expected: expected a value of kind int"),
    (_practice, "units.4.variants.expected.0.0", "x", "units[4].variants.expected: expected 16 lists"),
    (_practice, "references", {"m": "/etc/passwd"}, "references.m: expected null or references/<file>.py"),
    (_practice, "written.0.question", "q99", "written[0]: expected a question of this assignment"),
])
def test_a_malformed_field_is_named(make, path, value, says):
    with pytest.raises(InvalidChecks) as err:
        read_checks(_set(make(), path, value), generators=inputs.GENERATORS, comparators=comparators.CHECKS)
    assert says in str(err.value)


def test_what_an_instructor_writes_is_checked_as_it_is_written():
    """The builder's objects are the grader's, so a wrong answer or probe fails in question.py or task.py,
    at build time, not in the autograder."""
    with pytest.raises(ValueError, match="expected letter 'E' is not one of the choices"):
        Answer("q", "choice", "E", choices=(("A", "a"), ("B", "b")))
    with pytest.raises(ValueError, match="dtype 'float16'"):
        Probe("p", 1, dtype="float16")
    assert Answer("q", "choice", "B", choices=(("A", "a"), ("B", "b"))).letters == "AB"
    pairs = Probe("p", 1, (("q", {"normal": [2, 3]}),))
    assert pairs.args[0].generator == "normal" and pairs.to_json()["args"] == [["q", {"normal": [2, 3]}]]
