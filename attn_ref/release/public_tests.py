"""Public checks for answer variables, made from the same answers the hidden checks grade.

Each question gets one otter exception-format test (arguments are looked up in the student's globals).
It carries attn_ref/portable/typerules.py inlined (students have no attn_ref), so `grader.check` judges an answer's
form with exactly the code hidden grading uses; it then checks a plausible range, never the value.
"""

from __future__ import annotations

import textwrap

from .inline import module_body
from .units import Answer, Question

PENDING = "hidden checks grade the values after you submit"


def typerules_body() -> str:
    return module_body("attn_ref.portable", "typerules.py")


def _letters(answer: Answer) -> str:
    return "".join(letter for letter, _ in answer.choices)


def _range_check(answer: Answer) -> str:
    name, lines = answer.name, []
    if answer.low is not None:
        lines.append(f"assert value >= {answer.low!r}, {name!r} + ' should be at least {answer.low:g}'")
    if answer.high is not None:
        lines.append(f"assert value <= {answer.high!r}, {name!r} + ' should be at most {answer.high:g}'")
    return "\n".join(lines)


def question_test(question: Question) -> str:
    """The public test of one practice question: every answer's form by the type rules, then its range."""
    names = [a.name for a in question.answers]
    checks = []
    for answer in question.answers:
        checks.append(f"value, problem = read({answer.kind!r}, describe({answer.name}), {_letters(answer)!r})\n"
                      f"assert problem is None, {answer.name!r} + ': ' + str(problem)\n" + _range_check(answer))
    body = typerules_body() + "\n" + "\n".join(checks) + f"\nprint({question.name + ': the form of every answer is right; ' + PENDING!r})\n"
    return f"def test_{question.name}_answers({', '.join(names)}):\n" + textwrap.indent(body, "    ")
