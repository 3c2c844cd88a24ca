"""The gradebook of a class: grades.csv (a row per student), the written answers' pages and score sheet,
the summary (printed and summary.png), a Canvas import file where asked, and the integrity report; all
written from whatever results exist now (a partial run gives a partial gradebook), private to their owner.
The TAs' adjustments (adjustments.csv, adjustments.py) are applied on every run, after the written scores:
grades.csv keeps the automatic total beside the adjusted one, and canvas.csv imports the adjusted one.

A group submission is one submission and several students: counts and means are per submission, and
every student gets a row.

Never a made-up grade: a submission with no grade (not graded yet, an interrupted run, the grader or its
kernel failed: results.Outcome.NOT_GRADED) has empty score cells, a status that says why, and counts in
no mean and no histogram; a 0 the student caused (a corrupt notebook, another assignment, a timeout) stays 0.
"""

from __future__ import annotations

import fcntl
import io
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from ..checks_json import Checks
from ..inkernel.text import plain_text
from ..inkernel.wire import Status
from ..owned import open_private, private_folder, write_private
from ..results import CONTENT_HASH, Outcome, Results, max_points
from . import adjustments as adjusting
from . import provenance
from .beside import beside
from .discover import Submission, alike
from .mistakes import write_mistakes_chart, write_mistakes_csv
from .spreadsheet import write_csv
from .written_pages import merge_written_scores, write_written_pages

NOT_GRADED_YET = "not graded yet"  # the status of a submission without results: interrupted, or not reached


@dataclass
class Graded:
    """One submission as the gradebook sees it."""

    sub: Submission
    results: Results  # (results.json as a dict is read as Results)
    scores: dict[str, float]  # unit -> automatic score (none when it has no grade)
    written: dict[str, float | None] = field(default_factory=dict)  # written question -> the TA's score
    adjustments: list = field(default_factory=list)  # adjustments.Applied: the TAs' changes, in the file's order

    def __post_init__(self):
        self.results = Results.load(self.results)

    @property
    def has_grade(self) -> bool:
        """Whether a grade exists (full, partial or a 0 the student caused), as its results say."""
        return self.results.has_grade

    @property
    def status(self) -> str:
        status = self.results.status
        return "error: no results" if status is None else status

    @property
    def total(self) -> float | None:
        """None where no grade exists: an empty cell, never a 0 (it would overwrite a real grade in Canvas)."""
        if not self.has_grade:
            return None
        return sum(self.scores.values()) + sum(v for v in self.written.values() if v is not None)

    @property
    def adjusted_total(self) -> float | None:
        """The total with the TAs' adjustments (adjustments.csv): what canvas.csv imports; None without a grade."""
        total = self.total
        if total is None:
            return None
        return round(total + sum(a.after - a.before for a in self.adjustments), 6)


@dataclass
class Gradebook:
    checks: Checks
    graded: list[Graded]
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the run chose or left out, printed with the summary
    adjustments: adjusting.Adjustments | None = None  # what the run made of adjustments.csv (None: not read)
    unreadable_sheet: str = ""  # why written/scores.csv cannot be read ("" when it can): no score of it is taken
    written: list[str] = field(default_factory=list)  # the files this run wrote (names under --out), in order
    canvas_filled: int | None = None  # the roster rows canvas.csv gives a score (None: no canvas.csv written)

    @property
    def holds_back_import(self) -> bool:
        """Whether a TA's own file (a row of adjustments.csv, the score sheet) cannot be applied: an import now would
        publish grades without what they granted or typed, so canvas.csv waits and the run exits 4."""
        return bool(self.unreadable_sheet) or (self.adjustments is not None and self.adjustments.holds_back_import)

    @property
    def with_grade(self) -> list[Graded]:
        return [g for g in self.graded if g.has_grade]

    @property
    def units(self) -> list[str]:
        return [u.name for u in self.checks.units]

    @property
    def written_units(self) -> list[str]:
        return [f"{w.question}_written" for w in self.checks.written]

    def maximum(self, unit: str) -> float:
        if unit.endswith("_written"):
            return next(w.points for w in self.checks.written if f"{w.question}_written" == unit)
        return max_points(self.checks.unit(unit), False)

    @property
    def rows(self) -> list[dict]:
        """grades.csv: one row per student (a group's members share their submission's scores); scores are
        numbers, never text, so that the CSV writer tells them from student text (spreadsheet.py), and
        None (an empty cell) in the automatic columns and totals of a submission with no grade. ``total`` is
        the automatic total (with the written scores), ``adjusted total`` that with the TAs' adjustments
        (``adjustments`` says which), and ``grader`` and ``autograder`` what graded it (provenance.py)."""
        rows = []
        for g in self.graded:
            for person in g.sub.members:
                row = {**person.row(), "submission": g.sub.file_name}
                row.update({u: g.scores.get(u, 0.0) if g.has_grade else None for u in self.units})
                row.update({u: g.written.get(u) for u in self.written_units})  # the TA's, graded or not
                row["total"] = g.total
                row["adjusted total"] = g.adjusted_total
                row["status"] = g.status
                row["adjustments"] = adjusting.cell(self.adjustments, g.sub.key)
                row.update(provenance.cells(g.results))
                rows.append(row)
        return rows


def _results(out: Path, sub: Submission) -> Results:
    """The submission's results, if they are its own: written for its key and, where the batch hashed its files,
    graded from those files (a results file left by an earlier run on other files is no one's grade)."""
    try:
        results = Results.read(out / "results" / f"{sub.key}.json")
    except (OSError, ValueError):  # none, or not results (ResultsError is a ValueError)
        results = None
    if results is not None and _belongs(results, sub):
        return results
    return Results(0.0, extra={"status": NOT_GRADED_YET, "outcome": Outcome.NOT_GRADED.value})


def _belongs(results: Results, sub: Submission) -> bool:
    if results.extra.get("submission", sub.key) != sub.key:
        return False
    return not sub.content or results.recorded_hash(CONTENT_HASH) == sub.content


def collect(out: Path, subs: list[Submission], checks: Checks) -> Gradebook:
    graded = []
    for sub in subs:
        results = _results(out, sub)
        graded.append(Graded(sub, results, {}))
        if graded[-1].has_grade:  # the 0s of results with no grade are not scores
            graded[-1].scores = {t.unit: float(t.score) for t in results.tests if t.max_score > 0}
    return Gradebook(checks, graded)


def shared_students(book: Gradebook) -> list[str]:
    """A warning for each student (by SID, else email) whom several submissions name: each row of grades.csv
    is one student's in one submission, so such a student has several rows, and canvas.csv fills theirs with
    neither score (canvas.py)."""
    seen: dict[str, set[str]] = {}
    for g in book.graded:
        for person in g.sub.people:
            who = person.sid.strip() or person.email.strip().casefold()
            if who:
                seen.setdefault(who, set()).add(g.sub.key)
    return [f"{who} is a student of {len(keys)} submissions ({', '.join(sorted(keys)[:5])}): grades.csv has a row for each; "
            "check which one counts" for who, keys in sorted(seen.items()) if len(keys) > 1] + _alike_files(book)


def gone(out: Path, subs: list[Submission]) -> list[str]:
    """A note naming the results of submissions this class no longer has (a file deleted or renamed since an
    earlier run, a student dropped from the export): kept in results/, never in grades.csv, and said so."""
    keys = {sub.key for sub in subs}
    try:
        left = sorted(p.stem for p in (out / "results").iterdir() if p.suffix == ".json" and not p.name.startswith(".")
                      and p.stem not in keys)
    except OSError:  # no results folder yet
        return []
    if not left:
        return []
    return [f"results/ holds {len(left)} results of submissions this class no longer has ({', '.join(left[:5])}"
            f"{' …' if len(left) > 5 else ''}): kept there, not in grades.csv (a file removed or renamed since they were graded?)"]


def _alike_files(book: Gradebook) -> list[str]:
    """A warning for each name that several files of a plain class folder share, their case, Unicode form and
    extension aside (Ada.ipynb and ada.zip): the file name is all that names a student there, so these may be one
    student's uploads, each graded and given a row."""
    seen: dict[str, list[str]] = {}
    for g in book.graded:
        if not g.sub.people:  # named by its file alone (students named by an export are compared by SID or email)
            seen.setdefault(alike(g.sub.name or g.sub.path.name), []).append(g.sub.file_name)
    return [f"{len(names)} files have names alike ({', '.join(sorted(names)[:5])}): perhaps one student's; grades.csv "
            "has a row for each; check which one counts" for names in seen.values() if len(names) > 1]


def write_gradebook(out: Path, subs: list[Submission], checks: Checks, canvas: dict | None = None) -> Gradebook:
    """grades.csv, written/ (pages and score sheet), summary.png, mistakes.csv and .png, report.html and, where
    asked, canvas.csv."""
    private_folder(out / "locks")
    with open(open_private(out / "locks" / "gradebook.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs on one folder take turns here
        book = collect(out, subs, checks)
        book.warnings += shared_students(book)
        book.notes += gone(out, subs)
        if checks.written:
            write_written_pages(out / "written", book)
            book.warnings += merge_written_scores(out / "written", book)
            book.written.append("written")
        adjusting.write_template(out / adjusting.FILE)
        book.adjustments = adjusting.apply_adjustments(out / adjusting.FILE, book)  # after the written scores: they adjust those too
        write_csv(out / "grades.csv", grades_fields(book), book.rows)
        book.written += ["grades.csv", adjusting.FILE]
        plots = beside(lambda: write_plots(out, book), "attn-ref plots")  # drawn beside the report's similarity measures
        write_mistakes_csv(out, book)
        book.written.append("mistakes.csv")
        _write_report(out, book)
        if not plots():
            write_plots(out, book)
        book.written += [name for name in ("summary.png", "mistakes.png") if (out / name).exists()]  # each made or removed
        if canvas:
            book.warnings += _canvas(out, book, canvas)
            book.written += [n for n in CANVAS_FILES if (out / n).exists()] if not book.holds_back_import else []
    return book


CANVAS_FILES = ("canvas.csv", "canvas-missing.csv", "canvas-unmatched.csv")


def _write_report(out: Path, book: Gradebook) -> None:
    """report.html, written whole (write_private) or not at all: an earlier run's is removed, with a warning,
    where this run's cannot be written (a TA must never read last week's page as this run's)."""
    from .report import write_report

    try:
        write_report(out / "report.html", book)
        book.written.append("report.html")
    except Exception as err:  # noqa: BLE001 - grades.csv is written; the report is for reading
        (out / "report.html").unlink(missing_ok=True)
        book.warnings.append(f"report.html could not be written ({type(err).__name__}: {str(err)[:200]}); "
                             "an earlier run's report.html was removed")


def write_plots(out: Path, book: Gradebook) -> None:
    """summary.png, and mistakes.png (removed where no line failed)."""
    _summary_png(out / "summary.png", book)
    write_mistakes_chart(out, book)


def warm_up() -> None:
    """Import what drawing the plots needs (matplotlib: about half a second), while a core is idle (the batch's last
    submissions grade): the plots' process then starts with it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401


def grades_fields(book: Gradebook) -> list[str]:
    """grades.csv's header: Gradebook.rows's keys, in order."""
    return ["name", "sid", "email", "submission", *book.units, *book.written_units, "total", "adjusted total", "status",
            "adjustments", *provenance.FIELDS]


def _canvas(out: Path, book: Gradebook, canvas: dict) -> list[str]:
    """canvas.csv, unless adjustments.csv has rows that cannot be applied or the score sheet cannot be read: an
    import then would publish grades without what a TA granted or typed, so the files of an earlier run are removed
    too (adjustments.py, written_pages.py)."""
    if book.holds_back_import:
        for name in CANVAS_FILES:
            (out / name).unlink(missing_ok=True)
        why = "written/scores.csv cannot be read" if book.unreadable_sheet else f"{adjusting.FILE} has rows that cannot be applied"
        return [f"canvas.csv not written: {why} (above)"]
    from .canvas import write_canvas

    return write_canvas(out, book, **canvas)


def _percent(book: Gradebook, unit: str) -> list[float]:
    """The unit's scores as percentages, of the submissions with a grade only."""
    maximum = book.maximum(unit)
    values = [g.scores.get(unit, 0) if not unit.endswith("_written") else g.written.get(unit) for g in book.with_grade]
    return [100 * v / maximum for v in values if v is not None and maximum]


def summary_lines(book: Gradebook) -> list[str]:
    submissions, students = len(book.graded), sum(max(1, len(g.sub.students)) for g in book.graded)
    groups = [g for g in book.graded if len(g.sub.students) > 1]
    lines = [f"{submissions} submissions, {students} students" + (f" ({len(groups)} group submissions)" if groups else "")]
    missing = submissions - len(book.with_grade)
    if missing:
        lines.append(f"partial gradebook: {missing} of {submissions} submissions have no grade (listed below): their "
                     "cells are empty, and the means and summary.png leave them out")
    lines.append(f"{'question':14} {'mean %':>7} {'median %':>9} {'max %':>6}")
    for unit in book.units + book.written_units:
        values = _percent(book, unit)
        if values:
            lines.append(f"{unit:14} {statistics.mean(values):7.1f} {statistics.median(values):9.1f} {max(values):6.1f}")
    problems: dict[str, list[str]] = {}
    for g in book.graded:
        if g.status != Status.OK.value:
            problems.setdefault(g.status, []).append(g.sub.key)
    bad = sum(len(v) for v in problems.values())
    lines.append(f"{submissions - bad} submissions ok, {bad} not ok")
    for status, keys in sorted(problems.items()):
        lines.append(f"  {len(keys)} × {status}: {', '.join(keys[:5])}{' …' if len(keys) > 5 else ''}")
    notes, warnings = adjusting.summary(book.adjustments)
    lines += provenance.summary(book.graded)
    return [plain_text(line) for line in lines + book.notes + notes + [f"warning: {w}" for w in warnings + book.warnings]]


def summary_figure(book: Gradebook):
    """summary.png's figure: the totals' histogram and each question's mean, of submissions with a grade."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    units = [u for u in book.units + book.written_units if _percent(book, u)]
    full = sum(book.maximum(u) for u in book.units) or 1
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    left.hist([100 * sum(g.scores.values()) / full for g in book.with_grade], bins=20, range=(0, 100))
    left.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of submissions: never 0.5 of one
    left.set_xlabel("automatic total, % of the points")
    left.set_ylabel("submissions")
    missing = len(book.graded) - len(book.with_grade)
    left.set_title(f"{book.checks.assignment}: totals ({len(book.with_grade)} submissions"
                   + (f"; {missing} with no grade left out)" if missing else ")"))
    right.bar(units, [statistics.mean(_percent(book, u)) for u in units])
    right.set_ylim(0, 100)
    right.set_ylabel("mean, % of its points")
    right.set_title("mean per question")
    right.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    return fig


def _summary_png(path: Path, book: Gradebook) -> None:
    import matplotlib.pyplot as plt

    fig = summary_figure(book)
    image = io.BytesIO()
    fig.savefig(image, format="png", dpi=100)
    plt.close(fig)
    write_private(path, image.getvalue())
