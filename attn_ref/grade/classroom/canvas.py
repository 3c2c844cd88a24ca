"""A Canvas gradebook import file (canvas.csv) from the class's gradebook and a Canvas roster.

Canvas matches imported rows on its own IDs or SIS IDs, never on names, so they come from the course's own
gradebook export (the roster): a student is matched by SIS User ID (the SID), Canvas ID, or SIS Login ID
(the email or its user part). Students who match no roster row are listed (canvas-unmatched.csv and a
warning), not dropped; roster students without a submission keep an empty cell (Canvas leaves them alone).

A student whose submission has no grade (not graded yet, or the grader failed) keeps an empty cell too, so
that an import never overwrites a real grade with a made-up 0; they are listed in canvas-missing.csv, with
why, never marked inside canvas.csv (a marker there would break Canvas's import).

The column filled is --canvas-assignment, else the roster's column named for the assignment (its title or
name; Canvas writes "Title (id)"), else a new one named for it; the run says which (Gradebook.notes).

Every cell is made formula-safe (spreadsheet.py) except Canvas's ID columns: a ' in front would break the
match, so they are validated instead. A roster row with an ID a spreadsheet would read as a formula is left
out of canvas.csv (Canvas then leaves that student alone) and its student is listed as unmatched, with why.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import GraderError
from ..scoring.checks import Checks
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
    with open(path, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        header = list(reader.fieldnames or [])
        missing = [name for name in ROSTER_FIELDS if name not in header]
        if missing:
            raise RosterError(f"{path}: not a Canvas gradebook export (no column {', '.join(missing)})")
        rows = []
        for row in reader:
            student = (row.get("Student") or "").strip()
            if student.startswith("Points Possible") or student in ("", "Student, Test"):
                continue  # Canvas's own extra rows
            rows.append({k: (row.get(k) or "").strip() for k in ROSTER_FIELDS})
    return Roster(rows, [name for name in header if name and name not in ROSTER_FIELDS])


_CANVAS_ID = re.compile(r"\s*\(\d+\)\s*$")  # the " (55501)" Canvas puts after an assignment's name


def _plain(name: str) -> str:
    return " ".join(name.split()).casefold()


def choose_column(columns: list[str], checks: Checks, given: str | None) -> tuple[str, str]:
    """The column canvas.csv fills, and a line saying which and why (the TA reads it before importing)."""
    if given:
        return given, f"canvas.csv: filling the column {given!r} (--canvas-assignment)"
    names = [name for name in (checks.title, checks.assignment) if name]
    found = [c for c in columns if _plain(_CANVAS_ID.sub("", c)) in {_plain(n) for n in names}]
    new = names[0]
    if len(found) == 1:
        return found[0], (f"canvas.csv: filling the roster's column {found[0]!r}, named for the assignment "
                          "(--canvas-assignment chooses another)")
    if found:  # guessing among them could overwrite another assignment's grades
        return new, (f"canvas.csv: {len(found)} roster columns match the assignment ({', '.join(map(repr, found))}); "
                     f"a new column {new!r} instead: pass --canvas-assignment to fill one of them")
    return new, (f"canvas.csv: no roster column is named {' or '.join(map(repr, names))}: a new column {new!r} "
                 "(Canvas adds it on import; --canvas-assignment fills an existing one)")


def _match(person: dict, roster: list[dict]) -> dict | None:
    sid, email = person.get("sid", "").strip(), person.get("email", "").strip().lower()
    for row in roster:
        if sid and sid in (row["SIS User ID"], row["ID"]):
            return row
    for row in roster:
        login = row["SIS Login ID"].lower()
        if email and login and login in (email, email.split("@")[0]):
            return row
    return None


def _formula_ids(row: dict) -> str:
    """The roster row's ID cells a spreadsheet would read as a formula ("" when none)."""
    return ", ".join(f"{k} {row[k]!r}" for k in ID_FIELDS if needs_escape(row[k]))


def _why_unmatched(person: dict, row: dict | None) -> str:
    if row is not None:
        return f"its roster row's {_formula_ids(row)} starts with {FORMULA_WORDS}; Canvas IDs are never escaped, so that row is left out"
    bad = [f"{k} {person[k]!r}" for k in ("sid", "email") if needs_escape(person[k])]
    return "no roster row has this SID or login" + (f"; {', '.join(bad)} starts with {FORMULA_WORDS}, as no Canvas ID may" if bad else "")


def _names(people: list[dict], key: str) -> str:
    return ", ".join(p[key] for p in people[:5]) + (" …" if len(people) > 5 else "")


def write_canvas(out: Path, book, roster: Path, assignment: str | None = None) -> list[str]:
    """canvas.csv (canvas-unmatched.csv when someone did not match, canvas-missing.csv when someone has
    no grade); returns warnings, and says in book.notes which column it fills."""
    loaded = read_roster(Path(roster))
    roster_rows = loaded.rows
    refused = [row for row in roster_rows if _formula_ids(row)]
    column, chosen = choose_column(loaded.columns, book.checks, assignment)
    book.notes.append(chosen)
    scores: dict[str, float] = {}
    unmatched, missing = [], []
    for g in book.graded:
        for person in g.sub.students or [{"name": g.sub.key, "sid": "", "email": ""}]:
            row = _match(person, roster_rows)
            who = {"name": person["name"] or g.sub.key, "sid": person["sid"], "email": person["email"],
                   "submission": g.sub.path.name}
            if not g.has_grade:  # its cell stays empty: Canvas keeps the grade it has
                missing.append({**who, "roster row": row["Student"] if row else "", "reason": g.status})
            if row is None or row in refused:
                unmatched.append({**who, "total": g.total, "reason": _why_unmatched(person, row)})
            elif g.has_grade:
                scores[row["ID"] or row["SIS User ID"]] = g.total
    points = sum(book.maximum(u) for u in book.units + book.written_units)
    rows = [["Points Possible", "", "", "", "", points]]
    rows += [[row[k] for k in ROSTER_FIELDS] + [scores.get(row["ID"] or row["SIS User ID"])]
             for row in roster_rows if row not in refused]
    write_csv(out / "canvas.csv", [*ROSTER_FIELDS, column], rows)
    warnings = []
    if refused:
        warnings.append(f"canvas.csv: {len(refused)} roster row(s) left out ({_names(refused, 'Student')}): an ID starts with "
                        f"{FORMULA_WORDS}, and escaping it would break Canvas's match")
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
    return warnings + [f"canvas.csv: {len(unmatched)} student(s) match no roster row by SID or login, or only one left out "
                       f"({_names(unmatched, 'name')}): see canvas-unmatched.csv for why"]
