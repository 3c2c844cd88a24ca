"""The misconception report of a class: how many submissions made each named mistake, per task, and how
many failed a task with no known match (candidates for a new mutant): mistakes.csv, mistakes.png and a
section of report.html. Read from each results file's extra_data (``probes[].mistake``, functions.py)."""

from __future__ import annotations

import html
import io
from collections import Counter
from pathlib import Path

from ..owned import write_private
from .spreadsheet import write_csv

NO_MATCH = "(failed, no known mistake matched)"
FIELDS = ("task", "mistake", "submissions")


def counts(book) -> list[tuple[str, str, int]]:
    """(task, mistake or NO_MATCH, submissions), in the assignment's order, most common first in a task."""
    found: Counter = Counter()
    for g in book.with_grade:
        seen: dict[str, set] = {}
        failed: set[str] = set()
        for p in g.results.probes:  # each line's fields typed (results.ProbeEvidence): a wrong type reads as None
            if p.task is None or p.passed is not False:
                continue
            failed.add(p.task)
            if p.mistake is not None:
                seen.setdefault(p.task, set()).add(p.mistake)
        for task in failed:
            for mistake in seen.get(task) or {NO_MATCH}:
                found[task, mistake] += 1
    order = {name: i for i, name in enumerate(book.units)}
    return sorted(((task, mistake, n) for (task, mistake), n in found.items()),
                  key=lambda row: (order.get(row[0], len(order)), row[1] == NO_MATCH, -row[2], row[1]))


def write_mistakes(out: Path, book) -> list[tuple[str, str, int]]:
    rows = counts(book)
    write_csv(out / "mistakes.csv", FIELDS, rows)
    if rows:
        write_private(out / "mistakes.png", _chart(rows, book.checks.assignment))
    return rows


def _chart(rows: list[tuple[str, str, int]], assignment: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    labels = [f"{task}: {mistake[:60]}" for task, mistake, _ in rows]
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(rows) + 1.2))
    ax.barh(range(len(rows)), [n for *_, n in rows], color=["#bbb" if m == NO_MATCH else "#4a7ab5" for _, m, _ in rows])
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


def section(rows: list[tuple[str, str, int]]) -> str:
    """report.html's section: the table (the chart is mistakes.png beside it)."""
    if not rows:
        return '<section id="mistakes"><h2>Named mistakes</h2><p>No task failed, or no task declares mutants.</p></section>'
    body = "".join(f"<tr><td>{html.escape(task)}</td><td>{html.escape(mistake)}</td><td>{n}</td></tr>"
                   for task, mistake, n in rows)
    return ('<section id="mistakes"><h2>Named mistakes</h2><p class="note">Submissions whose failed probes matched '
            "a declared mutant of the task (one submission may count under several); the rows "
            f"{html.escape(NO_MATCH)} are candidates for a new mutant. Also in mistakes.csv and mistakes.png.</p>"
            f"<table><tr><th>task</th><th>mistake</th><th>submissions</th></tr>{body}</table></section>")
