"""The misconception report of a class, counted here once for every page that shows it: per line (a probe's or
a question's answer), how many submissions passed it, and of those that failed it, how many made each named
mistake, how many no known mistake explains (candidates for a new mutant), and how many failed where no mutant
could name anything (not written, a cell error, withheld beside a stand-in). mistakes.csv (per line),
mistakes.png (per task) and report.html's table of lines, the most failed first. Read from each results file's
extra_data (``probes[]`` and ``answers[]``: task, probe, passed, mistake, cause; results.ProbeEvidence), only
for the lines the checks declare."""

from __future__ import annotations

import html
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..checks_json import FunctionUnit, QuestionUnit
from ..owned import write_private
from ..results import ProbeEvidence, Unnamed
from .spreadsheet import write_csv

NO_MATCH = "(failed, no known mistake matched)"
# A failed line no mutant could name, by why: counted apart from the candidates for a new mutant (NO_MATCH)
UNNAMED = {
    Unnamed.NOT_WRITTEN: "(not written: the function returned None, or the answer is still ...)",
    Unnamed.CELL_ERROR: "(cell error: not defined when graded, or the call did not finish)",
    Unnamed.STAND_IN: "(not written (stand-in): failed beside a correct stand-in, details withheld)",
}
NOT_WRITTEN = UNNAMED[Unnamed.NOT_WRITTEN]
UNEXPLAINED = (NO_MATCH, *UNNAMED.values())  # the labels that are not a named mistake
FIELDS = ("task", "line", "mistake", "submissions")


@dataclass
class LineCount:
    """One line (a probe's or an answer's) across the class: submissions graded on it, those that failed it,
    and why."""

    task: str
    line: str
    graded: int = 0
    failed: int = 0
    mistakes: Counter = field(default_factory=Counter)  # named mistake -> submissions
    unnamed: Counter = field(default_factory=Counter)  # NO_MATCH or an UNNAMED label -> submissions

    @property
    def pass_rate(self) -> float:
        return 1 - self.failed / self.graded if self.graded else 1.0

    @property
    def unexplained(self) -> int:
        """Failed, and no known mistake matched: candidates for a new mutant."""
        return self.unnamed[NO_MATCH]

    @property
    def not_written(self) -> int:
        return self.unnamed[NOT_WRITTEN]


def _label(p: ProbeEvidence) -> str:
    """A failed line's row: its named mistake, or why it has none."""
    if p.mistake is not None:
        return p.mistake
    return UNNAMED[p.cause] if p.cause is not None else NO_MATCH


def _lines_of(g, declared) -> dict[tuple[str, str], ProbeEvidence]:
    """A submission's evidence of each declared line, the first where a line is written twice."""
    seen: dict[tuple[str, str], ProbeEvidence] = {}
    for p in g.results.probes + g.results.answers:  # each field typed (results.ProbeEvidence): a wrong type reads as None
        key = (p.task, p.probe)
        if key in declared and p.passed is not None and key not in seen:
            seen[key] = p
    return seen


def line_counts(book) -> list[LineCount]:
    """Every declared line some submission was graded on, the most failed share first (ties: the assignment's
    order). A results file's line the checks do not declare is not counted: the table is the assignment's."""
    lines = {(task, line): LineCount(task, line) for task, line in _declared(book)}
    order = {key: i for i, key in enumerate(lines)}
    for g in book.with_grade:
        for key, p in _lines_of(g, lines).items():
            count = lines[key]
            count.graded += 1
            if not p.passed:
                count.failed += 1
                if p.mistake is not None:
                    count.mistakes[p.mistake] += 1
                else:
                    count.unnamed[_label(p)] += 1
    return sorted((c for c in lines.values() if c.graded), key=lambda c: (c.pass_rate, order[c.task, c.line]))


def _declared(book) -> list[tuple[str, str]]:
    """(task, line) of every line the checks declare, a probe's or a question's answer, in the assignment's order."""
    found = []
    for u in book.checks.units:
        if isinstance(u, FunctionUnit):
            found += [(u.name, p.name) for p in u.probes]
        elif isinstance(u, QuestionUnit):
            found += [(u.name, a.name) for a in u.answers]
    return found


def counts(book) -> list[tuple[str, str, int]]:
    """(task, mistake or why none is named, submissions), in the assignment's order, most common first in a task.
    A submission counts once per task: its named mistakes, or else NO_MATCH where a failed line has no cause
    (a candidate for a new mutant), or else the cause most of its failed lines share."""
    found: Counter = Counter()
    declared = set(_declared(book))
    for g in book.with_grade:
        failed: dict[str, list[ProbeEvidence]] = {}
        for p in _lines_of(g, declared).values():
            if p.passed is False:
                failed.setdefault(p.task, []).append(p)
        for task, lines in failed.items():
            named = {p.mistake for p in lines if p.mistake is not None}
            if not named:
                causes = Counter(_label(p) for p in lines)
                named = {NO_MATCH} if NO_MATCH in causes else {max(causes, key=lambda c: (causes[c], -UNEXPLAINED.index(c)))}
            for mistake in named:
                found[task, mistake] += 1
    order = {name: i for i, name in enumerate(book.units)}
    return sorted(((task, mistake, n) for (task, mistake), n in found.items()),
                  key=lambda row: (order.get(row[0], len(order)), row[1] in UNEXPLAINED, -row[2], row[1]))


def csv_rows(lines: list[LineCount]) -> list[tuple[str, str, str, int]]:
    """mistakes.csv: (task, line, mistake or NO_MATCH, submissions) for each failed line, in the lines' order."""
    rows = []
    for c in lines:
        named = sorted(c.mistakes.items(), key=lambda item: (-item[1], item[0]))
        rows += [(c.task, c.line, mistake, n) for mistake, n in named]
        rows += [(c.task, c.line, label, c.unnamed[label]) for label in UNEXPLAINED if c.unnamed[label]]
    return rows


def write_mistakes(out: Path, book) -> list[tuple[str, str, int]]:
    """mistakes.csv and mistakes.png."""
    write_mistakes_csv(out, book)
    return write_mistakes_chart(out, book)


def write_mistakes_csv(out: Path, book) -> None:
    write_csv(out / "mistakes.csv", FIELDS, csv_rows(line_counts(book)))


def write_mistakes_chart(out: Path, book) -> list[tuple[str, str, int]]:
    """mistakes.png (where a mistake was named or a failure was not; else an earlier run's is removed): its rows."""
    rows = counts(book)
    if rows:
        write_private(out / "mistakes.png", _chart(rows, book.checks.assignment))
    else:
        (out / "mistakes.png").unlink(missing_ok=True)
    return rows


def _chart(rows: list[tuple[str, str, int]], assignment: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    labels = [f"{task}: {mistake[:60]}" for task, mistake, _ in rows]
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(rows) + 1.2))
    ax.barh(range(len(rows)), [n for *_, n in rows], color=["#bbb" if m in UNEXPLAINED else "#4a7ab5" for _, m, _ in rows])
    ax.set_yticks(range(len(rows)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("submissions")
    ax.set_title(f"{assignment}: named mistakes per task")
    fig.tight_layout()
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=90)
    plt.close(fig)
    return image.getvalue()


SHOWN_MISTAKES = 5  # named mistakes under one line (the rest in mistakes.csv)


def section(lines: list[LineCount]) -> str:
    """report.html's table of lines: each line's pass rate, the most failed first, its named mistakes and
    its unexplained failures under it; the lines everyone passed are counted, not listed."""
    failed = [c for c in lines if c.failed]
    if not failed:
        return ('<section id="lines"><h2>Lines the class failed</h2><p>Every submission graded passed every line'
                f" ({len(lines)} lines).</p></section>")
    rows = []
    for c in failed:
        why = [f"{html.escape(m)}: {n}" for m, n in sorted(c.mistakes.items(), key=lambda i: (-i[1], i[0]))[:SHOWN_MISTAKES]]
        more = len(c.mistakes) - SHOWN_MISTAKES
        why += [f"… {more} more named mistakes (mistakes.csv)"] if more > 0 else []
        why += [f"<i>{html.escape(label.strip('()'))}</i>: {c.unnamed[label]}" for label in UNEXPLAINED if c.unnamed[label]]
        rows.append(f"<tr><td>{html.escape(c.task)}</td><td>{html.escape(c.line)}</td><td><b>{c.pass_rate:.0%}</b></td>"
                    f"<td>{c.failed} of {c.graded}</td><td>{'<br>'.join(why)}</td></tr>")
    passed = len(lines) - len(failed)
    return ('<section id="lines"><h2>Lines the class failed</h2><p class="note">Each probe line the class was graded on, '
            "the lowest pass rate first; under each, the submissions that failed it with each known mistake (a "
            "mutant of the task matched), those no known mistake explains (candidates for a new mutant or a hint), and "
            "those no mutant could explain: not written, a cell error (not defined, or the call did not finish), or "
            "withheld beside a stand-in"
            + (f"; {passed} lines every submission passed are not listed" if passed else "") + ". Also in mistakes.csv "
            "(per line) and mistakes.png (per task).</p><table><tr><th>task</th><th>line</th><th>passed</th><th>failed"
            f"</th><th>why</th></tr>{''.join(rows)}</table></section>")


def summary_line(lines: list[LineCount]) -> str:
    """The summary's line: the three lines failed most."""
    failed = [c for c in lines if c.failed][:3]
    if not failed:
        return "Lines: every submission passed every line." if lines else ""
    shown = "; ".join(f"{html.escape(c.task)} {html.escape(c.line[:60])} ({c.pass_rate:.0%} passed)" for c in failed)
    return f'<b>Lines failed most</b>: {shown} (<a href="#lines">every line</a>).'
