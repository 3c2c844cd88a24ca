"""report.html, the integrity report beside the gradebook: for a TA to read in a minute, never a score change.

Top to bottom, what decides most first (the page has no script; all student text is escaped, never rendered):

* a summary: submissions and students, their statuses, the scores that differ from a Gradescope export
  with their questions (or that the export has no scores), the integrity flags, how many pairs look alike;
* what graded the class (attn-ref's version, the autograder's) and the TAs' adjustments: who changed what
  and why, and each row of adjustments.csv not applied, with why;
* the lines the class failed (mistakes.py): each probe line's pass rate, the lowest first, with the known
  mistakes and the unexplained failures under it;
* the most similar pairs across all questions: two submissions, the questions where they are over the
  threshold, the highest similarity;
* per question, the pairs over the threshold, each pair's code folded in <details>, side by side, the shared
  parts marked. Measured with copydetect (MOSS-style winnowing; made for this) on each submission's graded
  code (graded_code.py: what its graded name is bound to, comments and docstrings out), only the candidates
  an index of fingerprints names compared in full (similarity.py): the starter's lines (the signature, given
  to everyone) are left out of the matching and shown unmarked;
* in full: the scores that differ from Gradescope's, and each student's integrity flags.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..checks_json import Unit
from ..inkernel.text import plain_lines
from ..inkernel.wire import Status
from ..intake import submission as submission_files
from ..owned import write_private
from . import adjustments, mistakes, provenance
from .graded_code import GradedCode, starter_code
from .similarity import THRESHOLD, similar_pairs, similarity_pool

PAIRS_PER_UNIT = 50  # pairs shown per question: more says "the threshold is too low", not "read them all"
OVERVIEW_ROWS = 30  # pairs in the overview across questions
SUMMARY_ROWS = 8  # differing scores in the summary (the rest in the full list): the summary stays above the fold
SUMMARY_NAMES = 5  # names per line of the summary
UNIT_CODE_BYTES = 200_000  # a question's code shown in the page: the pairs after it are counted, not shown
LIST_ROWS = 200  # rows of the full lists (differing scores, flags): the page stays a few MB whatever the class


# ---- the page -------------------------------------------------------------------------------------------

# Code wraps inside its column (pre-wrap, long tokens broken, minmax(0, 1fr) so that a long line cannot
# widen the grid): a TA never scrolls sideways, and the summary stays compact enough for the first screen.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:80rem;margin:1rem auto;padding:0 1rem;line-height:1.35}}
h1{{font-size:1.4rem;margin:.3rem 0}} h2{{font-size:1.15rem;margin:1.2rem 0 .4rem}} h3{{font-size:1rem;margin:1rem 0 .3rem}}
table{{border-collapse:collapse;max-width:100%}} td,th{{border:1px solid #ccc;padding:.2rem .45rem;vertical-align:top;
text-align:left;overflow-wrap:anywhere}}
#summary{{border:1px solid #bbb;border-radius:6px;background:#fafafa;padding:.1rem 1rem .6rem}}
#summary ul{{margin:.3rem 0;padding-left:1.2rem}} #summary li{{margin:.25rem 0}} #summary table{{margin:.3rem 0;font-size:92%}}
.note{{color:#555;font-size:92%}} details{{border-top:1px solid #e4e4e4;padding:.25rem 0}} summary{{cursor:pointer}}
.pair{{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:.5rem}}
pre{{background:#f7f7f7;padding:.5rem;margin:.3rem 0;font-size:85%;white-space:pre-wrap;overflow-wrap:anywhere;overflow-x:auto}}
mark{{background:#ffd54f}} .starter{{color:#999}}</style></head><body><h1>{title}</h1>
<p class="note">For a TA to read: similarity and flags are patterns, not proof, and change no score.</p>
{body}</body></html>
"""


def _who(g) -> str:
    return ", ".join(s.name for s in g.sub.people) or g.sub.key


def _names(items: list[str]) -> str:
    shown = ", ".join(html.escape(i) for i in items[:SUMMARY_NAMES])
    return shown + (f" and {len(items) - SUMMARY_NAMES} more" if len(items) > SUMMARY_NAMES else "")


def _anchor(unit: str) -> str:
    return "q-" + re.sub(r"[^A-Za-z0-9_-]", "_", unit)


@dataclass
class Measured:
    unit: Unit
    pairs: list[tuple]  # similar_pairs' tuples
    error: str = ""  # why it was not measured
    not_compared: tuple[str, ...] = ()  # submissions whose notebook could not be read: compared with no one


def measure(book) -> list[Measured]:
    """Each unit's pairs over the threshold, the first PAIRS_PER_UNIT of each marked (the ones the page shows);
    the class fingerprinted on a pool of processes where it is large (similarity_pool)."""
    units = book.checks.units
    codes: dict[str, dict[str, str]] = {u.name: {} for u in units}  # the code alone is kept, never a notebook
    unread = []
    for g in book.graded:
        try:
            graded = GradedCode(submission_files.load(g.sub.path)[0])
            found = {u.name: graded.of(u) for u in units}
        except Exception:  # noqa: BLE001 - unreadable: nothing to compare (its row in grades.csv says why)
            unread.append(g.sub.key)
            continue
        for name, code in found.items():
            codes[name][g.sub.key] = code
    measured = []
    with similarity_pool(len(next(iter(codes.values()), {}))) as pool:
        for unit in units:
            try:
                pairs = similar_pairs(codes[unit.name], starter_code(unit), marked=PAIRS_PER_UNIT, pool=pool)
                measured.append(Measured(unit, pairs, not_compared=tuple(unread)))
            except Exception as err:  # noqa: BLE001 - the report is for reading; the gradebook never waits on it
                measured.append(Measured(unit, [], f"{type(err).__name__}: {str(err)[:200]}", tuple(unread)))
    return measured


@dataclass
class Comparison:
    """The local scores against a Gradescope export's."""

    export: bool  # the class came from a Gradescope export
    compared: int  # submissions the export gives a score
    unscored: int  # submissions of the export without one
    rows: list[tuple]  # (graded, here, Gradescope, the questions that differ) for each that differs


def _compare(book) -> Comparison:
    rows, compared, unscored = [], 0, 0
    for g in book.graded:
        theirs = g.sub.gradescope
        score = theirs.get("score") if theirs else None  # the export's total (discover.py), not a results file
        if score is None:
            unscored += bool(theirs)
            continue
        if not g.has_grade:  # no local grade to compare (its row says why), not a local 0
            continue
        compared += 1
        ours = round(sum(g.scores.values()), 6)
        if abs(ours - score) < 1e-6:
            continue
        units = [f"{u}: here {g.scores.get(u, 0):g}, Gradescope {s:g}" for u, s in theirs.get("tests", {}).items()
                 if s is not None and u in g.scores and abs(g.scores[u] - s) > 1e-6]
        unlisted = "(the questions the export lists agree)" if theirs.get("tests") else "(the export lists no per-question scores)"
        rows.append((g, ours, score, "; ".join(units) or unlisted))
    return Comparison(any(g.sub.gradescope for g in book.graded), compared, unscored, rows)


def _flags(g) -> list[str]:
    return g.results.integrity_flags + [f"{unit}: called {', '.join(map(str, names))}"
                                        for unit, names in g.results.forbidden_calls.items()]


def _score_table(rows: list[tuple]) -> str:
    return ("<table><tr><th>students</th><th>here</th><th>Gradescope</th><th>questions that differ</th></tr>"
            + "".join(f"<tr><td>{html.escape(_who(g))}</td><td>{ours:g}</td><td>{theirs:g}</td><td>{html.escape(units)}</td></tr>"
                      for g, ours, theirs, units in rows) + "</table>")


def _overview(measured: list[Measured]) -> list[tuple[str, str, dict[str, float]]]:
    """(key a, key b, {unit: similarity}) per pair over the threshold somewhere, the most similar first."""
    found: dict[tuple[str, str], dict[str, float]] = {}
    for m in measured:
        for a, b, similarity, *_ in m.pairs:
            found.setdefault((a, b), {})[m.unit.name] = similarity
    return sorted(((a, b, units) for (a, b), units in found.items()),
                  key=lambda p: (-max(p[2].values()), -len(p[2]), p[0], p[1]))


def _summary(book, measured: list[Measured], overview: list, scores: Comparison, lines: str = "") -> str:
    items = [_class_line(book.graded), _gradescope_line(scores), *([lines] if lines else [])]
    flagged = [_who(g) for g in book.graded if _flags(g)]
    items.append(f'<b>Integrity flags: {len(flagged)} submissions</b> ({_names(flagged)}; <a href="#flags">each flag</a>).'
                 if flagged else "Integrity flags: none.")
    units = {u for _, _, found in overview for u in found}
    unmeasured = sum(bool(m.error) for m in measured)
    line = (f'<b>Code similarity: {len(overview)} pairs at {THRESHOLD:.0%} or more</b> in {len(units)} of {len(measured)} '
            f'questions (<a href="#pairs">the most similar</a>)' if overview else
            f"Code similarity: no pair at {THRESHOLD:.0%} or more in {len(measured)} questions")
    items.append(line + (f"; {unmeasured} questions not measured" if unmeasured else "") + ".")
    return '<section id="summary"><h2>Summary</h2><ul>' + "".join(f"<li>{i}</li>" for i in items) + "</ul></section>"


def _class_line(graded: list) -> str:
    """How many submissions and students, how many graded ok, and the commonest reasons the rest were not."""
    students = sum(max(1, len(g.sub.students)) for g in graded)
    groups = sum(len(g.sub.students) > 1 for g in graded)
    statuses = Counter(g.status for g in graded if g.status != Status.OK.value)
    bad = sum(statuses.values())
    common = sorted(statuses.items(), key=lambda item: (-item[1], item[0]))  # reasons can be many and long: the top few
    shown = ", ".join(f"{n} × {html.escape(s[:80])}" for s, n in common[:3]) + (f", {len(common) - 3} other reasons" if len(common) > 3 else "")
    return (f"<b>{len(graded)} submissions, {students} students</b>" + (f" ({groups} group submissions)" if groups else "")
            + f"; {len(graded) - bad} graded ok" + (f", {bad} not ({shown}; grades.csv says why)" if bad else ""))


def _gradescope_line(scores: Comparison) -> str:
    """Whether the local scores equal Gradescope's, and the first that differ."""
    if not scores.export:
        return "Gradescope: not an export, no scores to compare."
    if not scores.compared:
        return "Gradescope: <b>the export has no scores</b>, so none were compared."
    unscored = f"{scores.unscored} without a score in the export" if scores.unscored else ""
    if not scores.rows:
        return f"Gradescope: every local score equals Gradescope's ({scores.compared} compared" + (f"; {unscored}" if unscored else "") + ")."
    more = len(scores.rows) - SUMMARY_ROWS
    return (f"<b>Scores that differ from Gradescope's: {len(scores.rows)} of {scores.compared}</b>"
            + (f" ({unscored})" if unscored else "") + _score_table(scores.rows[:SUMMARY_ROWS])
            + (f'… and {more} more in <a href="#gradescope">the full list</a>.' if more > 0 else ""))


def _pairs_section(book, overview: list) -> str:
    if not overview:
        return ""
    who = {g.sub.key: _who(g) for g in book.graded}

    def person(key: str) -> str:
        return f"{html.escape(who.get(key, key))} <span class='note'>({html.escape(key)})</span>"

    rows = []
    for a, b, units in overview[:OVERVIEW_ROWS]:
        found = ", ".join(f'<a href="#{_anchor(u)}">{html.escape(u)}</a> {s:.0%}'
                          for u, s in sorted(units.items(), key=lambda item: -item[1]))
        rows.append(f"<tr><td>{person(a)}</td><td>{person(b)}</td><td>{found}</td><td><b>{max(units.values()):.0%}</b></td></tr>")
    more = len(overview) - OVERVIEW_ROWS
    return ('<section id="pairs"><h2>Most similar pairs across questions</h2><table><tr><th>student A</th><th>student B</th>'
            f"<th>questions at {THRESHOLD:.0%} or more</th><th>highest</th></tr>" + "".join(rows) + "</table>"
            + (f"<p class='note'>… and {more} more pairs, per question below.</p>" if more > 0 else "") + "</section>")


def _units_section(book, measured: list[Measured]) -> str:
    who = {g.sub.key: _who(g) for g in book.graded}
    parts = [f'<section id="questions"><h2>Code similarity per question</h2><p class="note">copydetect; pairs at '
             f"{THRESHOLD:.0%} or more, each folded: open it for the code side by side, <mark>shared code</mark> marked, "
             "<span class='starter'>the starter's lines</span> (given to everyone) neither compared nor marked.</p>"]
    if unread := (measured[0].not_compared if measured else ()):
        parts.append(f"<p>Not compared ({len(unread)}: their notebook could not be read; grades.csv says why): "
                     f"{_names([who.get(k, k) for k in unread])}.</p>")
    for m in measured:
        name, title = html.escape(m.unit.name), html.escape(m.unit.title)
        if m.error:
            parts.append(f'<h3 id="{_anchor(m.unit.name)}">{name}: not measured ({html.escape(m.error)})</h3>')
            continue
        parts.append(f'<h3 id="{_anchor(m.unit.name)}">{name}: {title} ({len(m.pairs)} pairs)</h3>')
        shown = code = 0
        for a, b, similarity, code_a, code_b in m.pairs[:PAIRS_PER_UNIT]:
            if code > UNIT_CODE_BYTES:
                break
            parts.append(f"<details><summary><b>{similarity:.0%}</b>: {html.escape(who[a])} ({html.escape(a)}) and "
                         f"{html.escape(who[b])} ({html.escape(b)})</summary>"
                         f"<div class='pair'><pre>{code_a}</pre><pre>{code_b}</pre></div></details>")
            shown, code = shown + 1, code + len(code_a) + len(code_b)
        if len(m.pairs) > shown:
            parts.append(f"<p class='note'>… and {len(m.pairs) - shown} more pairs.</p>")
    return "\n".join(parts) + "</section>"


def _gradescope_section(scores: Comparison) -> str:
    if len(scores.rows) <= SUMMARY_ROWS:
        return ""  # the summary holds them all, or says why there are none
    more = len(scores.rows) - LIST_ROWS
    return (f'<section id="gradescope"><h2>Scores that differ from Gradescope\'s ({len(scores.rows)})</h2>{_score_table(scores.rows[:LIST_ROWS])}'
            + (f"<p class='note'>… and {more} more: grades.csv's totals beside the export's scores.</p>" if more > 0 else "") + "</section>")


def _flags_section(book) -> str:
    flagged = [g for g in book.graded if _flags(g)]
    rows = [f"<tr><td>{html.escape(_who(g))}</td><td>{html.escape(g.sub.key)}</td><td>"
            + "<br>".join(html.escape(f) for f in _flags(g)[:30]) + "</td></tr>" for g in flagged[:LIST_ROWS]]
    table = "<table><tr><th>students</th><th>submission</th><th>flags</th></tr>" + "".join(rows) + "</table>" if rows else "<p>None.</p>"
    more = (f"<p class='note'>… and {len(flagged) - LIST_ROWS} more submissions: each one's flags are in its "
            "results/KEY.json (extra_data.integrity_flags).</p>" if len(flagged) > LIST_ROWS else "")
    return f'<section id="flags"><h2>Integrity flags ({len(flagged)})</h2>{table}{more}</section>'


def _grading_record(book) -> str:
    """What graded the class (attn-ref's version beside the zip's hash: provenance.py) and what the TAs changed
    after (adjustments.csv: adjustments.py), under the summary."""
    return provenance.report_line(book.graded) + adjustments.section(book)


def write_report(path: Path, book, measured: list[Measured] | None = None) -> None:
    """report.html; ``measured``: the similarity, where already measured (``measure``)."""
    title = f"{book.checks.assignment}: integrity report ({len(book.graded)} submissions)"
    measured = measure(book) if measured is None else measured
    overview = _overview(measured)
    scores = _compare(book)
    lines = mistakes.line_counts(book)
    body = (_summary(book, measured, overview, scores, mistakes.summary_line(lines)) + _grading_record(book)
            + (mistakes.section(lines) if book.checks.functions else "") + _pairs_section(book, overview)
            + _units_section(book, measured) + _gradescope_section(scores)
            + _flags_section(book))
    # the text rule over the whole page: student text in it is escaped, and now visible too (text.py)
    write_private(path, plain_lines(PAGE.format(title=html.escape(title), body=body)).encode())
