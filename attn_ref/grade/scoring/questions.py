"""Grading question units: the answer variables the notebook assigns, read as plain descriptions.

A question with parameters is graded against one variant: the identity's that whose_variant.py chooses from the
notebook's declaration and the platform's submitters. A visible 0-point line says whose numbers were graded.
"""

from __future__ import annotations

from ...portable.variants import combinations, variant_index
from ..checks_json import Answer
from ..inkernel.text import plain_text
from ..inkernel.wire import parse_values
from ..results import TEXT, TestResult, Unnamed, entry
from ..session import BudgetExhausted
from . import comparators as scoring
from .context import REFERENCE_MESSAGE, GradingContext, UnitResults
from .whose_variant import IDENTITY_VARIABLE, GradedIdentity, choose, declared_identity, explained

NUMBERS_ENTRY = "Your numbers: whose variant was graded"


def grade_questions(ctx: GradingContext) -> UnitResults:
    units = ctx.checks.questions
    varied = [q for q in units if q.parameters]
    names = [a.name for q in units for a in q.answers] + ([IDENTITY_VARIABLE] if varied else [])
    values, problem, timed_out = _read_answers(ctx, names)
    graded = choose(declared_identity((values or {}).get(IDENTITY_VARIABLE, {})), ctx.submitters) if varied else None
    tests, numbers, answers = [], {}, []
    for q in units:
        index = None
        if q.parameters and graded is not None:
            index = variant_index(ctx.checks.variant_key, graded.identity, q.name, len(q.variant_expected))
            numbers[q.name] = dict(q.defaults) if index is None else combinations([(n, list(v)) for n, v in q.parameters])[index]
        why_not = REFERENCE_MESSAGE if ctx.banned else problem
        unread = None if ctx.banned else Unnamed.CELL_ERROR  # why an answer not read has no mistake to name
        graded_answers = [_line(a, values, why_not, unread) for a in q.variant(index)]
        tests.append(entry(q, [line for line, _ in graded_answers], ctx.checks.visibility))
        answers += [{"task": q.name, "probe": line[1], **evidence} for line, evidence in graded_answers]
    extra: dict = {"answers": answers} if answers else {}
    if graded is not None:
        tests.insert(0, _numbers_entry(graded, numbers))
        extra["variant"] = {"graded_as": plain_text(graded.identity), "basis": graded.basis.value,
                            "declared": plain_text(graded.declared),
                            "flagged": graded.flagged, "numbers": numbers}
    return UnitResults(tests, extra, timed_out=timed_out)


def _line(a: Answer, values: dict | None, why_not: str, unread: Unnamed | None,
          ) -> tuple[tuple[bool, str, float, str], dict]:
    """One answer's line, (passed, label, points, message), failed with ``why_not`` when it is not checked; and its
    line of extra_data["answers"] (results.ProbeEvidence): the known mistake a wrong value is, or why a failed
    one has none to name (``unread``: where the answers were not read)."""
    if why_not:
        return (False, a.name, a.points, why_not), {"passed": False, **({"cause": unread.value} if unread else {})}
    ok, message, mistake = scoring.answer_verdict(a.kind, a.expected, values[a.name], a.letters, a.mistakes)
    evidence: dict = {"passed": ok}
    if mistake is not None:
        evidence["mistake"] = mistake
    elif not ok and (cause := _UNANSWERED.get(values[a.name].get("t"))):
        evidence["cause"] = cause.value
    return (ok, a.name, a.points, message), evidence


_UNANSWERED = {"missing": Unnamed.CELL_ERROR, "ellipsis": Unnamed.NOT_WRITTEN}  # an answer not assigned, or still `...`


def _read_answers(ctx: GradingContext, names: list[str]) -> tuple[dict | None, str, bool]:
    """The answer variables as plain descriptions, why they could not be read ("" when they were), and
    whether the budget ran out."""
    try:
        values, ran = ctx.session.request("read_values", lambda data: parse_values(data, names), names,
                                          timeout=ctx.limits.call, label="values")
    except BudgetExhausted:
        return None, "not graded: the time budget for this submission ran out", True
    if values is None:
        return None, f"could not read your answers ({ran.error or ran.status.value})", False
    return values, "", False


def _numbers_entry(graded: GradedIdentity, numbers: dict[str, dict]) -> TestResult:
    """0 points, visible at once (before the due date too), so a mistyped identity is seen in time."""
    return TestResult(NUMBERS_ENTRY, 0.0, 0.0, explained(graded, numbers), TEXT, "visible")
