"""adjustments.csv: the TAs' changes to scores (a granted regrade request), kept in the class's output folder
beside grades.csv and applied on every run after grading, so that a regrade (a new zip, --force) never
loses them. The TA writes it (a run makes it with its header alone where it is missing); no run rewrites it.

One row per change, applied from the top down::

    student,question,line,points,score,reason,who,when
    00123,c3,,+1,,regrade request 14: the mask is right,sam,2026-03-02
    bob@uni.edu,q4,,,2,read 0.5 as 05 (a typo the prompt invited),kim,2026-03-03

- student: a SID or an email of the class, as grades.csv shows them (or a SID without the leading zeros a
  spreadsheet drops; one typed with zeros is that SID alone), or, in a class with no export (no SIDs),
  grades.csv's name or submission. A group's members share one submission: a row naming any of them adjusts
  it for all.
- question: one of grades.csv's question columns (c3, q4, q1_written).
- line: optional, one line of it (a probe of a task, an answer of a question: report.html and mistakes.csv
  name them). The change concerns that line (points: at most the line's), and waits on it: a new zip
  without that line leaves the row unapplied, listed. A task's line follows its result: a +points row applies
  only while the line fails (it gives back at most what the line lost), a -points row only while the line
  passes; otherwise the row is held, listed as not applied with why, and canvas.csv is still written.
- points: a change (+1, -0.5), or score: the question's new score (0 to its points); exactly one.
- reason and who: required (report.html shows who changed what and why); when: as typed.

Every row is checked on read (``Problem``). A row that cannot be applied (not a number, both points and
score, no such student, no such question or line in this zip, a score outside 0 to the question's points)
is applied to no one and listed by its row number, with why, on the console and in report.html; the rest of
the gradebook is written, and so is each other row, but canvas.csv is not (an import would publish grades
without a change a TA granted): the run exits 4 until each such row is mended or deleted. Nothing is regraded
on that rerun. A row whose submission has no grade yet waits for one, without holding canvas.csv back (that
student's cell is empty there anyway).
"""

from __future__ import annotations

import csv
import html
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path

from ..checks_json import FunctionUnit, QuestionUnit
from ..inkernel.text import cap
from .spreadsheet import needs_escape, safe_cell, write_csv

FILE = "adjustments.csv"
COLUMNS = ("student", "question", "line", "points", "score", "reason", "who", "when")
REQUIRED = ("student", "question", "reason", "who")
MAX_CELL = 1000  # characters of a cell kept (a reason is a sentence or two)
NEAR = 1e-9  # points compared with this slack: 0.1 + 0.2 is 0.3


class Problem(str, Enum):
    """Why a row is not applied: a value the console, report.html and the exit status read."""

    FILE = "file"  # adjustments.csv cannot be read at all (not UTF-8, a required column missing): no row applies
    ROW = "mistyped"  # the row itself is wrong: a number that is not one, both or neither of points and score, ...
    NO_QUESTION = "no such question or line"  # its question or line is not in this autograder (a typo, or a new zip has none)
    NO_STUDENT = "no such student"  # no student of this class has its SID or email, or several submissions do
    OUT_OF_RANGE = "past the question's points"  # the question's score would leave 0 to its points (its automatic score moved?)
    NO_GRADE = "no grade"  # its submission has no grade yet: applied once it has one
    LINE_MOVED = "its line no longer asks it"  # a +points line now passes (or a -points line fails): held, not lost

    @property
    def holds_back_import(self) -> bool:
        """Whether canvas.csv waits until it is mended: a row that is wrong, never one waiting on a grade or on its
        line (one student fixing a line never stops the class's import)."""
        return self not in (Problem.NO_GRADE, Problem.LINE_MOVED)


@dataclass(frozen=True)
class Row:
    """One row as read: each cell plain text (the text rule), points and score numbers where they are."""

    number: int  # as a spreadsheet numbers it: the header is row 1
    student: str
    question: str
    line: str = ""
    points: float | None = None
    score: float | None = None
    reason: str = ""
    who: str = ""
    when: str = ""
    typed: tuple[str, str] = ("", "")  # the points and score cells as typed (shown where one is not a number)

    @property
    def change(self) -> str:
        """What it asks, as the TA typed it: "points +1", "score 2" (or both, or "?" for neither)."""
        points, score = self.typed
        return " and ".join(filter(None, (points and f"points {points}", score and f"score {score}"))) or "?"

    @property
    def target(self) -> str:
        return self.question + (f" (line {self.line!r})" if self.line else "")

    def says(self) -> str:
        return f"{self.student or '?'}, {self.target or '?'}: {self.change}"


@dataclass(frozen=True)
class Applied:
    """A row applied to one submission: its question's score before this row and after it."""

    row: Row
    submission: str  # the submission's key
    question: str  # the unit, as grades.csv names it
    before: float
    after: float


@dataclass(frozen=True)
class NotApplied:
    row: Row | None  # None: the whole file
    problem: Problem
    why: str
    submission: str = ""  # the submission it names, where it names one

    def message(self) -> str:
        where = f"{FILE} row {self.row.number} ({self.row.says()})" if self.row else FILE
        return f"{where}: {self.why}"


@dataclass
class Adjustments:
    """What a run made of adjustments.csv."""

    applied: list[Applied] = field(default_factory=list)
    not_applied: list[NotApplied] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # ignored columns and the like

    @property
    def holds_back_import(self) -> bool:
        return any(n.problem.holds_back_import for n in self.not_applied)

    def of(self, key: str) -> tuple[list[Applied], list[NotApplied]]:
        """One submission's applied rows and the rows naming it that are not applied (read once the rows are all
        taken: grades.csv asks for each student's)."""
        return self._by_submission.get(key, ([], []))

    @cached_property
    def _by_submission(self) -> dict[str, tuple[list[Applied], list[NotApplied]]]:
        found: dict[str, tuple[list[Applied], list[NotApplied]]] = {}
        for a in self.applied:
            found.setdefault(a.submission, ([], []))[0].append(a)
        for n in self.not_applied:
            if n.submission:
                found.setdefault(n.submission, ([], []))[1].append(n)
        return found


# ---- reading -------------------------------------------------------------------------------------------

def _text(value) -> str:
    """A cell as the TA meant it: plain (the text rule), stripped, and without the ' a spreadsheet (or this
    project's CSVs) put before a formula character."""
    text = cap(value, MAX_CELL).strip() if isinstance(value, str) else ""
    return text[1:] if text.startswith("'") and needs_escape(text[1:]) else text


def _number(text: str, column: str) -> tuple[float | None, str]:
    """A typed number (None when blank), or why it is not one."""
    if not text:
        return None, ""
    try:
        value = float(text)
    except ValueError:
        comma = " (a decimal point, not a comma: 1.5)" if "," in text else ""
        return None, f"{column} {text!r} is not a number{comma}"
    if not math.isfinite(value):
        return None, f"{column} {text!r} is not a finite number"
    return value, ""


def _row(number: int, cells: dict[str, str]) -> tuple[Row, str]:
    """A record as a Row, and why it is wrong ("" when it is not, for what the row alone says)."""
    points, bad_points = _number(cells.get("points", ""), "points")
    score, bad_score = _number(cells.get("score", ""), "score")
    row = Row(number, *(cells.get(c, "") for c in ("student", "question", "line")), points, score,
              *(cells.get(c, "") for c in ("reason", "who", "when")), (cells.get("points", ""), cells.get("score", "")))
    missing = [c for c in REQUIRED if not cells.get(c)]
    if missing:
        return row, f"no {' and no '.join(missing)} (every change says whose, which question, why and who made it)"
    if bad_points or bad_score:
        return row, bad_points or bad_score
    if (points is None) == (score is None):
        return row, ("both points (a change) and score (a new score): give one" if points is not None
                     else "neither points (a change, +1) nor score (the question's new score)")
    if score is not None and row.line:
        return row, "score is the question's new score, not a line's: give points (a change) for a line"
    return row, ""


def _records(path: Path) -> tuple[list[list[str]], str]:
    """The file's records (none where it is missing), or why it cannot be read."""
    if not path.exists():
        return [], ""
    try:
        return list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8-sig"), newline=""))), ""
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        return [], f"cannot be read ({type(err).__name__}: {cap(str(err), 200)}); save it as CSV in UTF-8"


def _header_problem(header: list[str]) -> str:
    """Why the first row is not this file's header ("" when it is)."""
    missing = [c for c in (*REQUIRED, "points", "score") if c not in header]
    if not missing:
        return ""
    semicolons = " (it is separated by ';': save it with commas)" if any(";" in name for name in header) else ""
    return f"no column {', '.join(missing)} in its first row{semicolons} (the columns: {', '.join(COLUMNS)}); no row is applied"


def read_rows(path: Path) -> tuple[list[Row], list[NotApplied], list[str]]:
    """The file's rows (blank ones skipped), the rows wrong in themselves (or the whole file) and notes."""
    records, unreadable = _records(path)
    header = [_text(name).casefold() for name in (records[0] if records else [])]
    if why := unreadable or (records and _header_problem(header)):
        return [], [NotApplied(None, Problem.FILE, why)], []
    unknown = [name for name in header if name and name not in COLUMNS]
    notes = [f"{FILE}: column(s) {', '.join(map(repr, unknown))} are not read (its columns: {', '.join(COLUMNS)})"] if unknown else []
    rows, wrong = [], []
    for index, record in enumerate(records[1:], start=2):
        cells = {name: _text(value) for name, value in zip(header, record) if name in COLUMNS}
        if not any(cells.values()):
            continue  # a blank row, as spreadsheets leave them
        row, why = _row(index, cells)
        if any(_text(value) for value in record[len(header):]):  # csv.reader split a cell the TA meant as one
            why = (f"{len(record)} cells, but the header has {len(header)}: a comma in a cell shifts every cell after "
                   "it (write 1.5, not 1,5; quote text with commas)")
        if why:
            wrong.append(NotApplied(row, Problem.ROW, why))
        else:
            rows.append(row)
    return rows, wrong, notes


def write_template(path: Path) -> None:
    """The file with its header alone, for the TA to fill (where it is missing; never over theirs)."""
    if not path.exists():
        write_csv(path, COLUMNS, [])


# ---- resolving and applying ----------------------------------------------------------------------------

def _sid_key(sid: str) -> str:
    """A SID without its leading zeros, which a spreadsheet drops (00123 is shown 123)."""
    return sid.lstrip("0") or "0"


def _email_key(email: str) -> str:
    """An email as compared: the case of ASCII letters aside (as canvas.py matches logins)."""
    return email.lower() if email.isascii() else email


class _Students:
    """The class's submissions by their students' SIDs and emails, and by their shown names (a class with no
    export), each as grades.csv shows it: a TA's cell compares equal whether their spreadsheet kept its ' or not."""

    def __init__(self, book):
        self.by_sid: dict[str, list] = {}  # as grades.csv shows it
        self.by_sid_unzeroed: dict[str, list] = {}  # without its leading zeros (_sid_key)
        self.by_email: dict[str, list] = {}
        self.by_name: dict[str, list] = {}
        for g in book.graded:
            for person in g.sub.people:
                if sid := safe_cell(person.sid):
                    self.by_sid.setdefault(sid, []).append(g)
                    self.by_sid_unzeroed.setdefault(_sid_key(sid), []).append(g)
                if email := safe_cell(person.email):
                    self.by_email.setdefault(_email_key(email), []).append(g)
            self.by_name.setdefault(safe_cell(g.sub.file_name), []).append(g)
            if not g.sub.people:  # a file of a plain class folder: its row's name (its key, as rows were named before)
                for name in {g.sub.shown_name, g.sub.key}:
                    self.by_name.setdefault(safe_cell(name), []).append(g)
        self.has_ids = bool(self.by_sid or self.by_email)

    def find(self, student: str) -> list:
        """The submissions a typed SID, email or submission names (each once, a group's too)."""
        typed = safe_cell(student)
        # a SID typed without leading zeros may be a spreadsheet's display of one with them (123 for 00123); one typed
        # with them is that SID alone (00789 is never the 789 of another student)
        unzeroed = self.by_sid_unzeroed.get(typed, []) if typed == _sid_key(typed) else []
        found = [*self.by_sid.get(typed, []), *unzeroed, *self.by_email.get(_email_key(typed), []), *self.by_name.get(typed, [])]
        return list({id(g): g for g in found}.values())

    def why_none(self, student: str, found: list) -> str:
        """Why a typed student names no submission, or several, said in the columns this class has."""
        if found:
            return (f"{student!r} names {len(found)} submissions ({', '.join(g.sub.file_name for g in found[:5])}): "
                    "each is a row of grades.csv; which one is meant?")
        if self.has_ids:
            return (f"no student of this class has the SID or email {student!r} (grades.csv's sid and email columns; "
                    "a student who left, or a typo?)")
        return (f"no submission of this class is named {student!r} (grades.csv's name or submission column: this class "
                "has no SIDs or emails; a file renamed or removed, or a typo?)")


def _plain(name: str) -> str:
    return " ".join(name.split()).casefold()


def _lines(unit) -> dict[str, tuple[str, float]]:
    """A unit's lines: {plain name: (name, points)} (a task's probes, a question's answers)."""
    items = unit.probes if isinstance(unit, FunctionUnit) else unit.answers if isinstance(unit, QuestionUnit) else ()
    return {_plain(item.name): (item.name, float(item.points)) for item in items}


@dataclass(frozen=True)
class _Target:
    question: str  # as grades.csv names it
    line: str  # as the checks name it ("" for the whole question)
    line_points: float | None


def _target(row: Row, book) -> tuple[_Target | None, str]:
    """The question (and line) a row names in this autograder, or why there is none."""
    questions = {q.casefold(): q for q in book.units + book.written_units}
    question = questions.get(row.question.casefold())
    if question is None:
        return None, (f"no question {row.question!r} in this autograder (its questions: {', '.join(questions.values())}); "
                      "a new zip without it, or a typo?")
    if not row.line:
        return _Target(question, "", None), ""
    if question.endswith("_written"):
        return None, f"{question} is a written part: it has no lines (leave line empty)"
    lines = _lines(book.checks.unit(question))
    found = lines.get(_plain(row.line))
    if found is None:
        shown = "; ".join(repr(name) for name, _ in list(lines.values())[:12])
        return None, (f"{question} has no line {row.line!r} in this autograder (a new zip renamed or removed it, or a typo?); "
                      f"its lines: {shown}")
    return _Target(question, found[0], found[1]), ""


def _out_of_bounds(row: Row, target: _Target, top: float) -> str:
    """Why the change is more than its question (or line) can hold, whatever the student's score ("": it is not)."""
    if row.score is not None and not -NEAR <= row.score <= top + NEAR:
        return f"score {row.score:g} is not from 0 to {target.question}'s {top:g} points"
    limit, what = (target.line_points, "its line's") if target.line_points is not None else (top, f"{target.question}'s")
    if row.points is not None and abs(row.points) > limit + NEAR:
        return f"points {row.points:+g} is more than {what} {limit:g} points"
    return ""


def _maximum(g, question: str, book) -> float:
    """The question's points for this submission: its results' (a GPU runner's lines count) or the checks'."""
    recorded = [t.max_score for t in g.results.tests if t.unit == question]
    return max(recorded[0], book.maximum(question)) if recorded else book.maximum(question)


def _base(g, question: str) -> float:
    """The question's score before any row: the automatic score, or the TA's written score (blank: 0)."""
    if question.endswith("_written"):
        return g.written.get(question) or 0.0
    return g.scores.get(question, 0.0)


class _Ledger:
    """The rows applied so far: each submission's current score per question, and what each row did."""

    def __init__(self, book):
        self.book, self.result, self.students = book, Adjustments(), _Students(book)
        self.current: dict[tuple[str, str], float] = {}
        self.seen: dict[tuple, int] = {}  # (submission, question, line, change) -> the row that made it first

    def refuse(self, row: Row, problem: Problem, why: str, submission: str = "") -> None:
        self.result.not_applied.append(NotApplied(row, problem, why, submission))

    def take(self, row: Row) -> None:
        target, no_target = _target(row, self.book)
        found = self.students.find(row.student)
        key = found[0].sub.key if len(found) == 1 else ""  # its submission, where it names one: grades.csv shows the row
        no_student = "" if key else self.students.why_none(row.student, found)
        if target is None:
            return self.refuse(row, Problem.NO_QUESTION, "; ".join(filter(None, (no_target, no_student))), key)
        if no_student:
            return self.refuse(row, Problem.NO_STUDENT, no_student)
        if why := _out_of_bounds(row, target, self.book.maximum(target.question)):
            return self.refuse(row, Problem.ROW, why, key)
        self.apply(row, target, found[0])

    def apply(self, row: Row, target: _Target, g) -> None:
        key = g.sub.key
        repeat = (key, target.question, target.line, row.points, row.score)
        if repeat in self.seen:
            return self.refuse(row, Problem.ROW, f"repeats row {self.seen[repeat]} for the same submission (a group's "
                               "members share it: one row adjusts it for all); delete one", key)
        self.seen[repeat] = row.number
        if not g.has_grade:
            return self.refuse(row, Problem.NO_GRADE, f"its submission has no grade yet ({g.status}): applied once it has one", key)
        if why := _line_moved(row, target, g):
            return self.refuse(row, Problem.LINE_MOVED, why, key)
        before = self.current.get((key, target.question), _base(g, target.question))
        after = round(row.score if row.score is not None else before + row.points, 6)
        top = _maximum(g, target.question, self.book)
        if not -NEAR <= after <= top + NEAR:
            return self.refuse(row, Problem.OUT_OF_RANGE, f"{target.question} would be {after:g} of {top:g} (it is "
                               f"{before:g} now): a regrade may give these points already; change or delete the row", key)
        self.current[(key, target.question)] = after
        self.result.applied.append(Applied(row, key, target.question, before, after))


def _line_moved(row: Row, target: _Target, g) -> str:
    """Why a task line's row no longer applies ("": it does, or its line's result is not recorded), from the
    submission's own line: +points while it fails, -points while it passes."""
    if not target.line or row.points is None:
        return ""
    passed = next((p.passed for p in g.results.probes if (p.task, p.probe) == (target.question, target.line)
                   and p.passed is not None), None)
    if passed is None:
        return ""
    if row.points > 0 and passed:
        return (f"the line {target.line!r} now passes, so these points are its own (a resubmission fixed it); "
                "the row is held while it passes")
    if row.points < 0 and not passed:
        return f"the line {target.line!r} now fails, so it earns nothing to take away; the row is held while it fails"
    return ""


def apply_adjustments(path: Path, book) -> Adjustments:
    """Read adjustments.csv and apply its rows, from the top down, to the gradebook's submissions (each
    Graded's ``adjustments``); what could not be applied is listed in the result, with why."""
    rows, wrong, notes = read_rows(path)
    ledger = _Ledger(book)
    ledger.result.not_applied += wrong
    ledger.result.notes += notes
    for row in rows:
        ledger.take(row)
    ledger.result.not_applied.sort(key=lambda n: n.row.number if n.row else 0)
    for g in book.graded:
        g.adjustments = ledger.result.of(g.sub.key)[0]
    return ledger.result


# ---- what the gradebook shows --------------------------------------------------------------------------

def cell(found: Adjustments | None, key: str) -> str:
    """grades.csv's adjustments cell of a submission: each change and each row naming it left unapplied."""
    if found is None:
        return ""
    applied, waiting = found.of(key)
    parts = [f"{a.question} {a.before:g} → {a.after:g} (row {a.row.number}, {a.row.who})" for a in applied]
    parts += [f"row {n.row.number} not applied: {n.problem.value}" for n in waiting if n.row]
    return "; ".join(parts)


def summary(found: Adjustments | None) -> tuple[list[str], list[str]]:
    """(notes, warnings) for the printed summary."""
    if found is None or not (found.applied or found.not_applied or found.notes):
        return [], []
    subs = len({a.submission for a in found.applied})
    notes = [f"{FILE}: {len(found.applied)} change(s) applied to {subs} submission(s)", *found.notes]
    warnings = [f"{n.message()}; not applied" for n in found.not_applied]
    if found.holds_back_import:
        warnings.append(f"{FILE}: {sum(n.problem.holds_back_import for n in found.not_applied)} row(s) cannot be applied: "
                        "mend or delete each and run again (nothing is regraded); until then the run exits 4 and writes no canvas.csv")
    return notes, warnings


def _table(header: Iterable[str], rows: list[list[str]]) -> str:
    return ("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows) + "</table>")


def _applied_table(found: Adjustments, who: dict[str, str]) -> str:
    e = html.escape
    return _table(["row", "students", "question", "line", "automatic → adjusted", "change", "reason", "who", "when"],
                  [[str(a.row.number), e(who.get(a.submission, a.submission)), e(a.question), e(a.row.line),
                    f"{a.before:g} → <b>{a.after:g}</b>", e(a.row.change), e(a.row.reason), e(a.row.who), e(a.row.when)]
                   for a in found.applied])


def _not_applied_table(found: Adjustments) -> str:
    e = html.escape
    rows = []
    for n in found.not_applied:
        row = n.row or Row(0, "", "")  # the whole file: no row to show
        rows.append([str(row.number or ""), e(row.says()) if n.row else "", e(n.why), e(row.reason), e(row.who)])
    held = " canvas.csv is not written until each is mended or deleted." if found.holds_back_import else ""
    return (f"<h3>Not applied</h3><p class='note'>Rows applied to no one, with why.{held}</p>"
            + _table(["row", "what it says", "why not", "reason", "who"], rows))


def section(book) -> str:
    """report.html's section: each change (who changed what and why) and each row not applied, with why."""
    found = book.adjustments
    if found is None or not (found.applied or found.not_applied):
        return ""
    who = {g.sub.key: ", ".join(p.name for p in g.sub.people) or g.sub.file_name for g in book.graded}
    return (f'<section id="adjustments"><h2>Adjustments by TAs ({len(found.applied)} applied, '
            f"{len(found.not_applied)} not)</h2><p class='note'>From {FILE}, applied after grading on every run: "
            "grades.csv keeps the automatic total and the adjusted one; canvas.csv holds the adjusted one.</p>"
            + (_applied_table(found, who) if found.applied else "")
            + (_not_applied_table(found) if found.not_applied else "") + "</section>")
