"""Public checks with teeth: the released `grader.check` tests pass the solution and fail the bugs the
worked examples already expose (run from the released notebook's own test source, as otter runs them)."""

from __future__ import annotations

import math

import nbformat
import numpy as np
import pytest
import torch
from course_units import MUTANTS, assignment

PUBLICLY_CAUGHT = {  # task -> the mutant (course/lab/<task>/mutants/) its public checks must catch
    "c1": "writes into its input",
    "c2": "forgets the tanh",
    "c3": "scales by sqrt(d_v) instead of sqrt(d_k)",
    "c4": "the upper triangle (triu)",
    "c6": "recomputes every past key and value at each step",
    "c8": "one step too few (factor ** (T - 2))",
}


@pytest.fixture(scope="module")
def public_tests(release):
    out, _ = release
    return nbformat.read(str(out / "assignments/lab/lab.ipynb"), as_version=4).metadata["otter"]["tests"]


def solution_namespace() -> dict:
    env = {"np": np, "torch": torch, "math": math}
    for task in assignment("lab").units:
        exec(task.starter, env)  # the starter with its solution (markers are comments)
    return env


def passes(public_tests, task: str, env: dict) -> bool:
    from otter.test_files.exception_test import ExceptionTestFile

    test_file = ExceptionTestFile.from_string(public_tests[task], path=f"{task}.py")
    test_file.run(env)
    return test_file.passed_all


def test_the_solution_passes_every_public_check(public_tests):
    env = solution_namespace()
    assert all(passes(public_tests, task.name, env) for task in assignment("lab").units)


@pytest.mark.parametrize("task, label", sorted(PUBLICLY_CAUGHT.items()))
def test_each_bug_the_examples_expose_fails_its_public_check(public_tests, task, label):
    env = solution_namespace()
    _, _, source, _ = next(bug for bug in MUTANTS[task] if bug[0] == label)
    exec(source, env)
    assert not passes(public_tests, task, env), f"grader.check('{task}') passes: {label}"


def test_a_closed_form_for_c8_fails_its_public_check_on_autograd(public_tests):
    """factor ** (T - 1) gives every value and lost only the hidden "by autograd" point, with every public check
    green: a public check now says the gradient was not computed by autograd."""
    env = solution_namespace()
    exec("def rnn_gradient_norm(T, factor):\n    return float(abs(factor) ** (T - 1))\n", env)
    assert not passes(public_tests, "c8", env)

