"""Grading question units: the answer variables the notebook assigns, read as plain descriptions."""

from __future__ import annotations

from ..results import entry
from ..session import BudgetExhausted
from ..wire import parse_values
from . import comparators as scoring
from .context import REFERENCE_MESSAGE, GradingContext, UnitResults


def grade_questions(ctx: GradingContext) -> UnitResults:
    units = ctx.checks.questions
    names = [a.name for q in units for a in q.answers]
    problem, values, timed_out = "", {}, False
    try:
        values, outcome = ctx.session.request("read_values", lambda data: parse_values(data, names), names,
                                              timeout=ctx.limits.call, label="values")
        if values is None:
            problem = f"could not read your answers ({outcome.error or outcome.status.value})"
    except BudgetExhausted:
        problem, timed_out = "not graded: the time budget for this submission ran out", True
    tests = []
    for q in units:
        lines = []
        for a in q.answers:
            if ctx.banned or problem:
                lines.append((False, a.name, a.points, REFERENCE_MESSAGE if ctx.banned else problem))
                continue
            ok, message = scoring.check_answer(a.kind, a.expected, values[a.name], a.letters, a.mistakes)
            lines.append((ok, a.name, a.points, message))
        tests.append(entry(q, lines, ctx.checks.visibility))
    return UnitResults(tests, timed_out=timed_out)
