"""One set of type rules: for every (question, answer form) pair, the public check (`grader.check`, run
from the released notebook's own test source) and hidden grading reach the same verdict on the form."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import nbformat
import numpy as np
import pytest
import torch
from course_units import ANSWERS, assignment

from attn_ref.grade.scoring.comparators import check_answer
from attn_ref.portable import typerules
from attn_ref.release.hidden_checks import checks

PRACTICE = checks(assignment("practice")).to_json()
EXPECTED = {a["name"]: a for q in PRACTICE["units"] for a in q["answers"]}
QUESTION = {a["name"]: q["name"] for q in PRACTICE["units"] for a in q["answers"]}
A = ANSWERS

# (variable, the value as a student might write it, accepted?)
FORMS = [
    ("q2_scores", A["q2_scores"], True),
    ("q2_scores", float(A["q2_scores"]), True),  # 4096 ** 2 / 1.0
    ("q2_scores", np.int64(A["q2_scores"]), True),
    ("q2_scores", np.float64(A["q2_scores"]), True),
    ("q2_scores", torch.tensor(A["q2_scores"]), True),
    ("q2_scores", np.array(A["q2_scores"]), True),
    ("q2_scores", Fraction(A["q2_scores"], 1), True),
    ("q2_scores", Decimal(A["q2_scores"]), True),
    ("q2_scores", A["q2_scores"] + 0.5, False),  # not whole
    ("q2_scores", str(A["q2_scores"]), False),
    ("q2_scores", True, False),  # a bool is never a number
    ("q2_scores", [A["q2_scores"]], False),
    ("q2_scores", np.array([A["q2_scores"]]), False),  # an array, not a scalar
    ("q2_scores", ..., False),
    ("q2_bytes", Fraction(A["q2_bytes"] * 10, 10), True),
    ("q2_megabytes", A["q2_megabytes"], True),
    ("q2_megabytes", Fraction(A["q2_bytes"], 10 ** 6), True),
    ("q2_megabytes", Decimal("67.108864"), True),
    ("q2_megabytes", np.float32(A["q2_megabytes"]), True),
    ("q2_megabytes", torch.tensor(A["q2_megabytes"], dtype=torch.float64), True),
    ("q2_megabytes", 67, True),  # an int where a float is asked
    ("q2_megabytes", "67.1", False),
    ("q2_megabytes", float("nan"), False),
    ("q2_megabytes", None, False),
    ("q5_rnn_product", torch.tensor(0.9) ** 49, True),  # a 0-d torch tensor
    ("q5_rnn_product", np.float64(0.9) ** 49, True),
    ("q5_rnn_product", Fraction(9, 10) ** 49, True),
    ("q5_rnn_product", np.array(0.9 ** 49), True),
    ("q8_product_39", Decimal("0.9") ** 39, True),
    ("q8_product_39", complex(0.0164, 0), False),
    ("q4_ratio", 32 ** 2 / 8 ** 2, True),  # 16.0
    ("q4_ratio", np.int32(16), True),
    ("q4_ratio", torch.tensor(16), True),
    ("q4_ratio", Fraction(1024, 64), True),
    ("q7_changes_training_cost", False, True),
    ("q7_changes_training_cost", np.False_, True),
    ("q7_changes_training_cost", torch.tensor(False), True),
    ("q7_changes_training_cost", 0, False),  # 0 and 1 are not booleans
    ("q7_changes_training_cost", "False", False),
    ("q1_choice", "B", True),
    ("q1_choice", "b", True),
    ("q1_choice", " B ", True),
    ("q1_choice", "B.", False),  # a format problem
    ("q1_choice", "B) parallel", False),
    ("q1_choice", "E", False),  # not one of the letters
    ("q1_choice", 2, False),
    ("q6_vaswani_queries", "D", False),  # q6 has A-C
    ("q9_scores", {32: 1024, 512: 262144, 4096: 16777216}, True),
    ("q9_scores", {"32": 1024, "512": 262144, "4096": 16777216}, True),
    ("q9_scores", {np.int64(32): np.int64(1024), 512: 262144.0, 4096: torch.tensor(16777216)}, True),
    ("q9_scores", {32.0: 1024, 512: 262144, 4096: 16777216}, True),
    ("q9_scores", {32: "1024", 512: 262144, 4096: 16777216}, False),
    ("q9_scores", {True: 1024, 512: 262144, 4096: 16777216}, False),
    ("q9_scores", [1024, 262144, 16777216], False),
]


@pytest.fixture(scope="module")
def public_tests(release):
    out, _ = release
    nb = nbformat.read(str(out / "assignments/practice/practice.ipynb"), as_version=4)
    return nb.metadata["otter"]["tests"]


def _public_verdict(public_tests, variable: str, value) -> bool:
    """What `grader.check` says: the question's released test, run by otter on a notebook where every
    other answer of the question is the key's value and this one is ``value``."""
    from otter.test_files.exception_test import ExceptionTestFile

    question = QUESTION[variable]
    env = {}
    for name, answer in EXPECTED.items():
        if QUESTION[name] == question:
            env[name] = dict(answer["expected"]) if answer["kind"] == "int_dict" else answer["expected"]
    env[variable] = value
    test_file = ExceptionTestFile.from_string(public_tests[question], path=f"{question}.py")
    test_file.run(env)
    return test_file.passed_all


def test_the_table_is_large_enough():
    assert len(FORMS) >= 40 and len({QUESTION[v] for v, _, _ in FORMS}) >= 6


@pytest.mark.parametrize("variable, value, accepted", FORMS, ids=[f"{v}-{i}" for i, (v, _, _) in enumerate(FORMS)])
def test_public_and_hidden_judge_the_form_alike(public_tests, variable, value, accepted):
    answer = EXPECTED[variable]
    hidden_ok, message = check_answer(answer["kind"], answer["expected"], typerules.describe(value), answer["letters"])
    public_ok = _public_verdict(public_tests, variable, value)
    assert public_ok is accepted, f"grader.check says {public_ok} for {value!r}"
    assert hidden_ok is accepted, f"hidden grading says {hidden_ok} for {value!r}: {message}"
