"""A Canvas gradebook import file (canvas.csv) from the class's gradebook and a Canvas roster.

Canvas matches imported rows on its own IDs or SIS IDs, never on names, so they come from the course's own
gradebook export (the roster). A roster row belongs to exactly one student, and a score lands on a row only
when nothing else could claim it:

- a student is matched by SID (= the row's SIS User ID; in a roster without SIS IDs, its Canvas ID) and by
  email (= the row's full SIS Login ID, the case of ASCII letters aside); the user part of an email (bob of
  bob@uni.edu) matches a login only with ``login_domain`` (--canvas-login-domain uni.edu), and only for an
  address of that domain, since bob@elsewhere.example is someone else;
- a student whose SID and email point to different rows matches none: ambiguous;
- a row matched from two submissions gets neither score: both are listed.

Students left out are listed, with why (canvas-unmatched.csv and a warning), never dropped silently;
roster students without a submission keep an empty cell (Canvas leaves them alone).

A student whose submission has no grade (not graded yet, or the grader failed) keeps an empty cell too, so
that an import never overwrites a real grade with a made-up 0; they are listed in canvas-missing.csv, with
why, never marked inside canvas.csv (a marker there would break Canvas's import).

The score is the submission's total with the TAs' adjustments (adjustments.py), in the assignment's one column:
a second column (the automatic total beside it) would be a new assignment to Canvas; grades.csv keeps both.
canvas.csv is not written while adjustments.csv has a row that cannot be applied (gradebook.py).

The column filled is --canvas-assignment (a roster column, or its name without Canvas's " (id)"; one the roster
lacks is a new assignment to Canvas, and the run warns), else the roster's column named for the assignment (its
title or name; Canvas writes "Title (id)"), else a new one named for it; the run says which (Gradebook.notes).

Every cell is made formula-safe (spreadsheet.py) except Canvas's ID columns: a ' in front would break the
match, so they are validated instead. A roster row with an ID a spreadsheet would read as a formula is left
out of canvas.csv (Canvas then leaves that student alone) and its student is listed as unmatched, with why.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..checks_json import Checks
from ..inkernel.errors import GraderError
from ..inkernel.text import plain_text
from .discover import Student
from .spreadsheet import FORMULA_WORDS, needs_escape, write_csv

ROSTER_FIELDS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
ID_FIELDS = ["ID", "SIS User ID", "SIS Login ID"]  # what Canvas matches on: written as they are, so checked


class RosterError(GraderError, ValueError):
    """The roster is not a Canvas gradebook export."""


@dataclass
class Roster:
    rows: list[dict]  # one per student: ROSTER_FIELDS
    columns: list[str]  # its other columns: the course's assignments ("Lab 3.1 (12345)") and Canvas's totals


def read_roster(path: Path) -> Roster:
    """The roster's students and other columns; a file that is not a Canvas export as Canvas writes it (CSV,
    UTF-8, commas) raises RosterError naming the file and what to do, as a spreadsheet's re-save would make it."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return _roster(path, csv.DictReader(f))
    except UnicodeDecodeError as err:
        raise RosterError(f"{path}: not UTF-8 (byte {err.start + 1} is not): a spreadsheet saved it in another encoding; "
                          "use Canvas's export as it came, or save it as 'CSV UTF-8'") from None
    except csv.Error as err:
        raise RosterError(f"{path}: not a CSV file ({str(err)[:200]})") from None


def _roster(path: Path, reader: csv.DictReader) -> Roster:
    header = list(reader.fieldnames or [])
    missing = [name for name in ROSTER_FIELDS if name not in header]
    if missing:
        semicolons = " (it is separated by ';': save it with commas)" if any(";" in name for name in header) else ""
        raise RosterError(f"{path}: not a Canvas gradebook export (no column {', '.join(missing)}){semicolons}")
    rows = []
    for row in reader:
        student = (row.get("Student") or "").strip()
        if _canvas_own(student, row):
            continue
        rows.append({k: (row.get(k) or "").strip() for k in ROSTER_FIELDS})
    return Roster(rows, [name for name in header if name and name not in ROSTER_FIELDS])


def _canvas_own(student: str, row: dict) -> bool:
    """Canvas's own extra rows, by what Canvas writes in them and no student's row has: "Points Possible" with no
    ID, its test student ("Student, Test") with no SIS ID, a row with no name. A student of either name keeps
    their row (they have IDs)."""
    ids = [(row.get(k) or "").strip() for k in ("ID", "SIS User ID", "SIS Login ID")]
    return (not student or (student == "Points Possible" and not ids[0])
            or (student == "Student, Test" and not ids[1] and not ids[2]))


_CANVAS_ID = re.compile(r"\s*\(\d+\)\s*$")  # the " (55501)" Canvas puts after an assignment's name


def _plain(name: str) -> str:
    return " ".join(name.split()).casefold()


def _assignment_columns(columns: list[str]) -> list[str]:
    """The roster's assignments (Canvas writes "Title (id)"), not its totals ("Current Score")."""
    return [c for c in columns if _CANVAS_ID.search(c)]


def choose_column(columns: list[str], checks: Checks, given: str | None) -> tuple[str, str, str | None]:
    """The column canvas.csv fills, a line saying which and why (the TA reads it before importing), and a warning
    where --canvas-assignment names no column of the roster (Canvas would add a new assignment by that name)."""
    if given:
        return _given_column(columns, given)
    names = [name for name in (checks.title, checks.assignment) if name]
    found = [c for c in columns if _plain(_CANVAS_ID.sub("", c)) in {_plain(n) for n in names}]
    new = names[0]
    if len(found) == 1:
        return found[0], (f"canvas.csv: filling the roster's column {found[0]!r}, named for the assignment "
                          "(--canvas-assignment chooses another)"), None
    if found:  # guessing among them could overwrite another assignment's grades
        return new, (f"canvas.csv: {len(found)} roster columns match the assignment ({', '.join(map(repr, found))}); "
                     f"a new column {new!r} instead: pass --canvas-assignment to fill one of them"), None
    return new, (f"canvas.csv: no roster column is named {' or '.join(map(repr, names))}: a new column {new!r} "
                 "(Canvas adds it on import; --canvas-assignment fills an existing one)"), None


def _given_column(columns: list[str], given: str) -> tuple[str, str, str | None]:
    """--canvas-assignment: a column of the roster as given, or the one column it names without Canvas's " (id)"
    ("Lab 3.1" for "Lab 3.1 (12345)"); anything else is a new assignment to Canvas, which the run warns about
    (a typo would otherwise put the class's grades into an assignment of its own)."""
    if given in columns:
        return given, f"canvas.csv: filling the column {given!r} (--canvas-assignment)", None
    if not _CANVAS_ID.search(given):
        found = [c for c in _assignment_columns(columns) if _plain(_CANVAS_ID.sub("", c)) == _plain(given)]
        if len(found) == 1:
            return found[0], (f"canvas.csv: filling the roster's column {found[0]!r}, the one named {given!r} "
                              "(--canvas-assignment)"), None
    existing = _assignment_columns(columns)
    listed = ", ".join(map(repr, existing[:5])) + (" …" if len(existing) > 5 else "") if existing else "none"
    return given, (f"canvas.csv: filling a new column {given!r} (--canvas-assignment)"), (
        f"canvas.csv: --canvas-assignment {given!r} is not a column of the roster, so Canvas's import adds a new "
        f"assignment by that name; to fill an existing one, pass its column as the roster writes it (its assignments: {listed})")


def _same(a: str, b: str) -> bool:
    """Equal, or equal but for the case of ASCII letters: logins differ in case only there (casefold() would make
    ſue of sue, a ligature of fi, the Kelvin sign of K)."""
    return bool(a) and (a == b or (a.isascii() and b.isascii() and a.lower() == b.lower()))


def sid_column(roster: list[dict]) -> str:
    """What a SID is matched on: the SIS User ID, or in a roster without SIS IDs (a course with no SIS), the
    Canvas ID. Never both: a SID that is one student's SIS ID would otherwise name another's Canvas ID."""
    return "SIS User ID" if any(row["SIS User ID"] for row in roster) else "ID"


def _login_key(login: str) -> str:
    """What ``_same`` compares: two logins are the same exactly where their keys are equal."""
    return login.lower() if login.isascii() else login


class RosterIndex:
    """The roster's rows by SID and by login, built once: each student is a lookup, not a pass over the roster
    (a class of thousands against a roster of thousands)."""

    def __init__(self, roster: list[dict]):
        by = sid_column(roster)
        self.by_sid: dict[str, list[int]] = {}
        self.by_login: dict[str, list[int]] = {}
        for i, row in enumerate(roster):
            self.by_sid.setdefault(row[by], []).append(i)
            self.by_login.setdefault(_login_key(row["SIS Login ID"]), []).append(i)


def candidates(person: Student, roster: RosterIndex, login_domain: str | None = None) -> list[int]:
    """The roster rows (their indexes) this student's SID or email names; exactly one is a match."""
    sid, email = person.sid.strip(), person.email.strip()
    user, domain = email.split("@") if email.count("@") == 1 else ("", "")
    found = set(roster.by_sid.get(sid, [])) if sid else set()
    if email:
        found.update(roster.by_login.get(_login_key(email), []))
    if login_domain and _same(domain, login_domain) and user:
        found.update(roster.by_login.get(_login_key(user), []))
    return sorted(found)


UNWRITABLE = (f"starts with {FORMULA_WORDS}, or holds a character the text rule replaces (a control, bidi or "
              "zero-width character)")


def _formula_ids(row: dict) -> str:
    """The roster row's ID cells that cannot be written as they are ("" when none): one a spreadsheet would read as
    a formula, or one holding a character every file's text rule replaces (00123 and a bidi override)."""
    return ", ".join(f"{k} {row[k]!r}" for k in ID_FIELDS if needs_escape(row[k]) or plain_text(row[k]) != row[k])


def _why_unmatched(person: Student, rows: list[dict], refused: bool) -> str:
    if refused:
        return f"its roster row's {_formula_ids(rows[0])} {UNWRITABLE}; Canvas IDs are never changed, so that row is left out"
    if len(rows) > 1:
        return (f"ambiguous: its SID and email name {len(rows)} roster rows ({', '.join(repr(r['Student']) for r in rows[:3])}); "
                "a score goes only to a row that nothing else names")
    bad = [f"{k} {v!r}" for k, v in (("sid", person.sid), ("email", person.email)) if needs_escape(v)]
    return ("no roster row has this SID, Canvas ID or login (the user part of an email matches a login only with "
            "--canvas-login-domain)") + (f"; {', '.join(bad)} starts with {FORMULA_WORDS}, as no Canvas ID may" if bad else "")


def _names(people: list[dict], key: str) -> str:
    return ", ".join(p[key] for p in people[:5]) + (" …" if len(people) > 5 else "")


def write_canvas(out: Path, book, roster: Path, assignment: str | None = None, login_domain: str | None = None) -> list[str]:
    """canvas.csv (canvas-unmatched.csv when someone did not match, canvas-missing.csv when someone has
    no grade); returns warnings, and says in book.notes which column it fills and which roster students have no
    submission."""
    loaded = read_roster(Path(roster))
    roster_rows = loaded.rows
    refused = {i for i, row in enumerate(roster_rows) if _formula_ids(row)}
    column, chosen, wrong_column = choose_column(loaded.columns, book.checks, assignment)
    book.notes.append(chosen)
    claims, unmatched, missing, named_with_others = _match_every_member(book, roster_rows, refused, login_domain)
    scores = _scores_of_claimed_rows(claims, roster_rows, unmatched, named_with_others)
    points = sum(book.maximum(u) for u in book.units + book.written_units)
    rows = [["Points Possible", "", "", "", "", points]]
    rows += [[row[k] for k in ROSTER_FIELDS] + [scores.get(i)] for i, row in enumerate(roster_rows) if i not in refused]
    write_csv(out / "canvas.csv", [*ROSTER_FIELDS, column], rows)
    book.canvas_filled = sum(score is not None for score in scores.values())
    absent = [i for i in range(len(roster_rows)) if i not in claims and i not in refused]
    if absent:
        book.notes.append(_no_submission_note([roster_rows[i] for i in absent],
                                              [roster_rows[i] for i in absent if i in named_with_others], unmatched))
    warnings = [wrong_column] if wrong_column else []
    return warnings + _write_what_was_left_out(out, [roster_rows[i] for i in sorted(refused)], missing, unmatched)


def _no_submission_note(absent: list[dict], named_with_others: list[dict], unmatched: list[dict]) -> str:
    """Which roster students no submission was matched to. Where every submitted student matched a row, they
    have none in this class; where some matched no row or several, a missing match may be theirs, so the note
    does not say they submitted nothing."""
    empty = "their cells are empty, so an import leaves their Canvas grades as they are"
    if not unmatched:
        return f"canvas.csv: {len(absent)} roster student(s) have no submission in this class ({_names(absent, 'Student')}): {empty}"
    named = (f"; {len(named_with_others)} of them ({_names(named_with_others, 'Student')}) are named by a submitted student "
             "who names another roster row too") if named_with_others else ""
    return (f"canvas.csv: {len(absent)} roster student(s) were matched to no submission ({_names(absent, 'Student')}): {empty}; "
            f"{len(unmatched)} submitted student(s) matched no roster row, several, or one shared (canvas-unmatched.csv), "
            f"so some of these may have submitted{named}")


def _match_every_member(book, roster_rows: list[dict], refused: set[int], login_domain: str | None):
    """Each group member's one roster row: (roster row -> the (graded, person, who) that claim it, the
    members that match none, several or a refused row, the members whose submission has no grade, the rows
    named by a member who names several)."""
    claims: dict[int, list[tuple]] = {}
    unmatched, missing, named_with_others = [], [], set()
    index = RosterIndex(roster_rows)
    for g in book.graded:
        for person in g.sub.members:
            found = candidates(person, index, login_domain)
            row = roster_rows[found[0]] if len(found) == 1 else None
            who = {**person.row(), "submission": g.sub.file_name}
            if not g.has_grade:  # its cell stays empty: Canvas keeps the grade it has
                missing.append({**who, "roster row": row["Student"] if row else "", "reason": g.status})
            if len(found) > 1:
                named_with_others.update(found)
            if len(found) != 1 or found[0] in refused:
                unmatched.append({**who, "total": g.adjusted_total,
                                  "reason": _why_unmatched(person, [roster_rows[i] for i in found], bool(found) and found[0] in refused)})
            else:
                claims.setdefault(found[0], []).append((g, person, who))
    return claims, unmatched, missing, named_with_others


def _scores_of_claimed_rows(claims: dict[int, list[tuple]], roster_rows: list[dict], unmatched: list[dict],
                            contested: set[int] = frozenset()) -> dict[int, float | None]:
    """roster row -> the score imported there: only a row that one submission alone claims, and that no other
    student's SID or email names among several (``contested``), gets one (the others are added to ``unmatched``
    with the reason)."""
    scores: dict[int, float | None] = {}
    for i, claimants in claims.items():
        row_name = roster_rows[i]["Student"]
        if i in contested:  # another student's SID or email names it too: whose row it is, is not known
            for g, _, who in claimants:
                unmatched.append({**who, "total": g.adjusted_total, "reason": f"the roster row {row_name!r} is named by "
                                  "another submitted student too (whose SID and email name several rows): no score is "
                                  "imported there"})
            continue
        if len({id(g) for g, _, _ in claimants}) > 1:  # two submissions name one student: neither score is hers for sure
            for g, _, who in claimants:
                unmatched.append({**who, "total": g.adjusted_total, "reason": f"{len(claimants)} submissions match the roster row "
                                  f"{row_name!r}: none of their scores is imported there"})
            continue
        g, first, _ = claimants[0]
        for _, _, who in claimants[1:]:  # two members of one group name one row: the row is the first's, and said so
            unmatched.append({**who, "total": g.adjusted_total, "reason": f"names the roster row {row_name!r}, as does "
                              f"{first.name!r} of the same submission: its score goes there once"})
        if g.has_grade:
            scores[i] = g.adjusted_total  # the TAs' adjustments (adjustments.csv) included
    return scores


def _write_what_was_left_out(out: Path, refused: list[dict], missing: list[dict], unmatched: list[dict]) -> list[str]:
    """canvas-missing.csv and canvas-unmatched.csv (each removed when empty), and a warning for each thing
    left out of canvas.csv."""
    warnings = []
    if refused:
        warnings.append(f"canvas.csv: {len(refused)} roster row(s) left out ({_names(refused, 'Student')}): an ID "
                        f"{UNWRITABLE}, and changing it would break Canvas's match")
    if missing:
        write_csv(out / "canvas-missing.csv", list(missing[0]), missing)
        warnings.append(f"canvas.csv: {len(missing)} student(s) have no grade ({_names(missing, 'name')}): their cells "
                        "are empty, so an import leaves their Canvas grades as they are; see canvas-missing.csv for why")
    else:
        (out / "canvas-missing.csv").unlink(missing_ok=True)
    if not unmatched:
        (out / "canvas-unmatched.csv").unlink(missing_ok=True)
        return warnings
    write_csv(out / "canvas-unmatched.csv", list(unmatched[0]), unmatched)
    return warnings + _unmatched_lines(unmatched)


SHOWN_UNMATCHED = 20  # console lines for the students canvas.csv gives no score; the rest are in canvas-unmatched.csv


def _unmatched_lines(unmatched: list[dict]) -> list[str]:
    """One warning per submitted student canvas.csv gives no score, with that student's own reason."""
    lines = []
    for who in unmatched[:SHOWN_UNMATCHED]:  # canvas-unmatched.csv's rows, made above
        name, sid, email, submission, reason = (who.get(k, "") for k in ("name", "sid", "email", "submission", "reason"))
        ids = ", ".join(v for v in (sid and f"SID {sid}", email) if v) or "no SID or email"
        lines.append(f"canvas.csv: no score for {name or 'a student with no name'} ({ids}; {submission}): {reason}")
    if len(unmatched) > SHOWN_UNMATCHED:
        lines.append(f"canvas.csv: and {len(unmatched) - SHOWN_UNMATCHED} more in canvas-unmatched.csv")
    return lines
