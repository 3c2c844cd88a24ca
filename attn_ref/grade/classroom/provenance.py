"""Which grader graded each submission: attn-ref's version (``attn_ref.__version__``, the one source, recorded
in results.json's extra_data as ``attn_ref_version``) beside the autograder's (its ``version``: the hash of
everything in the zip that decides a score). grades.csv has both on each row; the printed summary and
report.html say which graded the class, and, where a class was resumed or regraded in part after an
upgrade or a new zip, each pair with its count of submissions.

Results of an older grader hold no attn-ref version: shown as unrecorded, never guessed."""

from __future__ import annotations

import html
from collections import Counter

from ..results import Results

FIELDS = ("grader", "autograder")  # grades.csv's columns
SHORT = 12  # hex digits of the autograder's version in a line of text (as the results' own note gives it)
UNRECORDED = "attn-ref (version not recorded: an older grader)"


def graded_by(results: Results) -> tuple[str, str]:
    """(grader, autograder version) of one submission's results ("" where they record none: not graded yet)."""
    autograder = results.autograder_version or ""
    grader = results.grader_version
    return (f"attn-ref {grader}" if grader else (UNRECORDED if autograder else ""), autograder)


def cells(results: Results) -> dict[str, str]:
    """grades.csv's cells of one submission."""
    return dict(zip(FIELDS, graded_by(results)))


def counts(graded: list) -> Counter:
    """(grader, autograder version) -> submissions, of those whose results record an autograder."""
    return Counter(pair for pair in (graded_by(g.results) for g in graded) if pair[1])


def _pairs(found: Counter, short: bool) -> list[str]:
    return [f"{grader} with autograder {autograder[:SHORT] if short else autograder} ({n} submission{'s' * (n != 1)})"
            for (grader, autograder), n in sorted(found.items(), key=lambda item: (-item[1], item[0]))]


def summary(graded: list) -> list[str]:
    """The printed summary's line: what graded the class."""
    found = counts(graded)
    if not found:
        return []
    if len(found) == 1:
        return [f"graded by {_pairs(found, True)[0]}"]
    return [f"graded by {len(found)} graders (a run resumed or regraded in part after a change?): "
            + "; ".join(_pairs(found, True))]


def report_line(graded: list) -> str:
    """report.html's line under its title."""
    found = counts(graded)
    if not found:
        return ""
    return f'<p class="note" id="grader">Graded by {html.escape("; ".join(_pairs(found, False)))}.</p>'
